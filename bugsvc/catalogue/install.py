"""The reference's default installation data, written
once into an empty database, and the first administrator.

The catalogue's, not the store's: the store creates the schema and knows
nothing of what goes in it. Whoever prepares a database (serving's start,
the importer) calls this after Database.initialize."""

from .. import dates
from ..accounts.membership import GRANT_DIRECT, grant_admin, refresh_for_user
from ..store import server_secrets
from . import bug_fields, settings


# The statuses (open or closed), the other selects' values and the status
# workflow of a new installation; its fields are bug_fields.STANDARD.
STATUSES = [("UNCONFIRMED", 1), ("CONFIRMED", 1), ("IN_PROGRESS", 1), ("RESOLVED", 0),
            ("VERIFIED", 0)]
SELECT_VALUES = {
    "resolution": ["", "FIXED", "INVALID", "WONTFIX", "DUPLICATE", "WORKSFORME"],
    "priority": ["Highest", "High", "Normal", "Low", "Lowest", "---"],
    "bug_severity": ["blocker", "critical", "major", "normal", "minor", "trivial", "enhancement"],
    "rep_platform": ["All", "PC", "Macintosh", "Other"],
    "op_sys": ["All", "Windows", "Mac OS", "Linux", "Other"],
}
# (from, to) of the default workflow; None is a new bug.
WORKFLOW = [
    (None, "UNCONFIRMED"), (None, "CONFIRMED"), (None, "IN_PROGRESS"),
    ("UNCONFIRMED", "CONFIRMED"), ("UNCONFIRMED", "IN_PROGRESS"), ("UNCONFIRMED", "RESOLVED"),
    ("CONFIRMED", "IN_PROGRESS"), ("CONFIRMED", "RESOLVED"),
    ("IN_PROGRESS", "CONFIRMED"), ("IN_PROGRESS", "RESOLVED"),
    ("RESOLVED", "UNCONFIRMED"), ("RESOLVED", "CONFIRMED"), ("RESOLVED", "VERIFIED"),
    ("VERIFIED", "UNCONFIRMED"), ("VERIFIED", "CONFIRMED"),
]
SYSTEM_GROUPS = [
    ("admin", "Administrators", ""),
    ("tweakparams", "Can change Parameters", ""),
    ("editusers", "Can edit or disable users", ""),
    ("creategroups", "Can create and destroy groups", ""),
    ("editclassifications", "Can create, destroy, and edit classifications", ""),
    ("editcomponents", "Can create, destroy, and edit components", ""),
    ("editkeywords", "Can create, destroy, and edit keywords", ""),
    ("editbugs", "Can edit all bug fields", ".*"),
    ("canconfirm", "Can confirm a bug or mark it a duplicate", ""),
    ("bz_canusewhineatothers", "Can configure whine reports for other users", ""),
    ("bz_canusewhines", "User can configure whine reports for self", ""),
    ("bz_sudoers", "Can perform actions as other users", ""),
    ("bz_sudo_protect", "Can not be impersonated by other users", ""),
    ("bz_quip_moderators", "Can moderate quips", ""),
]
# The system groups whose members are, besides admin, the members of other
# system groups (the reference's inherited_by): {group: its member groups}.
INHERITED_BY = {
    "bz_canusewhines": ("editbugs", "bz_canusewhineatothers"),
    "bz_sudo_protect": ("bz_sudoers",),
}


def install_defaults(conn):
    """Write fields, their values, the workflow, system groups, parameters,
    the Unclassified classification. As in the reference, the admin group
    is a member of every other system group, may bless it and sees its
    members (grant_admin), and the groups of INHERITED_BY are members of
    theirs. Runs inside the caller's transaction."""
    rows = sorted((field for field in bug_fields.STANDARD if field.description),
                  key=lambda field: field.sort_key)
    for field in rows:
        conn.execute("INSERT INTO fields"
                     " (name, display_name, type, is_custom, is_mandatory, sort_key)"
                     " VALUES (?, ?, ?, 0, ?, ?)", (field.name, field.description, field.type,
                                                    int(field.mandatory), field.sort_key))
    field_id = {name: fid for fid, name in conn.execute("SELECT id, name FROM fields")}
    status_id = {}
    for position, (status, is_open) in enumerate(STATUSES, start=1):
        cur = conn.execute("INSERT INTO field_values (field_id, value, sort_key, is_open)"
                           " VALUES (?, ?, ?, ?) RETURNING id",
                           (field_id["bug_status"], status, position * 100, is_open))
        status_id[status] = cur.fetchone()[0]
    for field_name, values in SELECT_VALUES.items():
        for position, value in enumerate(values, start=1):
            conn.execute("INSERT INTO field_values (field_id, value, sort_key) VALUES (?, ?, ?)",
                         (field_id[field_name], value, position * 100))
    for old, new in WORKFLOW:
        conn.execute("INSERT INTO status_workflow (old_status_id, new_status_id) VALUES (?, ?)",
                     (status_id[old] if old else None, status_id[new]))
    group_id = {}
    for name, description, regexp in SYSTEM_GROUPS:
        cur = conn.execute("INSERT INTO groups (name, description, is_bug_group, user_regexp,"
                           " is_active) VALUES (?, ?, 0, ?, 1) RETURNING id",
                           (name, description, regexp))
        group_id[name] = cur.fetchone()[0]
        grant_admin(conn, group_id[name])
        conn.executemany("INSERT INTO group_group_map (member_id, grantor_id) VALUES (?, ?)",
                         [(group_id[member], group_id[name])
                          for member in INHERITED_BY.get(name, ())])
    for name, value in settings.defaults().items():
        conn.execute("INSERT INTO params (name, value) VALUES (?, ?)", (name, value))
    server_secrets.install(conn)
    conn.execute("INSERT INTO classifications (id, name, description, sort_key)"
                 " VALUES (1, 'Unclassified', 'Not assigned to any classification', 0)")


def create_admin(conn, login, password_hash, now, real_name="Administrator", test_product=True):
    """Create the first administrator and, while nobody is, the
    installation's maintainer, as the reference's make_admin: a direct
    member of admin who may bless it, and a direct member of editusers;
    every other system group through admin (derived), so it is theirs for
    as long as the account is in admin. Also (unless `test_product` is
    false: a database an import fills) the test product whose component it
    owns. Returns the account id."""
    cur = conn.execute("INSERT INTO users (login, real_name, password_hash, created_at)"
                       " VALUES (?, ?, ?, ?) RETURNING id",
                       (login, real_name, password_hash, dates.to_db(now)))
    admin_id = cur.fetchone()[0]
    group_id = {name: gid for name, gid in conn.execute(
        "SELECT name, id FROM groups WHERE name IN ('admin', 'editusers')")}
    conn.executemany("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, ?, ?)",
                     [(admin_id, group_id["admin"], 0, GRANT_DIRECT),
                      (admin_id, group_id["admin"], 1, GRANT_DIRECT),
                      (admin_id, group_id["editusers"], 0, GRANT_DIRECT)])
    refresh_for_user(conn, admin_id)
    conn.execute("UPDATE params SET value = ? WHERE name = 'maintainer' AND value = ''", (login,))
    if test_product:
        _create_test_product(conn, admin_id)
    return admin_id


def _create_test_product(conn, owner_id):
    cur = conn.execute(
        "INSERT INTO products (name, classification_id, description, is_active, default_milestone,"
        " has_unconfirmed) VALUES ('TestProduct', 1, ?, 1, '---', 1) RETURNING id",
        ("This is a test product. This ought to be blown away and replaced with real stuff in a "
         "finished installation of Bugzilla.",))
    product_id = cur.fetchone()[0]
    conn.execute("INSERT INTO versions (product_id, name) VALUES (?, 'unspecified')", (product_id,))
    conn.execute("INSERT INTO milestones (product_id, name, sort_key) VALUES (?, '---', 0)",
                 (product_id,))
    conn.execute(
        "INSERT INTO components (product_id, name, description, default_assignee, is_active)"
        " VALUES (?, 'TestComponent', ?, ?, 1)",
        (product_id, "This is a test component in the test product database. This ought to be "
                     "blown away and replaced with real stuff in a finished installation of "
                     "Bugzilla.",
         owner_id))


def is_installed(conn):
    """True when the database already holds an administrator."""
    return conn.execute("SELECT 1 FROM users LIMIT 1").fetchone() is not None
