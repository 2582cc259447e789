"""Substring searches find their candidates through the bug text index
(SQLite's FTS5 trigram table, PostgreSQL's pg_trgm index) and answer exactly
what comparing every bug answers: words, phrases, any case, non-ASCII
letters, LIKE's wildcard characters, texts shorter than a trigram, changed
and new summaries and whiteboards, hidden bugs left out."""


import pytest

from accounts import ADMIN
from bug_rows import add_bug, add_group, add_product
from bug_support import file_bug, traced, update_bug
from bugsvc.bugs import removal, search, search_sql
from bugsvc.notify.worker import Deliverer
from bugsvc.services import bug_search
from bugsvc.store import schema
from bugsvc.store.location import open_database
from conftest import world_fixture
from migration_support import migrated_from


PAT, STAFF = "pat@example.com", "staff@example.com"

SUMMARIES = {
    "crash": "Firefox crashes when printing",
    "upper": "CRASHES AT STARTUP",
    "mixed": "Startup CrAsH in the clipboard",
    "accented": "Café menu shows Ünïcode names",
    "accented_upper": "CAFÉ MENU",
    "percent": "Progress stuck at 100% done",
    "underscore": "The user_id column is empty",
    "backslash": r"Path C:\temp\logs not found",
    "quote": 'Button says "Save" twice',
    "short": "ab",
    "plain": "Nothing to see here",
    # The trigrams of "machine. Needinfo" that SQLite's index is asked for
    # (its first, middle and last), near each other, without the text.
    "near": "Needinfo mac. Now",
    "phrase": "Set up the machine. Needinfo the reporter",
}
WHITEBOARDS = {"plain": "[needs-triage] crashy"}
ALIASES = {"crash": ["first-alias"], "percent": ["PCT_100%"]}

NEEDLES = [
    "crash", "CRASH", "cRaShEs", "crashes when", "when printing", "printing when",
    "startup", "clipboard", "café", "CAFÉ", "Café", "ünïcode", "ÜNÏCODE", "Ünïcode",
    "100%", "0% d", "%", "%%%", "user_id", "r_i", "_", "___", "t_1", "pct_100",
    "first-al", r"C:\temp", r"\temp\l", "\\",
    '"Save"', 'says "', '"', "ab", "a", "b", "x", "needs-triage", "[needs", "crashy", "zzz",
    "é m", " ", "  ", "machine. Needinfo", "Needinfo mac. Now", "needinfo mac",
]


def fold(text):
    """`text` with ASCII letters in lower case, as lower() folds them on both engines."""
    return "".join(c.lower() if c.isascii() else c for c in text)


def expected(needle):
    """The bugs whose summary or whiteboard holds `needle`, ASCII letters in any case."""
    return sorted(name for name in SUMMARIES
                  if fold(needle) in fold(SUMMARIES[name])
                  or fold(needle) in fold(WHITEBOARDS.get(name, "")))


def expected_alias(needle):
    """The bugs one of whose aliases holds `needle`, ASCII letters in any case."""
    return sorted(name for name, aliases in ALIASES.items()
                  if any(fold(needle) in fold(alias) for alias in aliases))


@world_fixture
def bugs(services):
    services.add_user(PAT)
    services.add_user(STAFF)
    add_group(services, "staff", members=[STAFF])
    return {name: add_bug(services, summary=summary, whiteboard=WHITEBOARDS.get(name, ""),
                          aliases=ALIASES.get(name, ()))
            for name, summary in SUMMARIES.items()}


@pytest.fixture
def scan_only(monkeypatch):
    """Search as without the index: every bug compared."""
    def switch():
        monkeypatch.setattr(search_sql.Compiler, "candidates", lambda self, node: None)
    return switch


def found(services, bugs, as_user=None, **params):
    names = {bug_id: name for name, bug_id in bugs.items()}
    result = services.call(bug_search.search, dict(params, include_fields=["id"]),
                           as_user=as_user, write=False)
    return sorted(names.get(bug["id"], bug["id"]) for bug in result["bugs"])


def summary_or_whiteboard(needle):
    """A search for bugs whose summary or whiteboard holds `needle`."""
    return {"f1": "OP", "j1": "OR", "f2": "short_desc", "o2": "substring", "v2": needle,
            "f3": "status_whiteboard", "o3": "substring", "v3": needle, "f4": "CP"}


@pytest.mark.parametrize("needle", NEEDLES)
def test_substring_search_answers_what_comparing_every_bug_answers(services, bugs, scan_only,
                                                                   needle):
    # A needle of spaces only is no criterion at all (every bug).
    want = sorted(bugs) if not needle.strip() else expected(needle)
    indexed = found(services, bugs, **summary_or_whiteboard(needle))
    summaries = found(services, bugs, f1="short_desc", o1="substring", v1=needle)
    aliases = found(services, bugs, f1="alias", o1="substring", v1=needle)
    scan_only()
    assert indexed == found(services, bugs, **summary_or_whiteboard(needle)) == want
    assert summaries == found(services, bugs, f1="short_desc", o1="substring", v1=needle)
    assert aliases == found(services, bugs, f1="alias", o1="substring", v1=needle) == (
        sorted(bugs) if not needle.strip() else expected_alias(needle))


def test_the_index_may_give_more_bugs_than_hold_the_text_and_the_search_answers_those_that_do(
        services, bugs, scan_only):
    def candidates(ctx, _):
        sql, args = ctx.conn.dialect.text_candidates("summary", "machine. Needinfo")
        if ctx.conn.dialect.candidates_form == "condition":
            sql = f"SELECT b.id FROM bugs b WHERE {sql}"
        return {row[0] for row in ctx.conn.execute(sql, args)}
    # SQLite's index is asked for three of the text's trigrams near each
    # other: "near" has them so; PostgreSQL's for all its trigrams.
    found_by_index = services.call(candidates, write=False)
    assert bugs["phrase"] in found_by_index
    assert (bugs["near"] in found_by_index) == (services.db.dialect.name == "sqlite")
    for params in ({"quicksearch": '"machine. Needinfo"'},
                   {"quicksearch": '"machine. Needinfo"', "limit": 50},
                   {"f1": "short_desc", "o1": "substring", "v1": "machine. needinfo"}):
        assert found(services, bugs, **params) == ["phrase"]
    scan_only()
    assert found(services, bugs, quicksearch='"machine. Needinfo"') == ["phrase"]


@pytest.mark.parametrize("text, names", [
    ("crashes", ["crash", "upper"]),
    ("CRASH", ["crash", "mixed", "plain", "upper"]),
    ('"crashes when"', ["crash"]),
    ('"when crashes"', []),
    ("startup crash", ["mixed", "upper"]),
    ("café", ["accented"]),
    ("CAFÉ", ["accented_upper"]),
    ("100%", ["percent"]),
    ("user_id", ["underscore"]),
    (r"\temp\logs", []),                 # a backslash escapes the next character
    ("ab", ["short"]),
    ("crashes OR clipboard", ["crash", "mixed", "upper"]),
    ("crash -printing", ["mixed", "plain", "upper"]),
])
def test_quicksearch_answers_what_comparing_every_bug_answers(services, bugs, scan_only, text,
                                                              names):
    indexed = found(services, bugs, quicksearch=text)
    scan_only()
    assert indexed == found(services, bugs, quicksearch=text) == names


def test_changed_and_new_summaries_and_whiteboards_are_found_at_once(services, bugs):
    update_bug(services, bugs["plain"], summary="Toolbar flickers on resize",
               whiteboard="[qa-wanted]")
    bugs["new"] = file_bug(services, summary="Sidebar flickers too")
    assert found(services, bugs, quicksearch="flickers") == ["new", "plain"]
    assert found(services, bugs, quicksearch="qa-wanted") == ["plain"]
    assert found(services, bugs, quicksearch="Nothing to see") == []
    assert found(services, bugs, quicksearch="needs-triage") == []
    update_bug(services, bugs["new"], summary="Sidebar is fine now")
    assert found(services, bugs, quicksearch="flickers") == ["plain"]


@pytest.mark.parametrize("who, sees", [(None, False), (PAT, False), (STAFF, True)])
def test_hidden_bugs_stay_hidden(services, bugs, who, sees):
    secret = add_bug(services, summary="Vault combination leaks", whiteboard="leaky vault",
                     aliases=["vault-leak"], groups=["staff"])
    expected_ids = [secret] if sees else []
    for params in ({"quicksearch": "leaks"}, {"quicksearch": "leaky"},
                   {"quicksearch": "vault-leak"}, summary_or_whiteboard("combination"),
                   {"f1": "alias", "o1": "substring", "v1": "vault-l"}):
        assert found(services, bugs, as_user=who, **params) == expected_ids, params
        counted = services.call(bug_search.search, dict(params, count_only=True), as_user=who,
                                write=False)
        assert counted["bug_count"] == len(expected_ids)


def test_restricted_product_bugs_are_found_only_by_members(services, bugs):
    add_product(services, "Vault")
    secret = add_bug(services, summary="Hinge squeaks", product="Vault", groups=["staff"])
    assert found(services, bugs, quicksearch="vault") == []
    assert found(services, bugs, as_user=STAFF, quicksearch="vault") == [secret]
    assert found(services, bugs, as_user=STAFF, quicksearch="squeaks") == [secret]


@pytest.mark.parametrize("order, limit", [("bug_id", 50), ("priority,bug_id", 50),
                                          ("bug_id", None)])
def test_products_and_components_are_matched_by_their_names(services, bugs, order, limit):
    """A substring of a product's or component's name (ASCII letters in
    any case; %, _ and backslash as themselves) selects their bugs, in every
    kind of search, negated too."""
    add_product(services, r"Web_UI 100% C:\\", component="Löwe Tools")
    add_product(services, "WebUI", component="Tools")
    web = add_bug(services, summary="One", product=r"Web_UI 100% C:\\")
    plain = add_bug(services, summary="Two", product="WebUI")
    ours = {web: "web", plain: "plain"}
    cases = {("product", "b_u"): ["web"], ("product", "WEBUI"): ["plain"],
             ("product", "100%"): ["web"], ("product", "c:\\"): ["web"],
             ("product", "webu"): ["plain"],
             ("component", "LÖWE"): [], ("component", "löwe t"): ["web"],
             ("component", "tools"): ["plain", "web"], ("product", "nothing"): []}
    limits = {} if limit is None else {"limit": limit}

    def ours_found(operator, text):
        result = services.call(bug_search.search, dict(
            limits, order=order, include_fields=["id"], f1=field, o1=operator, v1=text),
            write=False)
        return sorted(ours[bug["id"]] for bug in result["bugs"] if bug["id"] in ours)
    for (field, text), names in cases.items():
        assert ours_found("substring", text) == sorted(names), (field, text)
        assert ours_found("notsubstring", text) == sorted(set(ours.values()) - set(names))


def test_migration_indexes_the_bugs_already_stored(services, bugs, db, db_path):
    """A database from before the index (version 6) is moved forward with
    its bugs in the index."""
    with db.transaction(write=True) as conn:
        if conn.dialect.name == "sqlite":
            for table in ("bugs_text_fts", "bug_aliases_fts"):
                for event in ("insert", "update", "delete"):
                    conn.execute(f"DROP TRIGGER {table}_{event}")
                conn.execute(f"DROP TABLE {table}")
        else:
            conn.execute("DROP INDEX bugs_text_trgm_idx")
            conn.execute("DROP INDEX bug_aliases_trgm_idx")
        assert not conn.dialect.has_text_index(conn)
        conn.dialect.set_schema_version(conn, 6)
    db.close()
    reopened = open_database(db_path)
    try:
        assert reopened.initialize() is False
        with reopened.transaction() as conn:
            assert conn.dialect.has_text_index(conn)
            assert conn.dialect.schema_version(conn) == schema.SCHEMA_VERSION
    finally:
        reopened.close()
    assert found(services, bugs, quicksearch="crashes") == ["crash", "upper"]
    assert found(services, bugs, **summary_or_whiteboard("crashy")) == ["plain"]
    assert found(services, bugs, quicksearch="first-alias") == ["crash"]


# Comments (quicksearch_fulltext) ------------------------------------------------------------

def index_comments(services):
    """What each round of the delivery worker does for the comment text
    index, until it has caught up with the comments stored."""
    deliverer = Deliverer(services.units)
    while deliverer.index_comments():
        pass


def check_comment_index(services):
    """The comment text index holds each comment's text as stored (SQLite:
    FTS5's own check against the comments table; PostgreSQL keeps its index
    itself)."""
    with services.db.transaction(write=True) as conn:
        if conn.dialect.comment_text_index_trails:
            conn.execute("INSERT INTO comments_fts (comments_fts, rank)"
                         " VALUES ('integrity-check', 1)")


@pytest.fixture(params=["indexed", "not yet indexed"])
def commented(services, bugs, request):
    """A public comment on "plain", a private one on "crash" (the staff group
    is the insidergroup), and a comment on a bug only staff may see; in the
    comment text index, or stored only (the delivery worker has not indexed
    them yet)."""
    from bug_support import set_param
    from bugsvc.services import comment
    set_param(services, "insidergroup", "staff")
    services.call(comment.add, {"id": bugs["plain"], "comment": "Seen on the Zeppelin build"},
                  as_user=ADMIN)
    services.call(comment.add, {"id": bugs["crash"], "comment": "Customer Quasimodo reported it",
                                "is_private": True}, as_user=STAFF)
    secret = add_bug(services, summary="Locked away", groups=["staff"],
                     description="The Zeppelin vault code")
    if request.param == "indexed":
        index_comments(services)
    return dict(bugs, secret=secret)


@pytest.mark.parametrize("text, names", [
    ("zeppelin", ["plain"]), ("ZEPPELIN", ["plain"]), ('"zeppelin build"', ["plain"]),
    ('"build zeppelin"', []), ("#zeppelin", ["plain"]), ("zeppelin nothing", ["plain"]),
    ("zeppelin crash", ["plain"]), ("zeppelin printing", []), ("quasimodo", []),
    ("zep", ["plain"]), ("ze", ["plain"]),
])
def test_quicksearch_searches_the_comments_one_may_read(services, commented, scan_only, text,
                                                        names):
    indexed = found(services, commented, quicksearch=text)
    scan_only()
    assert indexed == found(services, commented, quicksearch=text) == names


@pytest.mark.parametrize("limit", [None, 50])
def test_comments_with_a_phrases_trigrams_near_each_other_are_not_found_for_it(
        services, commented, limit):
    from bugsvc.services import comment
    services.call(comment.add, {"id": commented["upper"], "comment": "Needinfo mac. Now"},
                  as_user=ADMIN)
    services.call(comment.add, {"id": commented["mixed"], "comment": "The machine. Needinfo"},
                  as_user=ADMIN)
    index_comments(services)
    params = {"quicksearch": '"machine. Needinfo"'} | ({"limit": limit} if limit else {})
    assert found(services, commented, **params) == ["mixed", "phrase"]      # a summary too


@pytest.mark.parametrize("who, sees", [(None, False), (PAT, False), (STAFF, True)])
def test_private_comments_and_hidden_bugs_are_searched_only_by_those_who_see_them(
        services, commented, who, sees):
    assert found(services, commented, as_user=who, quicksearch="quasimodo") == (
        ["crash"] if sees else [])
    assert found(services, commented, as_user=who, quicksearch="zeppelin") == (
        ["plain", "secret"] if sees else ["plain"])
    counted = services.call(bug_search.search, {"quicksearch": "quasimodo", "count_only": True},
                            as_user=who, write=False)
    assert counted["bug_count"] == (1 if sees else 0)


def test_migration_indexes_the_comments_already_stored(services, commented, db, db_path):
    """A database from before the comment index (version 8) is moved
    forward with its comments in the index."""
    def undo(conn):
        if conn.dialect.name == "sqlite":
            for event in ("insert", "update", "delete"):
                conn.execute(f"DROP TRIGGER comments_fts_{event}")
            conn.execute("DROP TABLE comments_fts")
        else:
            conn.execute("DROP INDEX comments_body_trgm_idx")
        assert not conn.dialect.has_comment_text_index(conn)
    with migrated_from(db, db_path, 8, undo) as conn:
        assert conn.dialect.has_comment_text_index(conn)
    assert found(services, commented, quicksearch="zeppelin") == ["plain"]
    assert found(services, commented, as_user=STAFF, quicksearch="quasimodo") == ["crash"]


# Comments indexed after they are stored ----------------------------------------------------

def test_migration_lets_the_comment_index_trail_the_comments(services, bugs, db, db_path):
    """A database of version 25, whose triggers indexed each comment in its
    own transaction, is moved forward with its comments still indexed; the
    next comments are indexed by the delivery worker."""
    from bugsvc.services import comment
    services.call(comment.add, {"id": bugs["plain"], "comment": "Stored before"}, as_user=ADMIN)

    def undo(conn):
        if conn.dialect.comment_text_index_trails:
            conn.execute("DROP TRIGGER comments_fts_insert")
            conn.execute("CREATE TRIGGER comments_fts_insert AFTER INSERT ON comments BEGIN"
                         " INSERT INTO comments_fts (rowid, body) VALUES (new.id, new.body); END")
            conn.execute("INSERT INTO comments_fts (comments_fts) VALUES ('rebuild')")
    with migrated_from(db, db_path, 25, undo) as conn:
        triggers = conn.execute("SELECT COUNT(*) FROM sqlite_master WHERE type = 'trigger'"
                                " AND name LIKE 'comments_fts_%' AND sql LIKE '%docsize%'"
                                ).fetchone()[0] if conn.dialect.name == "sqlite" else 3
        assert triggers == 3
    check_comment_index(services)
    services.call(comment.add, {"id": bugs["crash"], "comment": "Stored after"}, as_user=ADMIN)
    assert searched(services, bugs, "stored") == (["crash", "plain"], ["crash", "plain"])
    index_comments(services)
    assert searched(services, bugs, "stored") == (["crash", "plain"], ["crash", "plain"])
    check_comment_index(services)


@pytest.mark.engine("sqlite")
def test_the_comment_index_merges_a_whole_level_at_once_only_at_64_segments(db, db_path):
    """SQLite: a database of version 32 (FTS5's crisis merge at its default
    16 segments, the count at which the index begins to merge: so a level
    was merged whole inside one batch of comments, for seconds at millions
    of comments) is moved forward to a crisis count of 64, the index's
    merging count staying 16."""
    def config(conn, key):
        row = conn.execute("SELECT v FROM comments_fts_config WHERE k = ?", (key,)).fetchone()
        return row[0] if row is not None else None
    with db.transaction() as conn:
        assert (config(conn, "automerge"), config(conn, "crisismerge")) == (16, 64)
    with migrated_from(db, db_path, 32, lambda conn: conn.execute(
            "DELETE FROM comments_fts_config WHERE k = 'crisismerge'")) as conn:
        assert (config(conn, "automerge"), config(conn, "crisismerge")) == (16, 64)


def test_comments_indexed_a_few_at_a_time_are_found_and_the_index_merges_sixteen_segments(
        services, bugs, db, db_path):
    """A database of version 29 (FTS5 merging the comment index's segments
    four at a time) is moved forward to merging sixteen at a time; comments
    then indexed one round each (a segment each, left unmerged up to
    sixteen) are all found, by quicksearch and `content matches`, and the
    index passes its own check."""
    from bugsvc.services import comment
    version = next(number for number, step in schema.MIGRATIONS.items()
                   if step is schema._comment_text_index_merging)

    def undo(conn):
        if conn.dialect.comment_text_index_trails:
            conn.execute("DELETE FROM comments_fts_config WHERE k = 'automerge'")
    with migrated_from(db, db_path, version - 1, undo) as conn:
        if conn.dialect.comment_text_index_trails:
            assert conn.execute("SELECT v FROM comments_fts_config WHERE k = 'automerge'"
                                ).fetchone()[0] == 16
    for number in range(20):
        name = ("plain", "crash")[number % 2]
        services.call(comment.add, {"id": bugs[name], "comment": f"Flamingo number {number}"},
                      as_user=ADMIN)
        index_comments(services)
    assert searched(services, bugs, "flamingo number") == (["crash", "plain"], ["crash", "plain"])
    assert searched(services, bugs, "flamingo number 17") == (["crash"], ["crash"])
    check_comment_index(services)


def test_a_round_with_no_comment_to_index_writes_nothing(services, bugs, monkeypatch):
    """Every round of an idle server's delivery worker looks for comments to
    index: with none waiting it opens no write transaction (on SQLite that
    would take every writer's turn, across the service's processes); with
    one waiting it indexes it (where the engine's index trails)."""
    from bugsvc.services import comment
    index_comments(services)
    opened = []
    transaction = type(services.db).transaction

    def noted(db, write=False, *args, **kwargs):
        opened.append(write)
        return transaction(db, write, *args, **kwargs)
    monkeypatch.setattr(type(services.db), "transaction", noted)
    deliverer = Deliverer(services.units)
    assert deliverer.index_comments() == 0
    assert True not in opened
    services.call(comment.add, {"id": bugs["plain"], "comment": "Waiting"}, as_user=ADMIN)
    opened.clear()
    trails = services.db.dialect.comment_text_index_trails
    assert deliverer.index_comments() == (1 if trails else 0)
    assert (True in opened) == trails
    assert deliverer.index_comments() == 0
    check_comment_index(services)


def searched(services, bugs, text, as_user=None):
    """The bugs found by quicksearch of `text` and by `content matches`,
    checked to be those found without the index."""
    words = found(services, bugs, as_user=as_user, quicksearch=text)
    content = found(services, bugs, as_user=as_user, f1="content", o1="matches", v1=text)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_sql.Compiler, "candidates", lambda self, node: None)
        assert found(services, bugs, as_user=as_user, quicksearch=text) == words
    return words, content


def test_a_comment_is_found_as_soon_as_its_post_has_answered(client, services, bugs, admin_key):
    index_comments(services)
    for name, text in (("plain", "An albatross on the runway"), ("crash", "albatrosses too")):
        resp = client.simulate_post(f"/rest/bug/{bugs[name]}/comment",
                                    json={"comment": text},
                                    headers={"X-BUGZILLA-API-KEY": admin_key})
        assert resp.status_code == 201
        listed = client.simulate_get("/rest/bug", params={"quicksearch": "albatross"},
                                     headers={"X-BUGZILLA-API-KEY": admin_key})
        assert listed.status_code == 200
    assert sorted(bug["id"] for bug in listed.json["bugs"]) == sorted([bugs["plain"],
                                                                       bugs["crash"]])
    assert searched(services, bugs, "albatross") == (["crash", "plain"], ["crash", "plain"])
    assert searched(services, bugs, "runway") == (["plain"], ["plain"])
    index_comments(services)
    assert searched(services, bugs, "albatross") == (["crash", "plain"], ["crash", "plain"])
    counted = services.call(bug_search.search, {"quicksearch": "albatross", "count_only": True},
                            write=False)
    assert counted["bug_count"] == 2
    check_comment_index(services)


def test_comments_edited_or_removed_before_and_after_indexing_are_found_as_stored(
        services, bugs):
    from bug_support import set_param
    from bugsvc.services import comment
    set_param(services, "edit_comments_group", "admin")

    def add(name, text):
        return services.call(comment.add, {"id": bugs[name], "comment": text},
                             as_user=ADMIN)["id"]

    def edit(comment_id, text):
        services.call(comment.update_comment, {"comment_id": comment_id, "new_comment": text},
                      as_user=ADMIN)

    walrus = add("plain", "A walrus in the logs")
    index_comments(services)
    add("crash", "A narwhal in the logs")
    orca = add("percent", "An orca in the logs")
    edit(walrus, "A manatee in the logs")           # indexed already
    edit(orca, "A dugong in the logs")              # not indexed yet, nor the one before it
    for indexed in (False, True):
        assert searched(services, bugs, "walrus") == ([], [])
        assert searched(services, bugs, "orca") == ([], [])
        assert searched(services, bugs, "narwhal") == (["crash"], ["crash"])
        assert searched(services, bugs, "manatee") == (["plain"], ["plain"])
        assert searched(services, bugs, "dugong") == (["percent"], ["percent"])
        if not indexed:
            index_comments(services)
    check_comment_index(services)
    # The newest comment indexed goes with its bug, and one not indexed yet
    # with another: the next comment may be given an id again (SQLite), and
    # is found as every other one.
    doomed = add_bug(services, summary="Doomed", description="Sealion")
    add("plain", "Pelican")
    index_comments(services)
    fleeting = add_bug(services, summary="Fleeting", description="Flamingo")   # not indexed
    services.call(lambda ctx, _: removal.delete_bugs(ctx, [doomed, fleeting]))
    assert searched(services, bugs, "flamingo") == ([], [])
    assert searched(services, bugs, "sealion") == ([], [])
    add("crash", "A sealion again")
    edit(walrus, "A manatee and a sealion")
    assert searched(services, bugs, "sealion") == (["crash", "plain"], ["crash", "plain"])
    index_comments(services)
    assert searched(services, bugs, "sealion") == (["crash", "plain"], ["crash", "plain"])
    assert searched(services, bugs, "pelican") == (["plain"], ["plain"])
    check_comment_index(services)


def test_a_comment_stored_again_under_an_indexed_id_is_indexed_at_once(services, bugs, db):
    """A comment written with an id the index has passed (an import writes a
    bug's comments again under their ids) is indexed in its own transaction."""
    from bugsvc.services import comment
    first = services.call(comment.add, {"id": bugs["plain"], "comment": "Original words"},
                          as_user=ADMIN)["id"]
    services.call(comment.add, {"id": bugs["crash"], "comment": "Later words"}, as_user=ADMIN)
    index_comments(services)
    with db.transaction(write=True) as conn:
        row = conn.execute("SELECT bug_id, count, author_id, created_at FROM comments"
                           " WHERE id = ?", (first,)).fetchone()
        conn.execute("DELETE FROM comments WHERE id = ?", (first,))
        conn.execute("INSERT INTO comments (id, bug_id, count, author_id, created_at, body)"
                     " VALUES (?, ?, ?, ?, ?, ?)", (first, *row, "Imported words"))
    assert searched(services, bugs, "imported") == (["plain"], ["plain"])
    assert searched(services, bugs, "original") == ([], [])
    check_comment_index(services)


# Common texts ---------------------------------------------------------------------------------

@pytest.fixture(params=["compared", "over budget"])
def common_texts(request, monkeypatch):
    """Every text counts as a common one (search_sql.COMMON_MATCHES), so a
    search that stops at its first bugs in id order compares the bugs in
    that order instead of gathering the index's candidates; "over budget":
    that comparison stops at once (search.FIRST_ONLY_STEPS) and the index's
    candidates are taken after all."""
    monkeypatch.setattr(search_sql, "COMMON_MATCHES", 0)
    if request.param == "over budget":
        monkeypatch.setattr(search, "FIRST_ONLY_STEPS", 1)


@pytest.mark.parametrize("text, names", [
    ("crashes", ["crash", "upper"]), ('"crashes when"', ["crash"]),
    ("startup crash", ["mixed", "upper"]), ("crashes OR clipboard", ["crash", "mixed", "upper"]),
    ("crash -printing", ["mixed", "plain", "upper"]), ("zeppelin", ["plain"]),
    ('"zeppelin build"', ["plain"]), ("zeppelin crash", ["plain"]), ("zeppelin printing", []),
    ("quasimodo", []), ("zzz", []),
])
def test_first_bugs_of_a_common_text_are_those_the_index_finds(services, commented, common_texts,
                                                                 text, names):
    # limit 50 in bug id order: the first bugs only; offset 1 leaves the first one out.
    assert found(services, commented, quicksearch=text, limit=50) == names
    ordered = sorted(commented[name] for name in names)
    result = services.call(bug_search.search, {"quicksearch": text, "limit": 50, "offset": 1,
                                               "include_fields": ["id"]}, write=False)
    assert [bug["id"] for bug in result["bugs"]] == ordered[1:]


@pytest.mark.parametrize("who, sees", [(None, False), (PAT, False), (STAFF, True)])
def test_first_bugs_of_a_common_text_keep_private_comments_and_hidden_bugs_hidden(
        services, commented, common_texts, who, sees):
    assert found(services, commented, as_user=who, quicksearch="quasimodo", limit=50) == (
        ["crash"] if sees else [])
    assert found(services, commented, as_user=who, quicksearch="zeppelin", limit=50) == (
        ["plain", "secret"] if sees else ["plain"])


@pytest.mark.parametrize("who, insider", [(None, False), (PAT, False), (STAFF, True)])
def test_a_word_common_in_summaries_is_found_in_the_comments_of_other_bugs(
        services, commented, scan_only, monkeypatch, who, insider):
    """Its first bugs are compared in id order (SQLite: more summaries than
    COMMON_MATCHES hold it), each bug's comments read only where the comment
    index says they may hold it: still every bug with a comment holding it
    is found, private ones by insiders only."""
    from bugsvc.services import comment
    services.call(comment.add, {"id": commented["percent"], "comment": "A crash in the log"},
                  as_user=ADMIN)
    services.call(comment.add, {"id": commented["short"], "comment": "Another crash",
                                "is_private": True}, as_user=STAFF)
    index_comments(services)
    monkeypatch.setattr(search_sql, "COMMON_MATCHES", 2)   # three summaries, two comments
    want = sorted(["crash", "mixed", "percent", "plain", "upper"] + (["short"] if insider else []))
    assert found(services, commented, as_user=who, quicksearch="crash", limit=50) == want
    scan_only()
    assert found(services, commented, as_user=who, quicksearch="crash", limit=50) == want


@pytest.mark.parametrize("common", [False, True], ids=["rare", "common"])
def test_the_first_bugs_of_a_common_comment_text_are_compared_not_gathered_from_the_index(
        services, commented, db, monkeypatch, common):
    """A search for its first bugs in id order takes a rare comment text's
    candidates from the index, and compares bugs in id order for a common
    one (told by SQLite's reading, PostgreSQL's estimate: at least one row)."""
    if common:
        monkeypatch.setattr(search_sql, "COMMON_MATCHES", 0)
    names, statements = traced(db, lambda: found(services, commented, quicksearch="zeppelin",
                                                 limit=50))
    assert names == ["plain"]
    searched = [sql for sql in statements if "ORDER BY b.id" in sql and "LIMIT" in sql]
    assert len(searched) == 1
    from_index = "json_each" if db.dialect.name == "sqlite" else "FROM comments WHERE body ILIKE"
    assert (from_index in searched[0]) == (not common)


def test_a_common_text_is_compared_only_when_the_search_stops_at_its_first_bugs(
        services, commented, monkeypatch):
    """The index's candidates are left aside only for a text more rows have
    than COMMON_MATCHES, in a search that stops at its first bugs in id order."""
    zeppelin = search_sql.Condition("content", "matches", '"zeppelin"')

    def candidates(first_only, common_matches):
        monkeypatch.setattr(search_sql, "COMMON_MATCHES", common_matches)

        def compile_it(ctx, _):
            compiler = search_sql.Compiler(ctx)
            compiler.first_only = first_only
            return compiler.candidates(zeppelin)
        return services.call(compile_it, write=False)

    def read(most):
        def first_matches(ctx, _):
            matches = ctx.conn.dialect.first_text_matches(ctx.conn, "comment", "zeppelin", most)
            if matches.common:
                return matches
            sql, args = matches.candidates
            if ctx.conn.dialect.candidates_form == "condition":
                sql = f"SELECT b.id FROM bugs b WHERE {sql}"
            return sorted(row[0] for row in ctx.conn.execute(sql, args))
        return services.call(first_matches, write=False)
    # Two comments hold it (one on a bug only staff see).
    index_comments(services)
    holding = sorted([commented["plain"], commented["secret"]])
    if services.db.dialect.name == "sqlite":
        # SQLite reads the index's rows up to the number asked for, and
        # gives their bugs; a comment the index does not hold yet counts as
        # one that may hold it, and its bug is a candidate.
        assert read(2) == holding
        from bugsvc.services import comment
        services.call(comment.add, {"id": commented["crash"], "comment": "Unrelated"},
                      as_user=ADMIN)
        assert read(2).common
        assert read(3) == sorted(holding + [commented["crash"]])
        index_comments(services)
        assert read(2) == holding
        assert read(1).common
    else:
        # PostgreSQL's planner estimates at least one row: common past none.
        assert read(0).common
        assert read(10**6) == holding
    # A search over all its candidates keeps them, but for a word PostgreSQL
    # tests with its index's condition (tests_common_comment_words_by_index).
    by_index = services.db.dialect.tests_common_comment_words_by_index
    assert (candidates(False, 0) is None) == by_index
    assert candidates(False, 10**6) is not None
    assert candidates(True, 10**6) is not None
    assert candidates(True, 0) is None


# Words common in comments, in searches that go over all their candidates -----------------

COMMENTS_WITH_MARKS = {"percent": "Stuck at 100% done again", "underscore": "The user_id is NULL",
                       "backslash": r"Logs in C:\temp\logs", "accented": "Café menu again",
                       "quote": 'It says "Save" twice'}


@pytest.fixture
def commented_with_marks(services, commented):
    """`commented`, and public comments holding the marks LIKE and ILIKE
    treat apart (%, _, backslash), a quote and letters beyond ASCII."""
    from bugsvc.services import comment
    for name, text in COMMENTS_WITH_MARKS.items():
        services.call(comment.add, {"id": commented[name], "comment": text}, as_user=ADMIN)
    index_comments(services)
    return commented


@pytest.mark.parametrize("who", [None, PAT, STAFF])
@pytest.mark.parametrize("text", ["zeppelin", "quasimodo", "zeppelin build", '"zeppelin vault"',
                                  "100%", "0% d", "user_id", "r_i", r"C:\temp", "\\", '"Save"',
                                  "café", "CAFÉ", "again", "again -menu", "crash", "zzz"])
def test_a_word_common_in_comments_counts_and_lists_what_comparing_every_bug_does(
        services, commented_with_marks, scan_only, monkeypatch, who, text):
    """Every word counts as common (COMMON_MATCHES): a count and a list in
    another order than the bugs' ids go over all their candidates, and
    PostgreSQL tests such a word with its index's condition, in quick
    search's words and in conditions on comments alike. The answers are
    those of comparing every bug's comments (every word rare, no
    candidates), private comments and hidden bugs seen only by those who
    may see them."""
    monkeypatch.setattr(search_sql, "COMMON_MATCHES", 0)
    bugs = commented_with_marks

    def answers():
        criteria = {"f1": "content", "o1": "matches", "v1": text}
        listed = found(services, bugs, as_user=who, order="priority,bug_id", limit=50,
                       **criteria)
        counted = services.call(bug_search.search, dict(criteria, count_only=True),
                                as_user=who, write=False)["bug_count"]
        negated = found(services, bugs, as_user=who, order="bug_id DESC", limit=50,
                        **{"f1": "content", "o1": "notmatches", "v1": text})
        in_comments = [
            (found(services, bugs, as_user=who, order="priority,bug_id", limit=50, **comment),
             services.call(bug_search.search, dict(comment, count_only=True), as_user=who,
                           write=False)["bug_count"])
            for comment in ({"f1": "longdesc", "o1": "substring", "v1": text},
                            {"longdesc": text, "longdesc_type": "allwordssubstr"})]
        return listed, counted, negated, in_comments
    as_common = answers()
    monkeypatch.setattr(search_sql, "COMMON_MATCHES", 10**6)
    scan_only()
    assert as_common == answers()
    assert as_common[1] == len(as_common[0])
    if text == "quasimodo":             # a private comment on "crash"
        assert as_common[0] == (["crash"] if who == STAFF else [])
    if text == '"zeppelin vault"':      # a comment on a bug only staff see
        assert as_common[0] == (["secret"] if who == STAFF else [])


def test_postgresql_tests_a_word_common_in_comments_with_its_index_condition(
        services, commented, db, monkeypatch):
    """The word's comments are tested with the condition pg_trgm's index
    serves, in an EXISTS whose plan PostgreSQL chooses, and no candidates
    are taken for it (they would be all its bugs again); a search for the
    first bugs in id order still compares the bugs one by one, and a rare
    word keeps its candidates."""
    if db.dialect.name != "postgresql":
        pytest.skip("SQLite reads each candidate's comments "
                    "(tests_common_comment_words_by_index)")

    def statement(common, criteria, **params):
        monkeypatch.setattr(search_sql, "COMMON_MATCHES", 0 if common else 10**6)
        _, statements = traced(db, lambda: services.call(
            bug_search.search, dict(params, **criteria), write=False))
        return next(sql for sql in statements if "FROM bugs b WHERE" in sql)
    by_index = "c.bug_id = b.id AND c.body ILIKE"
    candidates = "ARRAY(SELECT bug_id FROM comments WHERE body ILIKE"
    for criteria in ({"quicksearch": "zeppelin"},
                     {"f1": "longdesc", "o1": "substring", "v1": "zeppelin"},
                     {"longdesc": "zeppelin", "longdesc_type": "allwordssubstr"}):
        for params in ({"count_only": True}, {"order": "priority", "limit": 50}):
            common = statement(True, criteria, **params)
            assert by_index in common and candidates not in common
            rare = statement(False, criteria, **params)
            assert by_index not in rare and candidates in rare
        first = statement(True, criteria, limit=50)
        assert by_index not in first and candidates not in first


@pytest.mark.parametrize("who", [None, PAT, STAFF])
def test_two_words_in_comments_find_the_bugs_that_have_both(services, commented, who,
                                                            monkeypatch):
    """Both words rare (their candidates narrow the search) or both common
    (on PostgreSQL tested through its index's condition): the same bugs,
    a private comment's and a hidden bug's for those who see them."""
    from bugsvc.services import comment
    services.call(comment.add, {"id": commented["plain"], "comment": "A zeppelin crash"},
                  as_user=ADMIN)
    services.call(comment.add, {"id": commented["secret"], "comment": "Crash of the zeppelin"},
                  as_user=STAFF)
    index_comments(services)
    want = ["plain", "secret"] if who == STAFF else ["plain"]
    for common in (False, True):
        monkeypatch.setattr(search_sql, "COMMON_MATCHES", 0 if common else 10**6)
        assert found(services, commented, as_user=who, quicksearch="zeppelin crash",
                     order="priority", limit=50) == want


@pytest.mark.parametrize("who", [None, STAFF])
@pytest.mark.parametrize("criteria, names, staff_too", [
    ({"quicksearch": "zeppelin crash"}, ["plain"], []),        # plain's whiteboard: "crashy"
    ({"longdesc": "zeppelin the", "longdesc_type": "allwordssubstr"}, ["plain"], ["secret"]),
], ids=["quicksearch", "comment box"])
def test_a_rare_word_beside_a_common_one_narrows_the_search_alone(
        services, commented, db, scan_only, monkeypatch, who, criteria, names, staff_too):
    """Several ANDed words with candidates (quick search's terms, or the
    words of one condition): where some have few (at most COMMON_MATCHES)
    and others many, SQLite takes the few's alone (each term's candidates
    are made whole before a bug is tested); the many's words are still
    tested on every bug it reaches."""
    from bugsvc.services import comment
    for name in ("upper", "mixed"):                         # "the": 4 comments
        services.call(comment.add, {"id": commented[name], "comment": "Then the logs"},
                      as_user=ADMIN)
    index_comments(services)          # (the comments not indexed yet are candidates too)
    monkeypatch.setattr(search_sql, "COMMON_MATCHES", 2)   # zeppelin: 2 comments
    counted, statements = traced(db, lambda: services.call(
        bug_search.search, dict(criteria, count_only=True), as_user=who,
        write=False)["bug_count"])
    listed = found(services, commented, as_user=who, order="priority", limit=50, **criteria)
    want = names + (staff_too if who == STAFF else [])
    assert listed == want and counted == len(want)
    if db.dialect.name == "sqlite":
        searched = next(sql for sql in statements if sql.startswith("SELECT COUNT(*) FROM bugs b"))
        assert searched.count("b.id IN (") == 1
        assert searched.count("comments_fts MATCH") == 1    # zeppelin's, not the other's
    scan_only()
    assert found(services, commented, as_user=who, order="priority", limit=50,
                 **criteria) == listed
