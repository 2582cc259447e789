"""Bug objects kept by a serving process (bugs/object_cache.py): a search
made anew takes the objects of the bugs unchanged since they were made;
after every kind of change (through the API, or written straight into the
tables) the changed bug's object is made anew, and the answer is the one
made without kept objects; no caller is ever given what another may not
see (anonymous, plain accounts, a member of a bug's group, an insider, a
time tracker), through any way in. Both engines keep objects, by each
bug's revision (schema.sql's bug revisions)."""

import gc
import tracemalloc
from contextlib import contextmanager

import orjson
import pytest

from bug_changes import (
    CALLERS,
    CHANGES,
    MEMBER,
    PAM,
    PAT,
    SEARCH,
    TIMER,
    change_is_seen,
    sql_change,
)
from bug_rows import ADMIN, add_bug, set_param
from bug_support import traced
from bugsvc.bugs import answer_cache, object_cache, view
from bugsvc.bugs.answer_cache import AnswerCache
from bugsvc.bugs.seen_at import SeenAtGeneration
from bugsvc.services import bug as bug_service, bug_search
from bugsvc.store import schema
from bugsvc.store.location import open_database
from migration_support import migrated_from
from rpc_support import xmlrpc_call


@pytest.fixture
def world(callers_world):
    """bug_changes' world: {name: bug id} of the four bugs."""
    return callers_world


@pytest.fixture(autouse=True)
def no_kept_answers(monkeypatch):
    """Every search is made anew (no answer kept: answer_cache.py), so its
    objects come from the kept ones or are made."""
    monkeypatch.setattr(answer_cache, "KEPT_PARAMS", frozenset())


@pytest.fixture
def made(monkeypatch):
    """The ids of the bugs whose objects were made (view._made), a list per
    call."""
    calls = []
    real = view._made

    def counting(ctx, ids, *args, **kwargs):
        calls.append(list(ids))
        return real(ctx, ids, *args, **kwargs)
    monkeypatch.setattr(view, "_made", counting)
    return calls


def search(services, who, params=SEARCH):
    return services.call(bug_search.search, dict(params), as_user=who)


@contextmanager
def objects_made_anew():
    """Within it, every bug object is made anew (none kept, none taken)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(object_cache, "applies", lambda *args: False)
        yield


def without_kept_objects(services, who, params=SEARCH):
    """The answer made with no object kept."""
    with objects_made_anew():
        return search(services, who, params)


def test_objects_of_unchanged_bugs_are_not_made_again(services, world, made):
    first = search(services, PAT)
    assert made == [sorted([world["open"], world["other"], world["reported"]])]
    assert search(services, PAT) == first == without_kept_objects(services, PAT)
    assert len(made) == 2                           # only the one without kept objects


def test_a_change_to_one_bug_makes_only_its_object_anew(services, world, made):
    search(services, ADMIN)
    services.call(bug_service.update, {"ids": [world["other"]], "priority": "High"},
                  as_user=ADMIN)
    made.clear()
    answer = search(services, ADMIN)
    assert made == [[world["other"]]]
    assert answer == without_kept_objects(services, ADMIN)
    assert [bug["priority"] for bug in answer["bugs"] if bug["id"] == world["other"]] == ["High"]


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_after_each_kind_of_change_the_answer_is_made_anew(services, world, change):
    change_is_seen(services, world, change, search, without_kept_objects)


def with_dependency_on_staff(services, world):
    """The open bug depends on the staff bug and blocks the other one."""
    sql_change("INSERT INTO dependencies (blocked, depends_on) VALUES ({open}, {staff})",
               "INSERT INTO dependencies (blocked, depends_on) VALUES ({other}, {open})")(
        services, world)


def test_no_caller_is_given_what_another_may_see(services, world):
    with_dependency_on_staff(services, world)
    fresh = {who: without_kept_objects(services, who) for who in CALLERS}
    for order in (CALLERS, tuple(reversed(CALLERS))):
        for who in order:
            assert search(services, who) == fresh[who], who

    def bug(who, name):
        return next(bug for bug in fresh[who]["bugs"] if bug["id"] == world[name])
    assert bug(MEMBER, "open")["depends_on"] == [world["staff"]]
    assert bug(PAM, "open")["depends_on"] == bug(None, "open")["depends_on"] == []
    assert bug(PAM, "open")["blocks"] == [world["other"]]
    assert "estimated_time" in bug(TIMER, "open") and "estimated_time" not in bug(PAT, "open")


@pytest.mark.engine("postgresql")
def test_revisions_and_whether_the_caller_sees_the_bugs_named_are_read_together(
        services, world, db):
    """PostgreSQL: a search answered from kept objects reads their bugs'
    revisions and whether the caller may see the bugs they name in one
    statement (one round trip), and still leaves out those it may not.
    (SQLite runs the two apart: no round trip to save, and a little faster.)"""
    with_dependency_on_staff(services, world)
    first = search(services, PAT)
    # A new snapshot: what was read at the last one is not taken (seen_at.py).
    sql_change("UPDATE bugs SET priority = priority WHERE id = {reported}")(services, world)
    again, statements = traced(db, lambda: search(services, PAT))
    assert again == first == without_kept_objects(services, PAT)
    assert [bug["depends_on"] for bug in again["bugs"] if bug["id"] == world["open"]] == [[]]
    assert len([text for text in statements if "bug_revisions" in text]) == 1
    assert not [text for text in statements if text.startswith("SELECT b.id FROM bugs b WHERE")
                and "bug_revisions" not in text and "ORDER BY" not in text]


@pytest.mark.engine("sqlite")
def test_a_search_while_no_bug_changed_takes_what_was_read_at_that_generation(
        services, world, db, made):
    """SQLite: while the bug generation stands, a search's objects, their
    revisions and which named bugs the caller may see are taken as found
    (no statement reads them again); the first change to any bug makes
    them read again, and the answer is the one made anew each time."""
    with_dependency_on_staff(services, world)
    first = search(services, PAT)
    again, statements = traced(db, lambda: search(services, PAT))
    assert again == first == without_kept_objects(services, PAT)
    assert [text for text in statements if "bug_revisions" in text] == []
    assert [text for text in statements if "bug_groups" in text and "ORDER BY" not in text] == []
    sql_change("UPDATE bugs SET summary = 'Renamed by hand' WHERE id = {other}")(
        services, world)
    made.clear()
    after, statements = traced(db, lambda: search(services, PAT))
    assert made == [[world["other"]]]
    assert [text for text in statements if "bug_revisions" in text] != []
    assert after == without_kept_objects(services, PAT)
    assert "Renamed by hand" in [bug["summary"] for bug in after["bugs"]]


def test_a_membership_given_or_taken_shows_or_hides_named_bugs_at_once(services, world):
    """Which named bugs a caller sees follows its groups at once, though no
    bug changed (a membership moves no bug's revision nor the bug
    generation)."""
    with_dependency_on_staff(services, world)

    def depends_on(answer):
        return [bug["depends_on"] for bug in answer["bugs"] if bug["id"] == world["open"]]
    assert depends_on(search(services, PAM)) == [[]]
    sql_change("INSERT INTO user_groups (user_id, group_id) SELECT {pam}, id FROM groups"
               " WHERE name = 'staff'")(services, world)
    given = search(services, PAM)
    assert depends_on(given) == [[world["staff"]]]
    assert given == without_kept_objects(services, PAM)
    assert depends_on(search(services, PAT)) == [[]]
    sql_change("DELETE FROM user_groups WHERE user_id = {pam}")(services, world)
    taken = search(services, PAM)
    assert depends_on(taken) == [[]]
    assert taken == without_kept_objects(services, PAM)


def test_a_bug_named_in_a_list_hidden_later_is_left_out_at_once(services, world):
    sql_change("INSERT INTO dependencies (blocked, depends_on) VALUES ({open}, {other})")(
        services, world)
    before = search(services, PAT)
    assert [bug["depends_on"] for bug in before["bugs"] if bug["id"] == world["open"]] == [
        [world["other"]]]
    # Only the other bug changes (the open one's revision stands).
    sql_change("INSERT INTO bug_groups (bug_id, group_id) SELECT {other}, id FROM groups"
               " WHERE name = 'staff'")(services, world)
    after = search(services, PAT)
    assert [bug["id"] for bug in after["bugs"]] == [world["open"], world["reported"]]
    assert after["bugs"][0]["depends_on"] == []
    assert after == without_kept_objects(services, PAT)


def test_addresses_without_domains_are_kept_apart(services, world):
    set_param(services, "webservice_email_filter", "1")
    signed_in = search(services, PAT)
    anonymous = search(services, None)
    assert anonymous == without_kept_objects(services, None)
    assert signed_in == without_kept_objects(services, PAT)
    assert "@" in signed_in["bugs"][0]["creator"] and "@" not in anonymous["bugs"][0]["creator"]
    assert search(services, PAT) == signed_in


@pytest.mark.parametrize("params", [
    dict(SEARCH, include_fields="id,summary,depends_on"), dict(SEARCH, include_fields="_all"),
    dict(SEARCH, include_fields="tags")])
def test_a_field_choice_makes_its_objects_anew(services, world, made, params):
    assert search(services, MEMBER, params) == search(services, MEMBER, params)
    assert len(made) == 2


def get(services, who, *names_or_ids, world=None):
    """Bug.get of bugs named in `world` (or ids), as `who`."""
    ids = [world[name] if world else name for name in names_or_ids]
    return services.call(bug_service.get, {"ids": ids, "permissive": True}, as_user=who)


def get_without_kept_objects(services, who, *names, world=None):
    with objects_made_anew():
        return get(services, who, *names, world=world)


def test_bug_get_takes_kept_objects_with_the_callers_own_update_token(services, world, made):
    first = get(services, PAT, "open", "other", world=world)
    assert made == [[world["open"], world["other"]]]
    again = get(services, PAT, "open", "other", world=world)
    assert len(made) == 1 and again == first
    assert first == get_without_kept_objects(services, PAT, "open", "other", world=world)
    tokens = [bug["update_token"] for bug in first["bugs"]]
    assert all(tokens) and len(set(tokens)) == 2
    others = get(services, PAM, "open", "other", world=world)
    assert [bug["update_token"] for bug in others["bugs"]] != tokens
    assert others == get_without_kept_objects(services, PAM, "open", "other", world=world)
    anonymous = get(services, None, "open", world=world)
    assert "update_token" not in anonymous["bugs"][0]
    assert anonymous == get_without_kept_objects(services, None, "open", world=world)


def test_a_change_within_the_same_second_changes_the_update_token(services, world, made):
    """The update token is made from the bug's revision as well as its last
    change time: a change that leaves the last change time as it was (here
    one written by hand) still gives the bug a new token, and a new object."""
    before = get(services, PAT, "open", world=world)
    sql_change("UPDATE bugs SET summary = 'Renamed by hand' WHERE id = {open}")(services, world)
    after = get(services, PAT, "open", world=world)
    assert len(made) == 2
    assert after["bugs"][0]["last_change_time"] == before["bugs"][0]["last_change_time"]
    assert after["bugs"][0]["update_token"] != before["bugs"][0]["update_token"]
    assert after == get_without_kept_objects(services, PAT, "open", world=world)


@pytest.mark.engine("postgresql")
def test_bug_get_of_kept_objects_costs_postgresql_no_transaction(services, world, client, made,
                                                                 begins_sent):
    """GET bug with an API key answered from kept objects reads the
    revisions (with the bugs' visibility) ahead of its read transaction's
    BEGIN: the server gets no BEGIN and no COMMIT for it. A bug changed
    since is made by one statement ahead of it too, its revision read
    again with it; a bug the caller may not see is refused all the same."""
    headers = {"X-BUGZILLA-API-KEY": services.api_key(PAT)}
    path = f"/rest/bug/{world['open']}"
    first = client.simulate_get(path, headers=headers).json
    assert made == [[world["open"]]] and begins_sent
    begins_sent.clear()
    assert client.simulate_get(path, headers=headers).json == first
    assert len(made) == 1 and begins_sent == []
    services.call(bug_service.update, {"ids": [world["open"]], "summary": "Renamed"},
                  as_user=ADMIN)
    begins_sent.clear()
    after = client.simulate_get(path, headers=headers).json
    assert made[1:] == [[world["open"]]] and begins_sent == []
    assert after["bugs"][0]["summary"] == "Renamed"
    assert after["bugs"] == get_without_kept_objects(services, PAT, "open", world=world)["bugs"]
    get(services, MEMBER, "staff", world=world)                 # kept for a member
    denied = client.simulate_get(f"/rest/bug/{world['staff']}", headers=headers)
    assert denied.status_code == 401 and denied.json["code"] == 102


@pytest.mark.engine("postgresql")
@pytest.mark.parametrize("who", [PAT, MEMBER, PAM])
def test_bug_get_of_a_bug_with_no_object_kept_is_one_statement(services, world, client, made,
                                                               begins_sent, db, who):
    """PostgreSQL: GET bug with an API key, of a bug whose object the
    process does not keep, makes it from one statement run ahead of the
    read transaction (no BEGIN, no COMMIT): the bug with its revision and
    last change time, whether the caller may see the bugs it names, the
    generations (the bug generation counting bug_writes). The answer is the one made without kept
    objects (a bug it depends on the caller may not see left out); the next
    call reads nothing of the bug; a bug the caller may not see is refused."""
    with_dependency_on_staff(services, world)
    # If-None-Match: served by the Runner each time, not from the answers
    # kept by request (web/rest/kept_responses.py).
    headers = {"X-BUGZILLA-API-KEY": services.api_key(who), "If-None-Match": '"none"'}
    # The key resolved and the generations seen, with another bug.
    assert client.simulate_get(f"/rest/bug/{world['other']}", headers=headers).status_code == 200
    made.clear()
    begins_sent.clear()
    path = f"/rest/bug/{world['open']}"
    first, statements = traced(db, lambda: client.simulate_get(path, headers=headers))
    assert made == [[world["open"]]] and begins_sent == []
    assert len(statements) == 1
    assert all(name in statements[0] for name in (
        "bug_revisions", "catalog_generation", "credential_generation", "bug_writes"))
    bug = first.json["bugs"][0]
    assert first.json["bugs"] == get_without_kept_objects(services, who, "open", world=world)[
        "bugs"]
    assert bug["depends_on"] == ([world["staff"]] if who == MEMBER else [])
    assert bug["blocks"] == [world["other"]] and bug["update_token"]
    made.clear()
    again, statements = traced(db, lambda: client.simulate_get(path, headers=headers))
    assert again.json == first.json and made == []
    assert len(statements) == 1 and "bug_revisions" not in statements[0]
    denied = client.simulate_get(f"/rest/bug/{world['staff']}", headers=headers)
    if who == MEMBER:
        assert denied.json["bugs"][0]["id"] == world["staff"]
    else:
        assert (denied.status_code, denied.json["code"]) == (401, 102)
    # No bug at all: said so to a caller who sees every bug (the member of
    # the one group restricting bugs), refused as hidden to the others
    # (lookup.py).
    missing = client.simulate_get("/rest/bug/999999", headers=headers)
    assert (missing.status_code, missing.json["code"]) == (
        (404, 101) if who == MEMBER else (401, 102))


def test_bug_get_never_gives_a_kept_object_to_a_caller_who_may_not_see_it(services, world):
    seen = get(services, MEMBER, "staff", world=world)
    assert [bug["id"] for bug in seen["bugs"]] == [world["staff"]]
    for who in (None, PAM):
        denied = get(services, who, "staff", world=world)
        assert denied["bugs"] == [] and [fault["id"] for fault in denied["faults"]] == [
            world["staff"]]
        assert denied == get_without_kept_objects(services, who, "staff", world=world)
    assert get(services, PAT, "reported", world=world)["bugs"][0]["id"] == world["reported"]


@pytest.mark.parametrize("who", [PAM, MEMBER])
def test_bug_get_of_bugs_not_kept_one_of_them_hidden_gives_the_others_and_its_fault(
        services, world, client, made, backend, who):
    """Several bugs none of which has an object kept, one of them hidden
    from a caller (on PostgreSQL made by one statement in the transaction,
    which reads only those the caller may see): the others' objects and
    the hidden one's fault, as made anew."""
    with_dependency_on_staff(services, world)
    headers = {"X-BUGZILLA-API-KEY": services.api_key(who)}
    names = ("open", "staff", "other")
    asked = [world[name] for name in names]
    # Bug.get of several bugs (the first in the path, as python-bugzilla asks).
    path = f"/rest/bug/{asked[0]}?permissive=1&" + "&".join(f"ids={bug_id}"
                                                            for bug_id in asked[1:])
    # The key resolved and the generations seen, with a bug that is none.
    assert client.simulate_get("/rest/bug/999999?permissive=1", headers=headers).json[
        "bugs"] == []
    made.clear()
    answer = client.simulate_get(path, headers=headers).json
    # PostgreSQL reads all three with the objects; SQLite reads the stamps
    # of those the caller may see first.
    assert made[0] == (asked if backend == "postgresql" else
                       [bug["id"] for bug in answer["bugs"]])
    made_anew = get_without_kept_objects(services, who, *names, world=world)
    assert answer["bugs"] == made_anew["bugs"]
    # (A fault names the bug as asked: from the query, its text.)
    assert [str(fault["id"]) for fault in answer["faults"]] == [
        str(fault["id"]) for fault in made_anew["faults"]]
    assert client.simulate_get(path, headers=headers).json == answer
    shown = [bug["id"] for bug in answer["bugs"]]
    if who == MEMBER:
        assert shown == asked and answer["faults"] == []
        assert answer["bugs"][0]["depends_on"] == [world["staff"]]
    else:
        assert shown == [world["open"], world["other"]]
        assert [fault["id"] for fault in answer["faults"]] == [str(world["staff"])]
        assert answer["bugs"][0]["depends_on"] == []


def test_bug_get_follows_a_membership_or_a_restriction_at_once(services, world):
    """Whether a caller may see a bug follows its groups and the bug's at
    once, whatever was read before (a membership moves no bug's revision
    nor the bug generation; a restriction moves both)."""
    def ids(who, name):
        return [bug["id"] for bug in get(services, who, name, world=world)["bugs"]]
    assert ids(PAM, "staff") == []
    sql_change("INSERT INTO user_groups (user_id, group_id) SELECT {pam}, id FROM groups"
               " WHERE name = 'staff'")(services, world)
    assert ids(PAM, "staff") == [world["staff"]]
    assert get(services, PAM, "staff", world=world) == get_without_kept_objects(
        services, PAM, "staff", world=world)
    sql_change("DELETE FROM user_groups WHERE user_id = {pam}")(services, world)
    assert ids(PAM, "staff") == []
    assert ids(PAT, "other") == [world["other"]]
    sql_change("INSERT INTO bug_groups (bug_id, group_id) SELECT {other}, id FROM groups"
               " WHERE name = 'staff'")(services, world)
    assert ids(PAT, "other") == []
    assert ids(PAM, "other") == ids(MEMBER, "other") == [world["other"]]    # its QA contact


@pytest.mark.engine("sqlite")
def test_bug_get_while_no_bug_changed_reads_nothing_of_the_bug(services, world, db):
    """SQLite: a bug asked for again while the bug generation stands is
    answered from what was read at that generation (its stamp, the
    caller's sight of it, the caller's token): no statement reads the bug;
    a change made by hand is seen by the next call, with a new token."""
    first = get(services, PAT, "open", world=world)
    again, statements = traced(db, lambda: get(services, PAT, "open", world=world))
    assert again == first == get_without_kept_objects(services, PAT, "open", world=world)
    assert [text for text in statements if "FROM bugs" in text or "bug_revisions" in text] == []
    sql_change("UPDATE bugs SET summary = 'Renamed by hand' WHERE id = {open}")(services, world)
    after = get(services, PAT, "open", world=world)
    assert after["bugs"][0]["summary"] == "Renamed by hand"
    assert after["bugs"][0]["update_token"] != first["bugs"][0]["update_token"]
    assert after == get_without_kept_objects(services, PAT, "open", world=world)


@pytest.mark.parametrize("accept, callback", [
    (None, None), ("application/json", None), ("text/html", None), (None, "show")])
def test_kept_objects_are_written_out_as_those_made_anew(services, world, client,
                                                         accept, callback):
    """Over REST, an answer made of kept objects (a search, GET bug) is the
    same bytes as the answer made without them, for each caller, in each
    form REST writes."""
    with_dependency_on_staff(services, world)
    for who in CALLERS:
        headers = {"X-BUGZILLA-API-KEY": services.api_key(who)} if who else {}
        if accept:
            headers["Accept"] = accept
        query = dict(SEARCH, **({"callback": callback} if callback else {}))
        for path in ("/rest/bug", f"/rest/bug/{world['open']}"):
            with objects_made_anew():
                anew = client.simulate_get(path, params=query, headers=headers)
            answers = [client.simulate_get(path, params=query, headers=headers)
                       for _ in range(3)]
            assert anew.status_code == 200 and b"Open to all" in anew.content
            assert [answer.content for answer in answers] == [anew.content] * 3, (who, path)


def test_no_way_in_changes_a_kept_object(services, world, client):
    key = services.api_key(MEMBER)
    with_dependency_on_staff(services, world)
    fresh = without_kept_objects(services, MEMBER)
    for _ in range(2):
        answer, fault = xmlrpc_call(client, "Bug.search", dict(SEARCH, Bugzilla_api_key=key))
        assert fault is None and [bug["id"] for bug in answer["bugs"]] == [
            bug["id"] for bug in fresh["bugs"]]
        body = {"method": "Bug.search", "params": [dict(SEARCH, Bugzilla_api_key=key)],
                "id": 1}
        answer = client.simulate_post("/jsonrpc.cgi", json=body).json
        assert answer["result"] == fresh
        answer["result"]["bugs"][0]["depends_on"].append(1)
    assert search(services, MEMBER) == fresh


def test_a_write_still_running_leaves_the_object_kept_and_its_commit_drops_it(
        services, world, made):
    before = search(services, PAT)
    with services.db.separate_transaction(write=True) as conn:
        conn.execute("UPDATE bugs SET summary = 'Renamed meanwhile' WHERE id = ?",
                     (world["other"],))
        assert search(services, PAT) == before
    made.clear()
    after = search(services, PAT)
    assert made == [[world["other"]]]
    assert "Renamed meanwhile" in [bug["summary"] for bug in after["bugs"]]


def test_an_object_is_kept_as_its_json_text_counted_at_the_memory_it_takes(services, world):
    """The bound counts each object's text and ENTRY_BYTES, no less than the
    memory the kept objects take (tracemalloc, objects kept by real
    searches)."""
    for number in range(120):
        add_bug(services, summary=f"Many {number}", cc=[PAT, PAM], keywords=["crash"])
    kept = AnswerCache(max_entries=10000, max_bytes=1 << 30)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(object_cache, "_new_cache", lambda conn: kept)
        # What is read at a bug generation (the stamps it holds are made
        # here too) is counted apart: tests/bugs/test_seen_at.py.
        patch.setattr(object_cache, "_new_seen", lambda conn: SeenAtGeneration(max_bytes=-1))
        search(services, PAM, dict(SEARCH, limit=10))
        # What object_cache.py allocated, itself or through what it calls
        # (AnswerCache's entries, the texts): not the searches' own kept
        # answers and statements, AnswerCaches and keys too.
        tracemalloc.start(32)
        try:
            for offset in range(10, 120, 10):
                search(services, PAM, dict(SEARCH, limit=10, offset=offset))
            gc.collect()
            held = tracemalloc.take_snapshot().filter_traces(
                [tracemalloc.Filter(True, object_cache.__file__, all_frames=True)])
        finally:
            tracemalloc.stop()
    assert len(kept) >= 120
    taken = sum(stat.size for stat in held.statistics("filename"))
    later = list(kept._entries.values())[10:]
    assert sum(len(text) for _, (text, _), _ in later) < taken
    assert taken <= sum(size for _, _, size in later)


def test_a_database_from_before_bug_revisions_moves_forward(services, world, db, db_path):
    """A version 30 database gets the bugs' revisions (every bug at 0) and
    the triggers that move them."""
    sections = (schema.schema_section("bug revisions")
                + schema.schema_section("catalog generation of bug object names"))
    triggers = [line.split()[2] for line in sections.splitlines()
                if line.startswith("CREATE TRIGGER")]

    def undo(conn):
        for name in triggers:
            on = "" if conn.dialect.name == "sqlite" else f" ON {_table_of(name)}"
            conn.execute(f"DROP TRIGGER {name}{on}")
        conn.execute("DROP TABLE bug_revisions")
    with migrated_from(db, db_path, 30, undo) as conn:
        assert conn.execute("SELECT COUNT(*) FROM bug_revisions").fetchone()[0] == 0
    reopened = open_database(db_path)
    try:
        with reopened.transaction(write=True) as conn:
            conn.execute("UPDATE bugs SET summary = 'After the move' WHERE id = ?",
                         (world["open"],))
            conn.execute("UPDATE keywords SET name = 'boom' WHERE name = 'crash'")
        with reopened.transaction() as conn:
            rows = conn.execute("SELECT bug_id, revision FROM bug_revisions").fetchall()
            assert [tuple(row) for row in rows] == [(world["open"], 1)]
    finally:
        reopened.close()


def _table_of(trigger):
    """The table a trigger of the bug revisions section is on."""
    for table in ("bug_custom_values", "bug_see_also", "bug_keywords", "bug_aliases",
                  "bug_groups", "bug_cc", "dependencies", "comments", "flag_types", "flags",
                  "keywords", "bugs"):
        if trigger.startswith(table + "_"):
            return table
    raise AssertionError(trigger)


def test_answers_are_the_same_objects_as_json():
    """orjson writes a kept object's text as the object it was made of."""
    obj = {"id": 1, "depends_on": [2], "summary": "é"}
    assert orjson.dumps([orjson.Fragment(orjson.dumps(obj))]) == orjson.dumps([obj])
