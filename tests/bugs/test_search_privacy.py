"""Searches tell nothing of what the caller may not see, not even through
the time they take: no condition is ever evaluated on a hidden bug, a
private comment or attachment, another account's tags or a hidden history
row (proved by recording every value handed to the SQL functions that
conditions call); history conditions read the rows the bug's history shows;
a Bug ID custom field names a hidden bug to nobody who may not see it."""

from datetime import datetime, timezone

import pytest

from bug_rows import (
    ADMIN,
    add_attachment,
    add_bug,
    add_comment,
    add_custom_field,
    add_dependency,
    add_group,
    add_personal_tag,
    add_product,
    add_tag,
    set_custom_value,
    set_param,
    user_id,
)
from bugsvc.catalogue.field_types import BUG_ID
from bugsvc.notify.worker import Deliverer
from bugsvc.services import bug as bug_service, bug_search, field as field_service
from bugsvc.store import regexp as bugsvc_regexp
from conftest import world_fixture


MARK = "qzxmark"          # in every hidden text, in no visible one, in no pattern
PAT = "pat@example.com"   # a plain account
STAFF = "staff@example.com"   # in every bug group and the insider group
OTHER = "other@example.com"


@world_fixture
def world(services):
    """A visible bug (with a private comment, a private attachment and
    another account's tag holding MARK), a bug hidden by a per-bug group and
    one in a product restricted by a Mandatory group control (both holding
    MARK everywhere); the visible bug depends on both hidden ones."""
    for login in (PAT, STAFF, OTHER):
        services.add_user(login, real_name=login.split("@")[0])
    add_group(services, "staff", members=[STAFF])
    vault_group = add_group(services, "vaultkeepers", members=[STAFF])
    add_group(services, "insiders", members=[STAFF])
    set_param(services, "insidergroup", "insiders")
    vault = add_product(services, "Vault")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 0, 3, 3, 0)", (vault_group, vault))
    notes = add_custom_field(services, "cf_notes", 1)
    bugs = {"visible": add_bug(services, summary="Printer jams on duplex", whiteboard="paper",
                               description="Paper everywhere.", aliases=["jam"])}
    for name, extra in (("grouped", {"groups": ["staff"]}),
                        ("vault", {"groups": ["vaultkeepers"], "product": "Vault"})):
        bugs[name] = add_bug(services, summary=f"{MARK} {name} summary", whiteboard=MARK,
                             url=f"http://{MARK}.example.com/", aliases=[f"{MARK}{name}"],
                             description=f"{MARK} in the description", reporter=STAFF,
                             assigned_to=STAFF, **extra)
        add_tag(services, add_comment(services, bugs[name], ADMIN, f"{MARK} comment"), MARK)
        add_attachment(services, bugs[name], f"{MARK} attachment", file_name=f"{MARK}.txt",
                       data=MARK.encode())
        set_custom_value(services, bugs[name], notes, MARK)
        add_dependency(services, bugs["visible"], bugs[name])
    private = add_comment(services, bugs["visible"], ADMIN, f"{MARK} private note",
                          is_private=True)
    add_tag(services, private, MARK)
    add_attachment(services, bugs["visible"], f"{MARK} private", file_name=f"{MARK}.log",
                   data=MARK.encode(), is_private=True)
    add_personal_tag(services, OTHER, MARK, bugs["visible"])
    # The comment text index holds these comments; the next ones wait for it
    # (bugsvc/notify/worker.py indexes them later).
    deliverer = Deliverer(services.units)
    while deliverer.index_comments():
        pass
    add_comment(services, bugs["grouped"], ADMIN, f"{MARK} comment not indexed yet")
    add_comment(services, bugs["visible"], ADMIN, f"{MARK} private, not indexed yet",
                is_private=True)
    return bugs


class Recorder:
    """Stands in for the SQL functions conditions call on row values (REGEXP,
    instr, lower) on the test's connection, and keeps every value they are
    handed."""

    def __init__(self, conn):
        self.values = []
        self.matched = []      # the values REGEXP was called on
        conn.create_function("regexp", 2, self.regexp, deterministic=True)
        conn.create_function("instr", 2, self.instr, deterministic=True)
        conn.create_function("lower", 1, self.lower, deterministic=True)

    def regexp(self, pattern, value):
        self.values.append(value)
        self.matched.append(value)
        return bugsvc_regexp.sql_regexp(pattern, value)

    def instr(self, haystack, needle):
        self.values += [haystack, needle]
        if haystack is None or needle is None:
            return None
        if isinstance(haystack, bytes) or isinstance(needle, bytes):
            haystack, needle = bytes(haystack), bytes(needle)
        else:
            haystack, needle = str(haystack), str(needle)
        return haystack.find(needle) + 1

    def lower(self, value):
        self.values.append(value)
        if value is None or isinstance(value, bytes):
            return value
        # SQLite's lower() folds ASCII letters only.
        return "".join(c.lower() if c.isascii() else c for c in str(value))

    def saw(self, text):
        return any(text.lower() in (v.decode(errors="replace") if isinstance(v, bytes)
                                    else str(v)).lower() for v in self.values if v is not None)


class PostgresRecorder(Recorder):
    """The same on PostgreSQL: functions of the same names (lower, strpos,
    and the ~* operator) in a schema searched before pg_catalog on the
    test's connection, each reporting its values as a notice before
    calling the built-in one."""

    SETUP = (
        "CREATE SCHEMA IF NOT EXISTS recorder",
        "CREATE OR REPLACE FUNCTION recorder.lower(v text) RETURNS text LANGUAGE plpgsql AS"
        " $$ BEGIN RAISE NOTICE 'value %', v; RETURN pg_catalog.lower(v); END $$",
        "CREATE OR REPLACE FUNCTION recorder.strpos(h text, n text) RETURNS integer"
        " LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'value %', h; RAISE NOTICE 'value %', n;"
        " RETURN pg_catalog.strpos(h, n); END $$",
        "CREATE OR REPLACE FUNCTION recorder.regexp(v text, p text) RETURNS boolean"
        " LANGUAGE plpgsql AS $$ BEGIN RAISE NOTICE 'matched %', v;"
        " RETURN v OPERATOR(pg_catalog.~*) p; END $$",
        "DROP OPERATOR IF EXISTS recorder.~* (text, text)",
        "CREATE OPERATOR recorder.~* (LEFTARG = text, RIGHTARG = text,"
        " FUNCTION = recorder.regexp)",
        # After public, so that the connection's current schema stays the
        # installation's (where bugsvc looks its tables up), and before
        # pg_catalog, so that these are found before the built-in ones.
        "SET search_path = public, recorder, pg_catalog",
    )

    def __init__(self, conn):
        self.values = []
        self.matched = []
        for statement in self.SETUP:
            conn.raw.execute(statement)
        conn.raw.add_notice_handler(self.notice)

    def notice(self, diagnostic):
        kind, _, value = (diagnostic.message_primary or "").partition(" ")
        value = None if value == "<NULL>" else value
        if kind in ("value", "matched"):
            self.values.append(value)
        if kind == "matched":
            self.matched.append(value)


@pytest.fixture
def recorder(db):
    if db.dialect.name == "postgresql":
        return PostgresRecorder(db.connection())
    return Recorder(db.connection())


def chart(field, operator, value="zzz"):
    return {"f1": field, "o1": operator, "v1": value}


TEXT_SEARCHES = [
    *(chart("short_desc", operator) for operator in (
        "regexp", "notregexp", "substring", "casesubstring", "notsubstring", "anywords",
        "allwords", "nowords", "anywordssubstr", "allwordssubstr", "nowordssubstr", "equals",
        "notequals", "lessthan", "isempty")),
    {"summary": "zzz"},
    chart("status_whiteboard", "regexp"), {"whiteboard": "zzz"},
    chart("bug_file_loc", "substring"),
    chart("alias", "regexp"), chart("alias", "substring"),
    *(chart("longdesc", operator) for operator in (
        "regexp", "substring", "casesubstring", "anywords", "allwords", "anywordssubstr",
        "allwordssubstr")),
    {"longdesc": "zzz"}, chart("longdesc", "changedafter", "2000-01-01"),
    chart("content", "matches"), chart("content", "notmatches"),
    chart("comment_tag", "regexp"), chart("comment_tag", "substring"),
    chart("attachments.filename", "regexp"), chart("attachments.description", "substring"),
    chart("attach_data.thedata", "substring"), chart("attach_data.thedata", "regexp"),
    chart("tag", "regexp"), chart("tag", "substring"),
    chart("cf_notes", "regexp"), chart("cf_notes", "substring"),
    {"quicksearch": "zzz"}, {"quicksearch": "ALL zzz"}, {"quicksearch": "comment:zzz"},
    {"quicksearch": "#zzz"},
]


@pytest.mark.parametrize("who", [None, PAT, ADMIN])
@pytest.mark.parametrize("params", TEXT_SEARCHES)
def test_no_condition_reads_what_the_caller_may_not_see(services, world, recorder, who, params):
    for count_only in (False, True):
        services.call(bug_search.search, dict(params, count_only=count_only), as_user=who,
                      write=False)
    assert not recorder.saw(MARK)


def test_the_recorder_sees_what_the_caller_may_see(services, world, recorder):
    found = services.call(bug_search.search, chart("short_desc", "regexp", "summary$"),
                          as_user=STAFF, write=False)
    assert {bug["id"] for bug in found["bugs"]} == {world["grouped"], world["vault"]}
    assert recorder.saw(MARK)


@pytest.mark.parametrize("who", [None, PAT, ADMIN])
def test_a_hidden_bug_named_by_id_is_never_matched(services, world, recorder, who):
    """The timing attack of the security review: a pattern slow only when a
    guessed prefix matches, against one hidden bug's id."""
    for hidden in (world["grouped"], world["vault"]):
        params = {"id": hidden, "f1": "short_desc", "o1": "regexp", "v1": "^(?=q)(?=(.|.){0,5}z)"}
        assert services.call(bug_search.search, params, as_user=who, write=False) == {"bugs": []}
        assert services.call(bug_search.search, dict(params, count_only=1), as_user=who,
                             write=False) == {"bug_count": 0}
    assert recorder.matched == [] and not recorder.saw(MARK)


@pytest.mark.parametrize("field", ["dependson", "cf_related"])
def test_ids_of_hidden_bugs_are_never_matched(services, world, recorder, field):
    related = add_custom_field(services, "cf_related", BUG_ID)
    set_custom_value(services, world["visible"], related, str(world["grouped"]))
    for who in (None, PAT, ADMIN):
        found = services.call(bug_search.search, chart(field, "regexp", "."), as_user=who,
                              write=False)
        assert found == {"bugs": []}
    assert recorder.matched == []
    found = services.call(bug_search.search, chart(field, "regexp", "."), as_user=STAFF,
                          write=False)
    assert [bug["id"] for bug in found["bugs"]] == [world["visible"]]
    # The recorder does see the ids this caller may see (which of them the
    # search tried first, and stopped at, is the engine's choice).
    may_see = {str(world["grouped"]), str(world["vault"])}
    assert recorder.matched and set(map(str, recorder.matched)) <= may_see


# History search (item: changed* and chfield read the history as it is shown) ---------------

def add_activity(services, bug_id, who, when, field, removed, added, attachment_id=None,
                 comment_id=None):
    who_id = user_id(services, who)
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_activity (bug_id, who, changed_at, field, removed, added,"
                     " attachment_id, comment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                     (bug_id, who_id, when, field, removed, added, attachment_id, comment_id))


@pytest.fixture
def changes(services, world):
    """History of the visible bug: STAFF renamed its private attachment and made
    a comment private on 2026-03-01, added dependencies on the hidden bugs on
    2026-03-02; PAT changed the whiteboard on 2026-03-03."""
    visible = world["visible"]
    attachment = services.query("SELECT id FROM attachments WHERE bug_id = ? AND is_private = 1",
                                (visible,))[0][0]
    comment = services.query("SELECT id FROM comments WHERE bug_id = ? AND is_private = 1",
                             (visible,))[0][0]
    add_activity(services, visible, STAFF, "2026-03-01 10:00:00", "attachments.filename",
                 "old.log", "secretname.log", attachment_id=attachment)
    add_activity(services, visible, STAFF, "2026-03-01 10:00:00", "longdescs.isprivate", "0", "1",
                 comment_id=comment)
    add_activity(services, visible, STAFF, "2026-03-02 10:00:00", "depends_on", "",
                 f"{world['grouped']}, {world['vault']}")
    add_activity(services, visible, PAT, "2026-03-03 10:00:00", "whiteboard", "", "paper")
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE bugs SET last_change_time = '2026-03-05 10:00:00' WHERE id = ?",
                     (visible,))
    return world


HIDDEN_CHANGES = [
    chart("attachments.filename", "changedto", "secretname.log"),
    chart("attachments.filename", "changedfrom", "old.log"),
    chart("attachments.filename", "changedby", STAFF),
    chart("attachments.filename", "changedafter", "2026-02-28"),
    chart("longdescs.isprivate", "changedto", "1"),
    chart("longdescs.isprivate", "changedby", STAFF),
    chart("dependson", "changedto", "HIDDEN"),
    chart("dependson", "changedby", STAFF),
    chart("dependson", "changedafter", "2026-03-02"),
    chart("dependson", "changedbefore", "2026-03-02 12:00:00"),
    {"chfield": "attachments.filename", "chfieldfrom": "2026-03-01", "chfieldto": "2026-03-01"},
    {"chfield": "attachments.filename", "chfieldvalue": "secretname.log"},
    {"chfield": "dependson", "chfieldfrom": "2026-03-02", "chfieldto": "2026-03-02"},
    {"chfield": "dependson", "chfieldvalue": "HIDDEN"},
    {"chfield": ["dependson", "attachments.filename", "longdescs.isprivate"],
     "chfieldfrom": "2026-03-01", "chfieldto": "2026-03-02"},
    {"f1": "OP", "j1": "AND_G", "f2": "dependson", "o2": "changedby", "v2": STAFF,
     "f3": "dependson", "o3": "changedafter", "v3": "2026-03-01", "f4": "CP"},
]


def _with_ids(params, world):
    return {key: (value.replace("HIDDEN", str(world["grouped"])) if isinstance(value, str)
                  else value) for key, value in params.items()}


@pytest.mark.parametrize("params", HIDDEN_CHANGES)
def test_history_search_reads_only_the_history_the_caller_sees(services, changes, params):
    params = _with_ids(params, changes)
    for who in (None, PAT, ADMIN):
        assert services.call(bug_search.search, params, as_user=who, write=False) == {"bugs": []}
    found = services.call(bug_search.search, params, as_user=STAFF, write=False)
    assert [bug["id"] for bug in found["bugs"]] == [changes["visible"]]


def test_history_search_agrees_with_the_history_shown(services, changes):
    """What bug history shows PAT is exactly what PAT's history searches match."""
    shown = services.call(bug_service.history, {"ids": [changes["visible"]]}, as_user=PAT,
                          write=False)["bugs"][0]["history"]
    assert [(entry["who"], change["field_name"]) for entry in shown
            for change in entry["changes"]] == [(PAT, "whiteboard")]
    for params in (chart("status_whiteboard", "changedby", PAT),
                   chart("status_whiteboard", "changedto", "paper"),
                   {"chfield": "status_whiteboard", "chfieldfrom": "2026-03-03"}):
        found = services.call(bug_search.search, params, as_user=PAT, write=False)
        assert [bug["id"] for bug in found["bugs"]] == [changes["visible"]]


def test_a_dependency_change_naming_a_visible_bug_is_matched_by_that_bug(services, changes):
    other = add_bug(services, summary="A visible blocker")
    add_activity(services, changes["visible"], STAFF, "2026-03-04 10:00:00", "depends_on", "",
                 f"{other}, {changes['grouped']}")
    by_value = chart("dependson", "changedto", str(other))
    found = services.call(bug_search.search, by_value, as_user=PAT, write=False)
    assert [bug["id"] for bug in found["bugs"]] == [changes["visible"]]
    by_date = {"chfield": "dependson", "chfieldfrom": "2026-03-04"}
    found = services.call(bug_search.search, by_date, as_user=PAT, write=False)
    assert [bug["id"] for bug in found["bugs"]] == [changes["visible"]]


# Bug ID custom fields ---------------------------------------------------------------------

@pytest.fixture
def related(services, world, admin_key):
    """cf_related, a Bug ID field, created as an administrator does; the
    visible bug's value names the bug hidden by a group."""
    services.call(field_service.create, {"name": "cf_related", "display_name": "Related",
                                         "type": BUG_ID}, as_user=ADMIN)
    field_id = services.query("SELECT id FROM fields WHERE name = 'cf_related'")[0][0]
    set_custom_value(services, world["visible"], field_id, str(world["grouped"]))
    return world


@pytest.mark.parametrize("who", [None, PAT, ADMIN])
def test_a_bug_id_field_naming_a_hidden_bug_shows_nothing(services, related, who):
    bug = services.call(bug_service.get, {"ids": [related["visible"]]}, as_user=who,
                        write=False)["bugs"][0]
    assert bug["cf_related"] is None
    hidden = str(related["grouped"])
    for params in ({"cf_related": hidden}, chart("cf_related", "equals", hidden),
                   chart("cf_related", "isnotempty"), chart("cf_related", "greaterthan", "0"),
                   chart("cf_related", "regexp", "."), chart("cf_related", "changedto", hidden)):
        assert services.call(bug_search.search, params, as_user=who, write=False) == {"bugs": []}
    found = services.call(bug_search.search, chart("cf_related", "isempty"), as_user=who,
                          write=False)
    assert [b["id"] for b in found["bugs"]] == [related["visible"]]


def test_a_bug_id_field_naming_a_visible_bug_shows_it(services, related):
    bug = services.call(bug_service.get, {"ids": [related["visible"]]}, as_user=STAFF,
                        write=False)["bugs"][0]
    assert bug["cf_related"] == related["grouped"]
    found = services.call(bug_search.search, {"cf_related": str(related["grouped"])},
                          as_user=STAFF, write=False)
    assert [b["id"] for b in found["bugs"]] == [related["visible"]]


def test_bug_id_field_history_hides_hidden_bugs(services, related):
    add_activity(services, related["visible"], STAFF, "2026-03-05 10:00:00", "cf_related", "",
                 str(related["grouped"]))
    for who, shown in ((PAT, []), (STAFF, [("cf_related", "", str(related["grouped"]))])):
        history = services.call(bug_service.history, {"ids": [related["visible"]]}, as_user=who,
                                write=False)["bugs"][0]["history"]
        assert [(c["field_name"], c["removed"], c["added"]) for entry in history
                for c in entry["changes"] if c["field_name"] == "cf_related"] == shown


def test_owner_idle_time_counts_only_the_changes_the_caller_sees(services, world):
    attachment = services.query("SELECT id FROM attachments WHERE bug_id = ? AND is_private = 1",
                                (world["visible"],))[0][0]
    add_activity(services, world["visible"], ADMIN, "2026-03-01 10:00:00",
                 "attachments.description", "a", "b", attachment_id=attachment)
    now = datetime(2026, 3, 10, 12, 0, tzinfo=timezone.utc)
    idle = chart("owner_idle_time", "lessthan", "30")
    for who, expected in ((PAT, []), (ADMIN, []), (STAFF, [world["visible"]])):
        found = services.call(bug_search.search, idle, as_user=who, now=now, write=False)
        assert [bug["id"] for bug in found["bugs"]] == expected


def test_updating_a_bug_id_field_never_names_the_hidden_bug(services, related):
    visible, hidden = related["visible"], related["grouped"]
    stored = "SELECT value FROM bug_custom_values WHERE bug_id = ?"
    answer = services.call(bug_service.update, {"ids": [visible], "cf_related": ""},
                           as_user=ADMIN)
    assert answer["bugs"][0]["changes"] == {}
    assert services.query(stored, (visible,)) == [(str(hidden),)]
    other = add_bug(services, summary="Another visible bug")
    answer = services.call(bug_service.update, {"ids": [visible], "cf_related": other},
                           as_user=ADMIN)
    assert answer["bugs"][0]["changes"] == {"cf_related": {"removed": "", "added": str(other)}}
    assert services.query(stored, (visible,)) == [(str(other),)]


@pytest.mark.parametrize("who", [None, PAT, STAFF])
def test_each_bug_of_a_page_is_shown_as_its_own_read_shows_it(services, world, who):
    """A page of bugs has their lists read for all of them at once (one
    statement per list on SQLite): each bug of a search's answer is the
    object its own read gives, hidden bugs left out of its dependencies,
    duplicates and Bug ID field alike, for each caller."""
    link = add_custom_field(services, "cf_link", BUG_ID)
    neighbours = [add_bug(services, summary=f"Neighbour {n}", cc=[PAT, STAFF], aliases=[f"n{n}"])
                  for n in range(3)]
    add_dependency(services, world["grouped"], neighbours[0])
    add_dependency(services, neighbours[1], world["visible"])
    dupes = {name: add_bug(services, summary=f"{name} duplicate", status="RESOLVED",
                           resolution="DUPLICATE", dupe_of=neighbours[2], groups=groups)
             for name, groups in (("hidden", ["staff"]), ("open", []))}
    set_custom_value(services, neighbours[0], link, str(world["grouped"]))
    set_custom_value(services, neighbours[1], link, str(world["visible"]))
    shown = {"id": ",".join(map(str, [world["visible"], *neighbours])),
             "include_fields": "_default,duplicates"}
    found = services.call(bug_search.search, shown, as_user=who, write=False)["bugs"]
    assert [bug["id"] for bug in found] == [world["visible"], *neighbours]
    for bug in found:
        alone = services.call(bug_service.get, {"ids": [bug["id"]],
                                                "include_fields": "_default,duplicates"},
                              as_user=who, write=False)["bugs"][0]
        alone.pop("update_token", None)
        assert bug == alone
    by_id = {bug["id"]: bug for bug in found}
    sees = who == STAFF
    assert by_id[world["visible"]]["depends_on"] == (
        sorted([world["grouped"], world["vault"]]) if sees else [])
    assert by_id[neighbours[0]]["blocks"] == ([world["grouped"]] if sees else [])
    assert by_id[neighbours[0]]["cf_link"] == (world["grouped"] if sees else None)
    assert by_id[neighbours[1]]["depends_on"] == [world["visible"]]
    assert by_id[neighbours[1]]["cf_link"] == world["visible"]
    assert by_id[neighbours[2]]["duplicates"] == (
        sorted(dupes.values()) if sees else [dupes["open"]])
    assert [bug["alias"] for bug in found[1:]] == [["n0"], ["n1"], ["n2"]]
    assert MARK not in repr(found) or sees
