"""The schema and its versions: schema.sql (the one source of the schema,
beside the package), the version it writes, the migrations that move an
older database forward step by step, and running its SQL in a connection's
dialect. Database.initialize (db.py) applies it inside the engine's install
lock."""

import sqlite3
from collections.abc import Callable
from pathlib import Path

from . import audit
from .dialect import Connection


_PACKAGE = Path(__file__).resolve().parent.parent
# Installed wheels carry the schema inside the package; a checkout has it at the top.
SCHEMA_PATHS = (_PACKAGE / "schema.sql", _PACKAGE.parent / "schema.sql")

# Version written by schema.sql, which always describes the newest schema.
# A schema change after a release bumps this number, edits schema.sql (for new
# installations) and adds MIGRATIONS[new number]: SQL text (as schema.sql
# writes it; PostgreSQL runs its translation), or a function taking the
# connection, that moves an existing database's data forward.
SCHEMA_VERSION = 34


class SchemaError(Exception):
    """The database cannot be used by this version of bugsvc."""


def schema_sql() -> str:
    """Return the text of schema.sql."""
    for path in SCHEMA_PATHS:
        if path.exists():
            return path.read_text(encoding="utf-8")
    raise FileNotFoundError("schema.sql not found next to the bugsvc package")


def schema_section(name: str) -> str:
    """The statements of schema.sql between '-- BEGIN name' and '-- END name'
    (a migration that adds a part of the schema runs the very same text)."""
    text = schema_sql()
    start = text.index(f"-- BEGIN {name}\n")
    return text[start:text.index(f"-- END {name}\n", start)]


def _login_throttle(conn: Connection) -> None:
    """Version 3: failed sign-ins are counted per subject (bugsvc/auth.py)
    instead of logged per address. The failures logged so far are carried
    over, those of an account to its login name and the others to their
    address, before the old log is dropped."""
    dialect = conn.dialect
    if not dialect.table_exists(conn, "login_throttle"):   # a step run twice leaves it
        run_script(conn, schema_section("login throttle"))
    if not dialect.table_exists(conn, "login_failures"):
        return
    conn.execute("INSERT INTO login_throttle (subject, failures, last_failure)"
                 " SELECT 'login:' || lower(u.login), COUNT(*), MAX(f.failed_at)"
                 " FROM login_failures f JOIN users u ON u.id = f.user_id GROUP BY lower(u.login)")
    conn.execute("INSERT INTO login_throttle (subject, failures, last_failure)"
                 " SELECT 'address:' || f.ip_address, COUNT(*), MAX(f.failed_at)"
                 " FROM login_failures f LEFT JOIN users u ON u.id = f.user_id WHERE u.id IS NULL"
                 " GROUP BY f.ip_address")
    conn.execute("DROP TABLE login_failures")


def _ordered_lists(conn: Connection) -> None:
    """Version 6: aliases and custom field values keep their order in an id
    column of their own (they were read in SQLite's hidden row order, which
    no other engine has). The rows are copied in that order, so every list
    reads as before."""
    dialect = conn.dialect
    for table, columns in (("bug_aliases", "alias, bug_id"),
                           ("bug_custom_values", "bug_id, field_id, value")):
        if dialect.column_exists(conn, table, "id"):
            continue
        conn.execute(f"ALTER TABLE {table} RENAME TO {table}_before_ids")
        # The old table's indexes keep their names: drop them before the
        # new table's are made.
        for index in dialect.index_names(conn, f"{table}_before_ids"):
            conn.execute(f"DROP INDEX {index}")
        run_script(conn, schema_section(table))
        conn.execute(f"INSERT INTO {table} ({columns}) SELECT {columns}"
                     f" FROM {table}_before_ids ORDER BY {dialect.insertion_order}")
        conn.execute(f"DROP TABLE {table}_before_ids")


def _bug_text_index(conn: Connection) -> None:
    """Version 6: the trigram index of summaries and whiteboards that
    substring searches find their candidates with, built over the bugs
    already stored. A step run twice leaves the index as it is."""
    dialect = conn.dialect
    if dialect.has_text_index(conn):
        return
    run_script(conn, schema_section("bug text index"))
    dialect.fill_text_index(conn)


def _comment_text_index(conn: Connection) -> None:
    """Version 11: the trigram index of comments' text that full-text
    searches (quicksearch's words, `content matches`) find their candidate
    bugs with, built over the comments already stored. A step run twice
    leaves the index as it is."""
    dialect = conn.dialect
    if dialect.has_comment_text_index(conn):
        return
    run_script(conn, schema_section("comment text index"))
    dialect.fill_comment_text_index(conn)


def _trailing_comment_text_index(conn: Connection) -> None:
    """Version 26: where the engine lets the comment text index trail the
    comments (SQLite: new comments are indexed in batches by the delivery
    worker, schema.sql), its triggers index a comment at once only below
    the index's highest id. The comments stored are all indexed already. A
    step run twice leaves the triggers as they are."""
    conn.dialect.trail_comment_text_index(conn)


def _comment_text_index_merging(conn: Connection) -> None:
    """Versions 30 and 33: the comment text index merges its segments less
    often, and bit by bit before it would merge a whole level at once
    (schema.sql's comment text index merging: SQLite's FTS5 automerge and
    crisismerge). Nothing where the engine has no such setting; a step run
    twice sets the same values."""
    if conn.dialect.has_comment_text_index(conn):
        run_script(conn, schema_section("comment text index merging"))


def _bug_revisions(conn: Connection) -> None:
    """Version 31: each bug's revision, moved by every change to what its
    object shows, and the catalog generation moved by the names of keywords
    and flag types too (schema.sql's bug revisions; bugs/object_cache.py).
    Bugs stored before are at revision 0, as a bug with no row is. A step
    run twice leaves the schema as it is."""
    if not conn.dialect.table_exists(conn, "bug_revisions"):
        run_script(conn, schema_section("bug revisions"))
        run_script(conn, schema_section("catalog generation of bug object names"))


def _new_tables(section: str, table: str) -> Callable[[Connection], None]:
    """A step that makes schema.sql's `section` unless its table `table`
    exists already (a step run twice leaves the tables as they are)."""
    def step(conn: Connection) -> None:
        if not conn.dialect.table_exists(conn, table):
            run_script(conn, schema_section(section))
    return step


def _markdown_comments(conn: Connection) -> None:
    """Version 18: comments may be Markdown and may be edited (the earlier
    texts kept), and each account's comment form remembers its last choice
    of Markdown. Stored comments stay plain text. A step run twice leaves
    the schema as it is."""
    dialect = conn.dialect
    for table, column, sql in (
            ("comments", "is_markdown", "is_markdown INTEGER NOT NULL DEFAULT 0"),
            ("comments", "edit_count", "edit_count INTEGER NOT NULL DEFAULT 0"),
            ("users", "comment_markdown", "comment_markdown INTEGER NOT NULL DEFAULT 1")):
        if not dialect.column_exists(conn, table, column):
            conn.execute(f"ALTER TABLE {table} ADD COLUMN {sql}")
    if not dialect.table_exists(conn, "comment_revisions"):
        run_script(conn, schema_section("comment revisions"))


def _worked_hours_index(conn: Connection) -> None:
    """Version 28: the comments with hours worked indexed by bug and number,
    so a bug's sum of them (actual_time, bugs/view.py) reads those alone.
    A step run twice leaves the index as it is."""
    conn.execute("CREATE INDEX IF NOT EXISTS comments_work_time_idx ON comments"
                 " (bug_id, count, work_time) WHERE work_time <> 0")


def _sudo_sessions(conn: Connection) -> None:
    """Version 19: a page session may act as another account (relogin.cgi's
    sudo, bugsvc/accounts/sudo.py): whom it acts as and since when, on its
    login token; and the groups that decide who may (bz_sudoers) and who
    may not be acted as (bz_sudo_protect), for a database that lacks them.
    A step run twice leaves the columns and groups as they are."""
    dialect = conn.dialect
    if not dialect.column_exists(conn, "login_tokens", "sudo_target_id"):
        conn.execute("ALTER TABLE login_tokens ADD COLUMN sudo_target_id INTEGER"
                     " REFERENCES users (id)")
    if not dialect.column_exists(conn, "login_tokens", "sudo_started"):
        conn.execute("ALTER TABLE login_tokens ADD COLUMN sudo_started TEXT")
    for name, description in (("bz_sudoers", "Can perform actions as other users"),
                              ("bz_sudo_protect", "Can not be impersonated by other users")):
        if conn.execute("SELECT 1 FROM groups WHERE name = ?", (name,)).fetchone() is None:
            conn.execute("INSERT INTO groups (name, description, is_bug_group, user_regexp,"
                         " is_active) VALUES (?, ?, 0, '', 1)", (name, description))


def _product_privileges(conn: Connection) -> None:
    """Version 21: a product's group controls may give the group's members
    editcomponents, editbugs or canconfirm on that product alone. Existing
    controls give none. A step run twice leaves the columns as they are."""
    for column in ("editcomponents", "editbugs", "canconfirm"):
        if not conn.dialect.column_exists(conn, "group_controls", column):
            conn.execute(f"ALTER TABLE group_controls ADD COLUMN {column}"
                         " INTEGER NOT NULL DEFAULT 0")


def _admin_sees_every_group(conn: Connection) -> None:
    """Version 25: the admin group has a visibility grant on every other
    group, as the reference gives it on each group it creates (groups made
    before version 22 could not hold one, later ones were made without it).
    A step run twice adds nothing."""
    admin = conn.execute("SELECT id FROM groups WHERE name = 'admin'").fetchone()
    if admin is None:
        return
    conn.execute("INSERT INTO group_grants (member_id, grantor_id, grant_type)"
                 " SELECT ?, g.id, 2 FROM groups g WHERE g.id <> ? AND NOT EXISTS"
                 " (SELECT 1 FROM group_grants h WHERE h.member_id = ? AND h.grantor_id = g.id"
                 " AND h.grant_type = 2)", (admin[0], admin[0], admin[0]))


# The reference's system groups but admin, and those of them whose members
# are members of another (its inherited_by), as version 29 links them.
_SYSTEM_GROUPS = ("tweakparams", "editusers", "creategroups", "editclassifications",
                  "editcomponents", "editkeywords", "editbugs", "canconfirm",
                  "bz_canusewhineatothers", "bz_canusewhines", "bz_sudoers", "bz_sudo_protect",
                  "bz_quip_moderators")
_INHERITED_BY = (("editbugs", "bz_canusewhines"), ("bz_canusewhineatothers", "bz_canusewhines"),
                 ("bz_sudoers", "bz_sudo_protect"))


def _admin_in_system_groups(conn: Connection) -> None:
    """Version 29: the admin group is a member of every system group, may
    bless it and sees its members, and editbugs and bz_canusewhineatothers
    are members of bz_canusewhines, bz_sudoers of bz_sudo_protect, as the
    reference's installation makes them (earlier installations gave the
    first administrator a direct membership and bless row in each system
    group instead). Then each account gets the memberships these give it
    (derived, user_groups grant_type 1, as accounts/membership.py's
    refresh_derived: only added, since grants were only added). Every row
    kept, the first administrator's direct ones among them: they cannot be
    told from ones given on purpose. A group missing is skipped; a step
    run twice adds nothing."""
    ids = {name: group_id for group_id, name in conn.execute("SELECT id, name FROM groups")
           if name == "admin" or name in _SYSTEM_GROUPS}
    admin_links = [(ids["admin"], ids[name]) for name in _SYSTEM_GROUPS
                   if "admin" in ids and name in ids]
    links = admin_links + [(ids[member], ids[grantor]) for member, grantor in _INHERITED_BY
                           if member in ids and grantor in ids]
    for member_id, grantor_id in links:
        if conn.execute("SELECT 1 FROM group_group_map WHERE member_id = ? AND grantor_id = ?",
                        (member_id, grantor_id)).fetchone() is None:
            conn.execute("INSERT INTO group_group_map (member_id, grantor_id) VALUES (?, ?)",
                         (member_id, grantor_id))
    for member_id, grantor_id in admin_links:
        for grant_type in (1, 2):          # bless and visibility
            if conn.execute("SELECT 1 FROM group_grants WHERE member_id = ? AND grantor_id = ?"
                            " AND grant_type = ?",
                            (member_id, grantor_id, grant_type)).fetchone() is None:
                conn.execute("INSERT INTO group_grants (member_id, grantor_id, grant_type)"
                             " VALUES (?, ?, ?)", (member_id, grantor_id, grant_type))
    while conn.execute(
            "INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
            " SELECT DISTINCT ug.user_id, m.grantor_id, 0, 1 FROM user_groups ug"
            " JOIN group_group_map m ON m.member_id = ug.group_id WHERE ug.is_bless = 0"
            " AND NOT EXISTS (SELECT 1 FROM user_groups x WHERE x.user_id = ug.user_id"
            " AND x.group_id = m.grantor_id AND x.is_bless = 0)").rowcount:
        pass


def _product_status_index_in_id_order(conn: Connection) -> None:
    """Version 32: PostgreSQL's index of bugs by product and status ends
    with the bug id (schema.sql's bug product status index), so a search
    of one product and status stops at its limit instead of sorting every
    match. SQLite's index has the rowid at its end already: nothing there.
    A step run twice makes the same index again."""
    if conn.dialect.name == "sqlite":
        return
    conn.execute("DROP INDEX IF EXISTS bugs_product_status_idx")
    run_script(conn, schema_section("bug product status index"))


MIGRATIONS: dict[int, str | Callable[[Connection], None]] = {
    # 2: the catalog generation counter and its triggers (bugsvc/cache.py).
    2: lambda conn: run_script(conn, schema_section("catalog generation")),
    3: _login_throttle,
    # 4: where an import from a Bugzilla stands (bugsvc/importer/state.py).
    4: _new_tables("import state", "import_state"),
    # 5: mail preferences, user watching, the outbox of notifications,
    # webhooks and the one-time tokens mailed to accounts.
    5: _new_tables("notifications", "outbox_events"),
    6: _ordered_lists,
    7: _bug_text_index,
    # 8: calls counted per subject for rate limits and the throttling of
    # account requests (bugsvc/api/limits.py).
    8: _new_tables("request counts", "request_counts"),
    # 9: the chart series (bugsvc/bugs/series.py).
    9: _new_tables("series", "series"),
    # 10: the audit log keeps each object's name (bugsvc/store/audit.py).
    10: audit.name_old_entries,
    11: _comment_text_index,
    # 12: code forge repositories and what their events did to bugs (bugsvc/forge/).
    12: _new_tables("forges", "forge_repositories"),
    # 13: the messages `bugsvc mail-in` took (bugsvc/cli/mail_in.py).
    13: _new_tables("mail in", "mail_in_messages"),
    # 14: second factors (TOTP), their recovery codes and the sign-ins that
    # wait for one (bugsvc/accounts/second_factor.py).
    14: _new_tables("second factor", "second_factors"),
    # 15: scheduled searches mailed (editwhines.cgi, bugsvc/bugs/whine.py).
    15: _new_tables("whines", "whine_events"),
    # 16: the accounts that sign in through a directory or an OpenID provider
    # (accounts/external.py).
    16: _new_tables("external logins", "external_logins"),
    # 17: each account's choices of how the pages look (bugsvc/accounts/account.py).
    17: _new_tables("user settings", "user_settings"),
    # 18: Markdown comments, their earlier texts, and each account's choice.
    18: _markdown_comments,
    # 19: a page session acting as another account (relogin.cgi's sudo).
    19: _sudo_sessions,
    # 20: groups whose members are members of another group (editgroups.cgi's
    # inheritance, bugsvc/accounts/membership.py).
    20: _new_tables("group inheritance", "group_group_map"),
    # 21: per-product editcomponents, editbugs and canconfirm in group controls.
    21: _product_privileges,
    # 22: groups whose members may bless another group or see its members
    # (editgroups.cgi's bless and visibility grants).
    22: _new_tables("group grants", "group_grants"),
    # 23: the counter of changes to who API keys sign in as (accounts/auth.py).
    23: _new_tables("credential generation", "credential_generation"),
    # 24: where each account's last write left the primary, for reads from
    # replicas (bugsvc/store/postgres/replica.py).
    24: _new_tables("replica waits", "replica_waits"),
    # 25: the admin group sees the members of every other group while
    # usevisibilitygroups is on (bugsvc/accounts/visibility.py).
    25: _admin_sees_every_group,
    # 26: SQLite's comment text index trails the comments (filled by the
    # delivery worker in batches).
    26: _trailing_comment_text_index,
    # 27: the counter of changes to what bug searches answer (bugs/answer_cache.py).
    27: _new_tables("bug generation", "bug_generation"),
    28: _worked_hours_index,
    # 29: the admin group a member (and blesser) of every system group, and
    # the system groups' other inheritance, as the reference installs them.
    29: _admin_in_system_groups,
    # 30: SQLite's comment text index merges 16 segments at a time, not 4 ...
    30: _comment_text_index_merging,
    31: _bug_revisions,
    32: _product_status_index_in_id_order,
    # 33: ... and merges a whole level at once only at 64 segments (FTS5's
    # crisismerge), after merging bit by bit from 16.
    33: _comment_text_index_merging,
    # 34: PostgreSQL's bug generation counts the transactions that moved it
    # (schema.sql's bug writes; nothing on SQLite).
    34: _new_tables("bug writes", "bug_writes"),
}


def bring_up_to_date(conn: Connection, label: str) -> bool:
    """Install or migrate the schema on `conn`, inside the caller's
    transaction (which holds the engine's lock against other processes doing
    the same). Returns True when the database was empty. `label` names the
    database in messages. Errors: SchemaError for a database holding other
    tables, a newer schema than this code, or a missing migration step."""
    dialect = conn.dialect
    current = dialect.schema_version(conn)
    if current == 0:
        if dialect.has_tables(conn):
            raise SchemaError(f"{label} holds tables but no bugsvc schema version; it is "
                              "not a bugsvc database. Choose another one with --db.")
        dialect.install_schema(conn, schema_sql())
        dialect.set_schema_version(conn, SCHEMA_VERSION)
        return True
    if current > SCHEMA_VERSION:
        raise SchemaError(f"{label} has schema version {current}, newer than this bugsvc "
                          f"understands ({SCHEMA_VERSION}). Upgrade bugsvc to use it; "
                          "the database was not changed.")
    for version in range(current + 1, SCHEMA_VERSION + 1):
        step = MIGRATIONS.get(version)
        if step is None:
            raise SchemaError(f"No migration to schema version {version}; the database was not "
                              "changed.")
        if callable(step):
            step(conn)
        else:
            run_script(conn, step)
        dialect.set_schema_version(conn, version)
    return False


def split_script(script: str) -> list[str]:
    """The SQL statements of `script` (written as schema.sql is), each
    complete (sqlite3.complete_statement)."""
    statements: list[str] = []
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            statements.append(buffer.strip())
            buffer = ""
    if buffer.strip():
        statements.append(buffer.strip())
    return statements


def run_script(conn: Connection, script: str) -> None:
    """Execute every statement of `script` (written as schema.sql is) inside
    the caller's transaction, in the connection's dialect (sqlite3's
    executescript would commit first)."""
    for statement in conn.dialect.script_statements(script):
        conn.execute(statement)
