"""Bug search, GET /rest/bug: simple parameters,
operators, custom search, boolean charts, email/chfield/deadline forms,
order/limit/offset/count_only, errors, and that hidden bugs never leak."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from bug_rows import (
    ADMIN,
    add_custom_field,
    add_flag,
    add_history,
    add_personal_tag,
    search_world,
    set_custom_value,
    set_param,
)
from bug_support import traced
from bugsvc.bugs import search_sql
from bugsvc.errors import ServiceError
from bugsvc.services import bug_search, last_visit
from conftest import world_fixture


ALICE, BOB, CAROL, DAVE, EVE, INSIDER = ("alice@example.com", "bob@example.com",
                                         "carol@example.com", "dave@example.com",
                                         "eve@example.com", "insider@example.com")


@world_fixture
def bugs(services):
    return search_world(services)


@pytest.fixture
def find(services, bugs):
    """Runs a search; returns the names of the bugs found, in answer order."""
    names = {bug_id: name for name, bug_id in bugs.items()}

    def run(params, as_user=None):
        result = services.call(bug_search.search, params, as_user=as_user, write=False)
        return [names.get(bug["id"], bug["id"]) for bug in result["bugs"]]
    return run


def error_code(services, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(bug_search.search, params, as_user=as_user, write=False)
    return caught.value.code


PUBLIC = ["crash", "button", "printing", "dupe", "verified"]


# Simple parameters ------------------------------------------------------------------

@pytest.mark.parametrize("params, expected", [
    ({}, PUBLIC),
    ({"product": "Gadget"}, ["button", "dupe"]),
    ({"product": "gadget"}, ["button", "dupe"]),
    ({"product": ["Gadget", "TestProduct"]}, PUBLIC),
    ({"component": "Widgets"}, ["button", "dupe"]),
    ({"classification": "Unclassified"}, PUBLIC),
    ({"status": "UNCONFIRMED"}, ["printing"]),
    ({"status": ["CONFIRMED", "unconfirmed"]}, ["crash", "printing"]),
    ({"bug_status": "__open__"}, ["crash", "printing"]),
    ({"status": "__closed__"}, ["button", "dupe", "verified"]),
    ({"status": ["__all__", "CONFIRMED"]}, PUBLIC),
    ({"resolution": "---"}, ["crash", "printing"]),
    ({"resolution": ["FIXED", "WONTFIX"]}, ["button", "verified"]),
    ({"priority": "High"}, ["crash"]),
    ({"severity": "minor"}, ["button"]),
    ({"bug_severity": "critical"}, ["crash"]),
    ({"platform": "Macintosh"}, ["button"]),
    ({"op_sys": "Linux"}, ["crash"]),
    ({"version": "unspecified", "product": "Gadget"}, ["button", "dupe"]),
    ({"target_milestone": "---", "status": "UNCONFIRMED"}, ["printing"]),
    ({"alias": "ffcrash"}, ["crash"]),
    ({"alias": "FFCRASH"}, ["crash"]),
    ({"alias": "ffc"}, []),
    ({"summary": "crash"}, ["crash", "printing"]),
    ({"summary": "printing crash"}, ["printing"]),
    ({"summary": "crash,printing"}, ["printing"]),
    ({"short_desc": "button", "short_desc_type": "substring"}, ["button", "dupe"]),
    ({"short_desc": "Tiny button", "short_desc_type": "equals"}, ["dupe"]),
    ({"whiteboard": "needs-test"}, ["crash"]),
    ({"status_whiteboard": "triaged [needs"}, ["crash"]),
    ({"url": "example.com"}, ["crash"]),
    ({"bug_file_loc": "example.com", "bug_file_loc_type": "notsubstring"},
     ["button", "printing", "dupe", "verified"]),
    ({"keywords": "crash"}, ["crash", "printing"]),
    ({"keywords": "crash regression"}, ["crash"]),
    ({"keywords": "crash, perf", "keywords_type": "anywords"}, ["crash", "button", "printing"]),
    ({"keywords": "crash", "keywords_type": "nowords"}, ["button", "dupe", "verified"]),
    ({"keywords": "cras"}, []),
    ({"assigned_to": "bob"}, ["crash", "printing"]),
    ({"assigned_to": ["alice", "eve@"]}, ["button", "verified"]),
    ({"creator": "dave"}, ["printing"]),
    ({"reporter": "eve"}, ["dupe", "verified"]),
    ({"qa_contact": "carol"}, ["crash"]),
    ({"cc": "dave"}, ["crash"]),
    ({"cc": ["DAVE@example.com", "nobody"], "cc_type": "anyexact"}, ["crash"]),
    ({"longdesc": "nsFoo", "longdesc_type": "casesubstring"}, ["crash"]),
    ({"longdesc": "nsfoo", "longdesc_type": "casesubstring"}, []),
    ({"longdesc": "stack tiny"}, ["crash", "button"]),
    ({"id": "BUG:printing,BUG:crash"}, ["crash", "printing"]),
    ({"bug_id": ["BUG:button"]}, ["button"]),
    ({"id": "BUG:secret"}, []),
    ({"id": "nonsense"}, []),
    ({"creation_time": "2026-02-01"}, ["printing", "dupe"]),
    ({"creation_time": "2026-02-01T10:00:01Z"}, ["dupe"]),
    ({"last_change_time": "2026-02-01 10:00:00"}, ["button", "printing", "dupe"]),
    ({"everconfirmed": "1", "status": "__closed__"}, ["button", "dupe", "verified"]),
    ({"product": "NoSuchProduct"}, []),
    ({"query_format": "advanced", "savedsearch": "x", "unknown_param": "1", "priority": "Low"},
     ["button"]),
])
def test_simple_parameters(services, bugs, params, expected, find):
    params = {k: _bug_refs(v, bugs) for k, v in params.items()}
    assert find(params) == [name for name in PUBLIC if name in expected]


def _bug_refs(value, bugs):
    if isinstance(value, list):
        return [_bug_refs(v, bugs) for v in value]
    if isinstance(value, str) and "BUG:" in value:
        for name, bug_id in bugs.items():
            value = value.replace(f"BUG:{name}", str(bug_id))
    return value


def test_dependencies_and_duplicates(services, bugs, find):
    assert find({"depends_on": bugs["crash"]}) == ["printing"]
    assert find({"blocks": bugs["printing"]}) == ["crash"]


def test_personal_tags_are_the_callers_own(services, bugs, find):
    add_personal_tag(services, ALICE, "mine", bugs["crash"], bugs["button"])
    add_personal_tag(services, BOB, "mine", bugs["printing"])
    assert find({"tags": "mine"}, ALICE) == ["crash", "button"]
    assert find({"tag": "MINE"}, BOB) == ["printing"]
    assert find({"tags": "mine"}) == []


def test_custom_fields(services, bugs, find):
    build = add_custom_field(services, "cf_build", 1)
    os_list = add_custom_field(services, "cf_platforms", 3)
    set_custom_value(services, bugs["crash"], build, "2026.01")
    set_custom_value(services, bugs["button"], build, "2026.02")
    set_custom_value(services, bugs["button"], os_list, "linux", "bsd")
    set_custom_value(services, bugs["printing"], os_list, "windows")
    assert find({"cf_build": "2026.01"}) == ["crash"]
    assert find({"cf_build": "2026.01,2026.02"}) == ["crash", "button"]
    assert find({"cf_platforms": ["bsd", "windows"]}) == ["button", "printing"]
    assert find({"f1": "cf_build", "o1": "substring", "v1": ".02"}) == ["button"]
    assert find({"f1": "cf_platforms", "o1": "notequals", "v1": "linux"}) == [
        "crash", "printing", "dupe", "verified"]
    assert find({"f1": "cf_build", "o1": "isempty"}) == ["printing", "dupe",
                                                         "verified"]
    assert error_code(services, {"f1": "cf_nope", "o1": "equals", "v1": "x"}) == 108


def test_flags_with_same_change_groups(services, bugs, find):
    add_flag(services, bugs["crash"], "review", "?", setter=ALICE, requestee=BOB)
    add_flag(services, bugs["crash"], "approval", "+", setter=CAROL)
    add_flag(services, bugs["button"], "review", "+", setter=CAROL)
    assert find({"flagtypes.name": "review?"}) == ["crash"]
    assert find({"flagtypes_name": "review+", "flagtypes_name_type": "equals"}) == [
        "button"]
    assert find({"f1": "requestees.login_name", "o1": "equals", "v1": BOB}) == ["crash"]
    together = {"f1": "OP", "j1": "AND", "f2": "flagtypes.name", "o2": "substring",
                "v2": "approval", "f3": "setters.login_name", "o3": "equals", "v3": ALICE}
    assert find(together) == ["crash"]
    together["j1"] = "AND_G"
    assert find(together) == []
    together["v3"] = CAROL
    assert find(together) == ["crash"]


# Operators -----------------------------------------------------------------------

def chart(field, operator, value="", negate=False):
    params = {"f1": field, "o1": operator, "v1": value}
    if negate:
        params["n1"] = "1"
    return params


@pytest.mark.parametrize("field, operator, value, expected", [
    ("short_desc", "equals", "button too small", ["button"]),
    ("short_desc", "notequals", "Button too small", ["crash", "printing", "dupe", "verified"]),
    ("bug_status", "anyexact", "RESOLVED,VERIFIED", ["button", "dupe", "verified"]),
    ("short_desc", "substring", "BUTTON", ["button", "dupe"]),
    ("short_desc", "substr", "button", ["button", "dupe"]),
    ("short_desc", "casesubstring", "Button", ["button"]),
    ("short_desc", "notsubstring", "button", ["crash", "printing", "verified"]),
    ("short_desc", "anywordssubstr", "tiny glitch", ["dupe", "verified"]),
    ("short_desc", "allwordssubstr", "tiny butt", ["dupe"]),
    ("short_desc", "nowordssubstr", "crash button", ["verified"]),
    ("short_desc", "anywords", "crash small", ["button", "printing"]),
    ("short_desc", "allwords", "crash printing", ["printing"]),
    ("short_desc", "nowords", "crash button", ["crash", "verified"]),
    ("short_desc", "regexp", "^(firefox|tiny)", ["crash", "dupe"]),
    ("short_desc", "notregexp", "a", ["dupe"]),
    ("bug_id", "lessthan", "BUG:printing", ["crash", "button"]),
    ("bug_id", "greaterthaneq", "BUG:dupe", ["dupe", "verified"]),
    ("creation_ts", "lessthan", "2026-01-01", ["verified"]),
    ("creation_ts", "greaterthan", "2026-02-01 10:00:00", ["dupe"]),
    ("delta_ts", "lessthaneq", "2026-01-10 10:00:00", ["crash", "verified"]),
    ("qa_contact", "isnotempty", "", ["crash"]),
    ("qa_contact", "isempty", "", ["button", "printing", "dupe", "verified"]),
    ("bug_file_loc", "isempty", "", ["button", "printing", "dupe", "verified"]),
    ("keywords", "isempty", "", ["dupe", "verified"]),
    ("cc", "equals", "DAVE@example.com", ["crash"]),
    ("cc", "notequals", DAVE, ["button", "printing", "dupe", "verified"]),
    ("commenter", "substring", "carol", ["crash", "printing"]),
    ("longdesc", "substring", "xyzzy", []),
    ("longdescs.count", "greaterthan", "2", ["crash"]),
    ("resolution", "equals", "---", ["crash", "printing"]),
    ("reporter_realname", "equals", "eve", ["dupe", "verified"]),
    ("priority", "lessthan", "low", ["crash", "printing", "dupe", "verified"]),
    ("content", "matches", "stack startup", ["crash"]),
    ("content", "matches", "button", ["button", "dupe"]),
    ("content", "notmatches", "crash", ["button", "dupe", "verified"]),
    ("assigned_to", "equals", "%reporter%", ["verified"]),
    ("dependson", "equals", "BUG:crash", ["printing"]),
    ("dependson", "equals", "BUG:secret", []),
    ("blocked", "isnotempty", "", ["crash"]),
    ("bug_group", "isnotempty", "", []),
    ("attachments.description", "isempty", "", PUBLIC),
])
def test_operators(services, bugs, field, operator, value, expected, find):
    params = chart(field, operator, _bug_refs(value, bugs))
    assert find(params) == [name for name in PUBLIC if name in expected]


# The comment text index marks the statements that read it.
_COMMENT_INDEX = {"sqlite": "comments_fts MATCH", "postgresql": "body ILIKE"}


@pytest.mark.parametrize("field, operator, value, as_alice, as_insider", [
    ("longdesc", "substring", "ButTon", ["button", "dupe"], None),
    ("longdesc", "casesubstring", "nsFoo", ["crash"], None),
    ("longdesc", "casesubstring", "nsfoo", [], None),
    ("longdesc", "allwordssubstr", "button tiny", ["button"], None),
    ("longdesc", "allwordssubstr", "stack windows", ["crash"], None),     # two comments
    ("longdesc", "allwordssubstr", "token xyzzy", [], ["crash"]),         # a private one
    ("longdesc", "allwordssubstr", "ok button", ["button"], None),        # "ok" unindexed
    ("longdesc", "anywordssubstr", "pdf nsfoo", ["crash", "printing"], None),
    ("longdesc", "anywordssubstr", "ok nsfoo", ["crash", "button"], None),
    ("longdesc", "allwords", "print", [], None),
    ("longdesc", "allwords", "printing page", ["printing"], None),
    ("longdesc", "anywords", "tiny classified", ["button"], ["button", "secret"]),
    ("short_desc", "allwordssubstr", "tiny button", ["dupe"], None),
    ("short_desc", "anywordssubstr", "vault glitch", ["verified"], ["secret", "verified"]),
])
def test_words_in_comments_and_summaries_are_found_through_the_text_indexes(
        services, bugs, find, db, field, operator, value, as_alice, as_insider):
    """Substring and word conditions on comments take the comment text
    index's candidates (summaries the bug text index's), as quick search
    does: every word's bugs, or any word's, the exact comparison still
    made on each, and a private comment's words only for insiders."""
    params = chart(field, operator, value)
    listed, statements = traced(db, lambda: find(params, ALICE))
    assert listed == as_alice
    assert find(params, INSIDER) == (as_alice if as_insider is None else as_insider)
    counted = services.call(bug_search.search, dict(params, count_only=True), as_user=ALICE,
                            write=False)
    assert counted["bug_count"] == len(as_alice)
    if field == "longdesc" and (operator, value) != ("anywordssubstr", "ok nsfoo"):
        assert any(_COMMENT_INDEX[db.dialect.name] in sql for sql in statements)


@pytest.mark.parametrize("most", [0, 10**6], ids=["many", "few"])
@pytest.mark.parametrize("criteria, as_alice, as_insider", [
    (chart("assigned_to", "substring", "BOB"), ["crash", "printing"], None),
    (chart("assigned_to", "casesubstring", "Bob"), [], None),
    (chart("assigned_to", "notsubstring", "bob"), ["button", "dupe", "verified"],
     ["button", "secret", "dupe", "verified"]),
    (chart("reporter", "substring", "eve@"), ["dupe", "verified"], None),
    (chart("qa_contact", "substring", "carol"), ["crash"], None),
    (chart("qa_contact", "notsubstring", "carol"), ["button", "printing", "dupe", "verified"],
     ["button", "printing", "secret", "dupe", "verified"]),
    (chart("cc", "substring", "dave"), ["crash"], None),
    (chart("commenter", "substring", "carol"), ["crash", "printing"], None),
    (chart("commenter", "substring", "insider"), [], ["crash", "secret"]),   # private comment
    (chart("assigned_to", "substring", "nobody-like-this"), [], None),
    ({"f1": "assigned_to", "o1": "substring", "v1": "alice", "f2": "cc", "o2": "substring",
      "v2": "dave", "j_top": "OR"}, ["crash", "button"], None),
    ({"email1": "bob", "emailassigned_to1": "1", "emailreporter1": "1",
      "emailtype1": "substring"}, ["crash", "button", "printing"], None),
])
def test_accounts_whose_login_holds_a_text_are_looked_up_first(
        services, bugs, find, db, monkeypatch, most, criteria, as_alice, as_insider):
    """A substring of an account's login (assignee, reporter, QA contact,
    CC, commenter) is tested by the ids of the accounts that hold it while
    few (USER_MATCHES), their bugs found through the columns' indexes;
    past that each bug's account's login is compared. The answers are the
    same, a private comment's author found only by insiders."""
    monkeypatch.setattr(search_sql, "USER_MATCHES", most)
    listed, statements = traced(db, lambda: find(criteria, ALICE))
    assert listed == as_alice
    assert find(criteria, INSIDER) == (as_alice if as_insider is None else as_insider)
    assert services.call(bug_search.search, dict(criteria, count_only=True), as_user=ALICE,
                         write=False)["bug_count"] == len(as_alice)
    searched = next(sql for sql in statements if "FROM bugs b WHERE" in sql)
    if as_alice or as_insider:              # (no account holds it: no bug can have one)
        assert ("u.login" in searched) == (most == 0)


def test_negated_condition_is_the_complement(services, bugs, find):
    assert find(chart("short_desc", "substring", "button", negate=True)) == [
        "crash", "printing", "verified"]
    assert find(chart("keywords", "anyexact", "crash", negate=True)) == [
        "button", "dupe", "verified"]


def test_user_pronoun_user_is_the_caller(services, bugs, find):
    assert find(chart("reporter", "equals", "%user%"), EVE) == ["dupe", "verified"]
    assert find(chart("reporter", "equals", "%user%")) == []


def test_private_comments_are_searched_only_for_insiders(services, bugs, find):
    for params in ({"longdesc": "xyzzy"}, chart("content", "matches", "xyzzy"),
                   chart("longdesc", "substring", "internal token")):
        assert find(params, ALICE) == []
        assert find(params, INSIDER) == ["crash"]
    by_insider = chart("commenter", "equals", INSIDER)
    assert find(by_insider, ALICE) == []
    assert find(by_insider, INSIDER) == ["crash", "secret"]


def test_hidden_dependencies_are_not_revealed(services, bugs, find):
    params = chart("dependson", "equals", str(bugs["secret"]))
    assert find(params, BOB) == []
    assert find(params, INSIDER) == ["crash"]


def test_time_tracking_fields_only_for_timetrackers(services, bugs, find):
    assert find(chart("estimated_time", "greaterthan", "7"), BOB) == ["crash"]
    assert find(chart("remaining_time", "equals", "5"), BOB) == ["crash"]
    assert find(chart("deadline", "lessthan", "2026-04-01"), BOB) == ["crash"]
    assert find({"deadlinefrom": "2026-03-01", "deadlineto": "2026-03-01"}, BOB) == [
        "crash"]
    assert find({"deadlinefrom": "2026-03-02"}, BOB) == []
    set_param(services, "timetrackinggroup", "insiders")
    assert error_code(services, chart("estimated_time", "greaterthan", "7"), BOB) == 108
    assert error_code(services, chart("deadline", "lessthan", "2026-04-01"), BOB) == 108
    assert find({"deadlinefrom": "2026-03-02", "product": "Gadget"}, BOB) == [
        "button", "dupe"]
    assert find({"estimated_time": "8", "product": "Gadget"}, BOB) == [
        "button", "dupe"]


@freeze_time("2026-02-05 12:00:00")
def test_relative_dates(services, bugs, find):
    assert find({"creation_time": "-5d"}) == ["printing", "dupe"]
    assert find({"creation_time": "-4d"}) == ["dupe"]
    assert find({"creation_time": "1ds"}) == ["dupe"]
    assert find(chart("creation_ts", "lessthan", "-2m")) == ["verified"]
    assert find(chart("days_elapsed", "greaterthan", "60")) == ["verified"]
    assert find(chart("days_elapsed", "isnotempty")) == PUBLIC


def test_last_visit_ts_is_the_callers_own(services, bugs, find):
    services.call(last_visit.update, {"ids": [bugs["crash"]]}, as_user=ALICE,
                  now=datetime(2026, 3, 1, tzinfo=timezone.utc))
    assert find(chart("last_visit_ts", "isnotempty"), ALICE) == ["crash"]
    assert find(chart("last_visit_ts", "greaterthan", "2026-02-28"), ALICE) == ["crash"]
    assert find(chart("last_visit_ts", "isempty"), ALICE) == [
        "button", "printing", "dupe", "verified"]
    assert find(chart("last_visit_ts", "isnotempty"), BOB) == []
    assert find(chart("last_visit_ts", "isnotempty")) == []


# History: changed* and chfield ------------------------------------------------------

@pytest.fixture
def history(services, bugs):
    add_history(services, bugs["button"], ALICE, "2026-01-20 10:00:00", "status", "CONFIRMED",
                "RESOLVED")
    add_history(services, bugs["button"], ALICE, "2026-01-20 10:00:00", "resolution", "", "FIXED")
    add_history(services, bugs["crash"], CAROL, "2026-01-08 10:00:00", "status", "UNCONFIRMED",
                "CONFIRMED")
    add_history(services, bugs["crash"], CAROL, "2026-01-09 10:00:00", "cc", "",
                "dave@example.com, eve@example.com")
    return bugs


@pytest.mark.parametrize("field, operator, value, expected", [
    ("bug_status", "changedafter", "2026-01-10", ["button"]),
    ("bug_status", "changedbefore", "2026-01-10", ["crash"]),
    ("bug_status", "changedto", "resolved", ["button"]),
    ("bug_status", "changedfrom", "UNCONFIRMED", ["crash"]),
    ("bug_status", "changedby", CAROL, ["crash"]),
    ("bug_status", "changedby", "nobody@example.com", []),
    ("cc", "changedto", EVE, ["crash"]),
    ("creation_ts", "changedafter", "2026-02-01", ["printing", "dupe"]),
    ("longdesc", "changedby", CAROL, ["crash", "printing"]),
    ("longdesc", "changedafter", "2026-02-01", ["printing", "dupe"]),
])
def test_changed_operators(services, history, field, operator, value, expected, find):
    assert find(chart(field, operator, value)) == [n for n in PUBLIC if n in expected]


def test_changed_conditions_on_the_same_change_with_and_g(services, history, find):
    params = {"j_top": "AND_G", "f1": "bug_status", "o1": "changedto", "v1": "CONFIRMED",
              "f2": "bug_status", "o2": "changedby", "v2": CAROL}
    assert find(params) == ["crash"]
    params["v2"] = ALICE
    assert find(params) == []
    params["j_top"] = "AND"
    assert find(params) == []


def test_chfield_forms(services, history, find):
    assert find({"chfield": "bug_status", "chfieldfrom": "2026-01-15",
                            "chfieldto": "2026-01-25"}) == ["button"]
    assert find({"chfield": ["bug_status", "resolution"],
                 "chfieldvalue": "FIXED"}) == ["button"]
    assert find({"chfield": "bug_status", "chfieldto": "2026-01-08"}) == ["crash"]
    assert find({"chfieldfrom": "2026-02-01"}) == ["button", "printing", "dupe"]
    assert find({"chfieldto": "2025-12-31"}) == ["verified"]
    assert find({"chfield": "[Bug creation]", "chfieldfrom": "2026-02-01",
                            "chfieldto": "2026-02-03"}) == ["printing"]


# Custom search: groups, negation, j_top; legacy charts; email -------------------------------

def test_or_groups_and_negated_groups(services, bugs, find):
    params = {"f1": "product", "o1": "equals", "v1": "TestProduct",
              "f2": "OP", "j2": "OR",
              "f3": "bug_status", "o3": "equals", "v3": "UNCONFIRMED",
              "f4": "keywords", "o4": "anyexact", "v4": "regression",
              "f5": "CP"}
    assert find(params) == ["crash", "printing"]
    params["n2"] = "1"
    assert find(params) == ["verified"]


def test_j_top_or_and_unclosed_groups(services, bugs, find):
    params = {"j_top": "OR", "f1": "priority", "o1": "equals", "v1": "High",
              "f2": "severity", "o2": "equals", "v2": "minor"}
    assert find(params) == ["crash", "button"]
    unclosed = {"f1": "OP", "j1": "OR", "f2": "priority", "o2": "equals", "v2": "High",
                "f3": "priority", "o3": "equals", "v3": "Low"}
    assert find(unclosed) == ["crash", "button"]


def test_empty_and_noop_conditions_are_skipped(services, bugs, find):
    params = {"f1": "short_desc", "o1": "substring", "v1": "",
              "f2": "noop", "o2": "noop", "v2": "x",
              "f3": "short_desc", "o3": "noop", "v3": "y",
              "f4": "product", "o4": "equals", "v4": "Gadget"}
    assert find(params) == ["button", "dupe"]


def test_legacy_boolean_charts(services, bugs, find):
    params = {"field0-0-0": "priority", "type0-0-0": "equals", "value0-0-0": "High",
              "field0-0-1": "priority", "type0-0-1": "equals", "value0-0-1": "Low",
              "field0-1-0": "product", "type0-1-0": "equals", "value0-1-0": "Gadget"}
    assert find(params) == ["button"]
    params["negate0"] = "1"
    assert find(params) == ["crash", "printing", "dupe", "verified"]
    both = {"field0-0-0": "priority", "type0-0-0": "equals", "value0-0-0": "High",
            "field1-0-0": "severity", "type1-0-0": "equals", "value1-0-0": "critical"}
    assert find(both) == ["crash"]


@pytest.mark.parametrize("params, expected", [
    ({"email1": BOB, "emailassigned_to1": "1"}, ["crash", "printing"]),
    ({"email1": "bob", "emailtype1": "substring", "emailassigned_to1": "1",
      "emailreporter1": "1"}, ["crash", "button", "printing"]),
    ({"email1": CAROL, "emailtype1": "exact", "emailqa_contact1": "1"}, ["crash"]),
    ({"email1": DAVE, "emailcc1": "1"}, ["crash"]),
    ({"email1": CAROL, "emaillongdesc1": "1"}, ["crash", "printing"]),
    ({"email1": BOB, "emailassigned_to1": "1", "email2": "dave", "emailtype2": "substring",
      "emailreporter2": "1"}, ["printing"]),
])
def test_email_parameters(services, bugs, params, expected, find):
    assert find(params) == [n for n in PUBLIC if n in expected]


# Order, limit, offset, count_only ---------------------------------------------------------

def test_order_by_columns_with_directions_ties_by_id(services, bugs, find):
    assert find({"order": "priority"}) == [
        "crash", "button", "printing", "dupe", "verified"]
    assert find({"order": "bug_status DESC,short_desc"}) == [
        "verified", "button", "dupe", "crash", "printing"]
    assert find({"order": "opendate DESC"}) == [
        "dupe", "printing", "button", "crash", "verified"]
    assert find({"order": ["changeddate", "nonsense DESC"]}) == [
        "verified", "crash", "button", "printing", "dupe"]
    assert find({"order": "bug_id DESC"}) == list(reversed(PUBLIC))
    assert find({"order": "product DESC, assigned_to"}) == [
        "crash", "printing", "verified", "dupe", "button"]


def test_select_fields_sort_by_their_values_keys_as_the_catalogue_has_them_now(
        services, bugs, find):
    """A value with a quote sorts by its key; a changed key sorts at once (the
    kept statement is made anew); a value the field no longer has sorts
    first, as one without a key."""
    def write(sql, *args):
        with services.db.transaction(write=True) as conn:
            conn.execute(sql, args)
    field = "(SELECT id FROM fields WHERE name = 'priority')"
    write(f"INSERT INTO field_values (field_id, value, sort_key) VALUES ({field}, ?, 50)",
          "Can't wait")
    write("UPDATE bugs SET priority = ? WHERE id = ?", "Can't wait", bugs["dupe"])
    write("UPDATE bugs SET priority = ? WHERE id = ?", "Gone", bugs["verified"])
    assert find({"order": "priority"}) == ["verified", "dupe", "crash", "button", "printing"]
    write(f"UPDATE field_values SET sort_key = 5000 WHERE field_id = {field} AND value = ?",
          "Can't wait")
    assert find({"order": "priority"}) == ["verified", "crash", "button", "printing", "dupe"]
    assert find({"order": "priority DESC"}) == ["dupe", "printing", "button", "crash",
                                               "verified"]


@pytest.mark.parametrize("most", [0, 10**6], ids=["many", "few"])
@pytest.mark.parametrize("field, text, array", [
    ("keywords", "REGR", "ANY (ARRAY(SELECT bk.bug_id"),
    ("alias", "FFCR", "ANY (ARRAY(SELECT bug_id FROM bug_aliases"),
])
def test_a_keyword_or_alias_substring_or_a_summary_substring_finds_their_bugs(
        services, bugs, find, db, monkeypatch, most, field, text, array):
    """A keyword's or an alias's substring's bugs are candidates only while
    few (ARRAY_MATCHES; PostgreSQL compares such an array one by one with
    each bug a lossy index beside it in an OR gives); every bug is compared
    otherwise. The answers are the same."""
    monkeypatch.setattr(search_sql, "ARRAY_MATCHES", most)
    either = {"f1": "OP", "j1": "OR", "f2": field, "o2": "substring", "v2": text,
              "f3": "short_desc", "o3": "substring", "v3": "tiny", "f4": "CP"}
    listed, statements = traced(db, lambda: find(dict(either, order="priority")))
    assert listed == ["crash", "dupe"]
    assert services.call(bug_search.search, dict(either, count_only=True),
                         write=False)["bug_count"] == 2
    assert find(dict(either, f5=field, o5="substring", v5=text[:-1])) == ["crash"]
    assert find({"f1": "keywords", "o1": "substring", "v1": "ra"}) == ["crash", "printing"]
    assert find({"f1": "alias", "o1": "substring", "v1": "ff"}) == ["crash"]
    if db.dialect.name == "postgresql":
        searched = next(sql for sql in statements if "FROM bugs b WHERE" in sql)
        assert (array in searched) == (most > 0)


@pytest.mark.parametrize("who", [None, INSIDER])
@pytest.mark.parametrize("order", ["priority", "bug_id"])
@pytest.mark.parametrize("limit, offset", [(2, 0), (2, 2), (2, 4), (2, 10), (10, 0)])
@pytest.mark.parametrize("criteria, numbers", [({"quicksearch": "crash"}, (2, 3)),
                                               ({"product": "TestProduct"}, (3, 4))])
def test_a_list_page_and_its_number_come_together(services, bugs, db, who, order, limit, offset,
                                                  criteria, numbers):
    """search_counted gives search's bugs and count_only's number; in one
    statement where the search reads every match anyway (another order
    than the bugs' ids) and tests more than a bug's own columns, apart
    where it stops at its first bugs in id order, where an index counts
    its bugs, or where the page is past the last bug."""
    params = dict(criteria, order=order, limit=limit, offset=offset, include_fields=["id"])
    counted, statements = traced(db, lambda: services.call(
        bug_search.search_counted, params, as_user=who, write=False))
    listed = services.call(bug_search.search, params, as_user=who, write=False)
    number = services.call(bug_search.search, dict(params, count_only=True), as_user=who,
                           write=False)["bug_count"]
    assert counted == {"bugs": listed["bugs"], "bug_count": number}
    assert number == numbers[who == INSIDER]
    searches = [sql for sql in statements if "FROM bugs b WHERE" in sql]
    one = (order == "priority" and "quicksearch" in criteria
           and (listed["bugs"] or offset == 0))
    assert len(searches) == (1 if one else 2)


def test_limit_offset_and_maximum(services, bugs, find):
    assert find({"limit": 2}) == ["crash", "button"]
    assert find({"limit": "2", "offset": "2"}) == ["printing", "dupe"]
    assert find({"limit": 2, "offset": 4}) == ["verified"]
    set_param(services, "max_search_results", "3")
    assert find({}) == ["crash", "button", "printing"]
    assert find({"limit": 10}) == ["crash", "button", "printing"]
    assert find({"limit": 0, "offset": 3}) == ["crash", "button", "printing"]


@pytest.mark.parametrize("params, code", [
    ({"offset": 1}, 50),
    ({"limit": "many"}, 52),
    ({"limit": -1}, 52),
    ({"limit": 5, "offset": "x"}, 52),
    ({"f1": "no_such_field", "o1": "equals", "v1": "x"}, 108),
    ({"field0-0-0": "bogus", "type0-0-0": "equals", "value0-0-0": "x"}, 108),
    ({"f1": "short_desc", "o1": "sounds_like", "v1": "x"}, 32000),
    ({"f1": "short_desc", "o1": "matches", "v1": "x"}, 32000),
    ({"f1": "content", "o1": "substring", "v1": "x"}, 32000),
    ({"f1": "short_desc", "o1": "regexp", "v1": "(unclosed"}, 32000),
    ({"f1": "longdesc", "o1": "notregexp", "v1": "(a+)+$"}, 32000),
    ({"f1": "CP"}, 32000),
    ({"short_desc": "x", "short_desc_type": "bogus"}, 32000),
    ({"creation_time": "not a date"}, 56),
    ({"f1": "delta_ts", "o1": "greaterthan", "v1": "2026-13-45"}, 56),
])
def test_errors(services, bugs, params, code):
    assert error_code(services, params) == code


def test_parameters_naming_no_field_are_ignored(services, bugs, find):
    assert find({"IDONTEXIST": "FOO"}) == PUBLIC
    assert find({"IDONTEXIST": "FOO", "priority": "Low"}) == ["button"]


NO_CRITERIA = [{}, {"limit": 5, "offset": 1}, {"IDONTEXIST": "FOO"}, {"order": "bug_id DESC"},
               {"count_only": 1}, {"include_fields": "id", "exclude_fields": "summary"},
               {"summary": ""}, {"f1": "short_desc", "o1": "substring", "v1": ""},
               {"f1": "noop", "o1": "noop", "v1": "x"}, {"status": "__all__"},
               {"query_format": "advanced", "savedsearch": "mine"}]


@pytest.mark.parametrize("params", NO_CRITERIA)
def test_no_criteria_when_disallowed_is_1000(services, bugs, find, params):
    services.call(bug_search.search, params, write=False)   # allowed by default
    set_param(services, "search_allow_no_criteria", "0")
    with pytest.raises(ServiceError) as caught:
        services.call(bug_search.search, params, write=False)
    assert caught.value.code == 1000
    assert caught.value.message == ("You may not search, or create saved searches, without any "
                                    "search terms.")


def test_any_real_criterion_is_enough_when_criteria_are_required(client, services, bugs, find):
    set_param(services, "search_allow_no_criteria", "0")
    assert find({"priority": "Low"}) == ["button"]
    assert find({"IDONTEXIST": "FOO", "priority": "Low"}) == ["button"]
    assert find({"quicksearch": "button"}) == []
    assert find({"f1": "short_desc", "o1": "isempty"}) == []
    key = services.api_key(ALICE)
    for query in ("", "IDONTEXIST=FOO", f"Bugzilla_api_key={key}&limit=3&order=bug_id"):
        resp = client.simulate_get("/rest/bug", query_string=query)
        assert resp.status_code == 400 and resp.json["code"] == 1000
    resp = client.simulate_get("/rest/bug", query_string=f"Bugzilla_api_key={key}&priority=Low")
    assert [bug["id"] for bug in resp.json["bugs"]] == [bugs["button"]]


def test_count_only_counts_what_the_caller_may_see(services, bugs):
    assert services.call(bug_search.search, {"count_only": 1, "summary": "crash"}) == {
        "bug_count": 2}
    assert services.call(bug_search.search, {"count_only": "1", "summary": "crash"},
                         as_user=INSIDER) == {"bug_count": 3}
    assert services.call(bug_search.search, {"count_only": True, "limit": 1}) == {"bug_count": 5}


# Visibility and HTTP ---------------------------------------------------------------------

@pytest.mark.parametrize("who, sees_secret", [(None, False), (ALICE, False), (ADMIN, False),
                                              (INSIDER, True)])
def test_hidden_bugs_are_never_returned(services, bugs, who, sees_secret, find):
    for params in ({}, {"summary": "secret"}, {"id": str(bugs["secret"])},
                   {"quicksearch": "vault"}, chart("bug_group", "equals", "secret")):
        assert ("secret" in find(params, who)) is sees_secret


def test_reporter_sees_own_restricted_bug_unless_creator_access_is_off(services, bugs, find):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE bugs SET reporter = (SELECT id FROM users WHERE login = ?)"
                     " WHERE id = ?", (ALICE, bugs["secret"]))
    assert "secret" in find({"summary": "vault"}, ALICE)
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE bugs SET is_creator_accessible = 0 WHERE id = ?", (bugs["secret"],))
    assert find({"summary": "vault"}, ALICE) == []


def test_search_over_http_with_include_fields(client, services, bugs):
    resp = client.simulate_get("/rest/bug", query_string="product=Gadget&include_fields=id,summary")
    assert resp.status_code == 200
    assert resp.json == {"bugs": [{"id": bugs["button"], "summary": "Button too small"},
                                  {"id": bugs["dupe"], "summary": "Tiny button"}]}
    key = services.api_key(INSIDER)
    hidden = client.simulate_get("/rest/bug", query_string=f"summary=vault&Bugzilla_api_key={key}")
    assert [bug["id"] for bug in hidden.json["bugs"]] == [bugs["secret"]]
    assert "update_token" not in hidden.json["bugs"][0]
    assert "faults" not in hidden.json


def test_repeated_query_keys_are_alternatives(client, services, bugs):
    resp = client.simulate_get("/rest/bug",
                               query_string="priority=High&priority=Low&include_fields=id")
    assert [bug["id"] for bug in resp.json["bugs"]] == [bugs["crash"], bugs["button"]]


def test_rendering_many_bugs_takes_no_query_per_bug(services, bugs, db):
    from bug_rows import add_bug
    for n in range(30):
        add_bug(services, summary=f"Bulk {n}", keywords=["perf"], cc=[DAVE])
    counts = {}
    services.call(bug_search.search, {"summary": "Bulk"})   # the catalogue copies are made
    for label, params in (("one", {"summary": "Bulk 1", "summary_type": "equals"}),
                          ("few", {"summary": "^Bulk", "summary_type": "regexp", "limit": 11}),
                          ("many", {"summary": "^Bulk", "summary_type": "regexp"})):
        found, statements = traced(db, lambda params=params: services.call(
            bug_search.search, params, write=False)["bugs"])
        counts[label] = (len(found), len(statements))
    assert [found for found, _ in counts.values()] == [1, 11, 30]
    # Several bugs' lists are read by one statement per list where
    # statements cost no round trip (SQLite), else with the bugs: as many
    # statements for 11 bugs as for 30 either way.
    assert counts["few"][1] == counts["many"][1]
    if not db.dialect.reads_lists_apart:
        assert counts["one"][1] == counts["many"][1]


@pytest.mark.parametrize("field, table", [("product", "products"),
                                          ("component", "components"),
                                          ("keywords", "keywords")])
def test_names_match_as_sql_folds_them_and_renames_are_seen_at_once(services, field, table):
    """Products, components and keywords searched by name are looked up in
    the process's copy of the catalogue: case-folded as SQL's lower() folds
    (ASCII letters only, on both engines), and a name changed by hand is
    found by the next search."""
    from bug_rows import add_bug, add_keyword, add_product
    add_product(services, "Émile", component="Émile")
    add_keyword(services, "Émile")
    bug_id = add_bug(services, product="Émile", component="Émile",
                     keywords=["Émile"])

    def found(name):
        query = {field: name}
        if field == "keywords":
            query["keywords_type"] = "anywords"
        answer = services.call(bug_search.search, query, as_user=ADMIN)
        return [bug["id"] for bug in answer["bugs"]]
    assert found("Émile") == found("ÉmILE") == [bug_id]
    assert found("émile") == []            # É is not ASCII: SQL's lower() keeps it
    with services.db.transaction(write=True) as conn:
        conn.execute(f"UPDATE {table} SET name = 'Nana' WHERE name = 'Émile'")
    assert found("Émile") == [] and found("NANA") == [bug_id]
