"""POST /rest/bug: required fields, defaults, rights and every documented error."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from bug_support import (
    ADMIN,
    DEFAULT,
    MANDATORY,
    NA,
    SHOWN,
    add_bug_group,
    add_custom_field,
    add_keyword,
    add_to_group,
    comments_of,
    control,
    editbugs_only_for_members,
    file_bug,
    get_bug,
    history_of,
    set_param,
)
from bugsvc.errors import ServiceError
from bugsvc.services import bug as bug_service


BASE = {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "A summary", "op_sys": "Linux", "platform": "PC"}


def create_error(services, as_user=ADMIN, drop=(), **fields):
    params = {k: v for k, v in BASE.items() if k not in drop}
    params.update(fields)
    with pytest.raises(ServiceError) as caught:
        services.call(bug_service.create, params, as_user=as_user)
    return caught.value.code


def bug_count(services):
    return services.query("SELECT COUNT(*) FROM bugs")[0][0]


# Through HTTP --------------------------------------------------------------------

@freeze_time("2026-02-03 04:05:06")
def test_create_over_http_answers_201_with_the_id(client, admin_key):
    resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key},
                                json=dict(BASE, description="Steps to reproduce"))
    assert resp.status_code == 201
    bug_id = resp.json["id"]
    got = client.simulate_get(f"/rest/bug/{bug_id}", params={"Bugzilla_api_key": admin_key}).json
    bug = got["bugs"][0]
    assert bug["summary"] == "A summary"
    assert bug["creation_time"] == bug["last_change_time"] == "2026-02-03T04:05:06Z"
    assert bug["creator"] == ADMIN


def test_create_without_login_is_410(client):
    resp = client.simulate_post("/rest/bug", json=BASE)
    assert resp.status_code == 401
    assert resp.json["code"] == 410


def test_create_with_unknown_key_is_53_over_http(client, admin_key):
    resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key},
                                json=dict(BASE, comment_tags=["x"]))
    assert resp.status_code == 400 and resp.json["code"] == 53


# Defaults --------------------------------------------------------------------------

def test_defaults_of_a_minimal_bug(services):
    bug_id = file_bug(services)
    bug = get_bug(services, bug_id)
    assert bug["status"] == "CONFIRMED" and bug["is_confirmed"] is True
    assert bug["resolution"] == "" and bug["is_open"] is True
    assert bug["priority"] == "---" and bug["severity"] == "enhancement"
    assert bug["assigned_to"] == ADMIN and bug["qa_contact"] == ""
    assert "qa_contact_detail" not in bug
    assert bug["target_milestone"] == "---"
    assert bug["alias"] == [] and bug["keywords"] == [] and bug["groups"] == []
    assert bug["is_cc_accessible"] is True and bug["is_creator_accessible"] is True
    assert bug["url"] == "" and bug["whiteboard"] == "" and bug["dupe_of"] is None
    assert comments_of(services, bug_id) == [(0, ADMIN, "", 0, 0, None)]


def test_description_becomes_comment_zero(services):
    bug_id = file_bug(services, description="Line one\r\nLine two   \n")
    assert comments_of(services, bug_id)[0][2] == "Line one\nLine two"


def test_internal_names_are_accepted(services):
    bug_id = file_bug(services, summary=None, platform=None, short_desc="Internal name",
                      bug_severity="major", rep_platform="Macintosh",
                      bug_file_loc="http://example.com/x")
    bug = get_bug(services, bug_id)
    assert (bug["summary"], bug["severity"], bug["platform"], bug["url"]) == \
        ("Internal name", "major", "Macintosh", "http://example.com/x")


def test_url_http_alone_becomes_empty(services):
    assert get_bug(services, file_bug(services, url="http://"))["url"] == ""


def test_op_sys_and_platform_come_from_parameters(services):
    set_param(services, "defaultopsys", "Windows")
    set_param(services, "defaultplatform", "Other")
    bug_id = file_bug(services, op_sys=None, platform=None)
    bug = get_bug(services, bug_id)
    assert (bug["op_sys"], bug["platform"]) == ("Windows", "Other")


def test_priority_forced_when_submitter_may_not_choose(services):
    set_param(services, "letsubmitterchoosepriority", "0")
    assert get_bug(services, file_bug(services, priority="Highest"))["priority"] == "---"
    set_param(services, "letsubmitterchoosepriority", "1")
    assert get_bug(services, file_bug(services, priority="Highest"))["priority"] == "Highest"


def test_component_default_cc_is_always_added(services):
    friend = services.add_user("friend@example.com")
    other = services.add_user("other@example.com")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO component_cc (component_id, user_id) VALUES (1, ?)", (friend,))
    bug = get_bug(services, file_bug(services, cc="other@example.com"))
    assert bug["cc"] == ["friend@example.com", "other@example.com"]
    assert [d["id"] for d in bug["cc_detail"]] == [friend, other]


def test_qa_contact_only_with_useqacontact(services):
    services.add_user("qa@example.com")
    assert get_bug(services, file_bug(services, qa_contact="qa@example.com"))["qa_contact"] == ""
    set_param(services, "useqacontact", "1")
    bug = get_bug(services, file_bug(services, qa_contact="qa@example.com"))
    assert bug["qa_contact"] == "qa@example.com"
    assert bug["qa_contact_detail"]["name"] == "qa@example.com"


# Required fields and their errors ----------------------------------------------

@pytest.mark.parametrize("fields, code", [
    ({"drop": ("product",)}, 50),
    ({"product": "NoSuchProduct"}, 106),
    ({"drop": ("component",)}, 105),
    ({"component": "NoSuchComponent"}, 51),
    ({"drop": ("summary",)}, 107),
    ({"summary": "   "}, 107),
    ({"summary": "x" * 256}, 104),
    ({"drop": ("version",)}, 50),
    ({"version": "9.9"}, 51),
    ({"drop": ("op_sys",)}, 50),
    ({"platform": ""}, 50),
    ({"platform": "Amiga"}, 51),
    ({"severity": "apocalyptic"}, 51),
    ({"target_milestone": "2.0"}, 51),
    ({"status": "NOSUCH"}, 51),
    ({"status": "RESOLVED"}, 123),
    ({"resolution": "FIXED"}, 122),
    ({"sub_component": "x"}, 53),
    ({"cf_nothing": "x"}, 53),
    ({"deadline": "2026-13-45"}, 56),
    ({"estimated_time": "lots"}, 52),
    ({"estimated_time": -1}, 55),
    ({"description": "x" * 65536}, 114),
    ({"keywords": ["nosuch"]}, 51),
    ({"assigned_to": "nobody@example.com"}, 51),
    ({"cc": ["nobody@example.com"]}, 504),
    ({"see_also": ["ftp://example.com/bug"]}, 112),
    ({"see_also": ["http://example.com/nothing/here"]}, 112),
    ({"see_also": ["12345"]}, 101),
    ({"depends_on": ["12345"]}, 101),
    ({"blocks": ["no-such-alias"]}, 100),
    ({"groups": ["no-such-group"]}, 120),
    ({"flags": [{"name": "nosuch", "status": "+"}]}, 51),
])
def test_create_errors(services, fields, code):
    fields = dict(fields)               # the parameters serve each engine's run
    drop = fields.pop("drop", ())
    assert create_error(services, drop=drop, **fields) == code
    assert bug_count(services) == 0


def test_inactive_component_version_milestone_keyword_are_32000(services):
    add_keyword(services, "old", is_active=False)
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO components (product_id, name, description, default_assignee,"
                     " is_active) VALUES (1, 'Retired', 'gone', 1, 0)")
        conn.execute("INSERT INTO versions (product_id, name, is_active) VALUES (1, 'old', 0)")
        conn.execute("INSERT INTO milestones (product_id, name, is_active) VALUES (1, 'm0', 0)")
    assert create_error(services, component="Retired") == 32000
    assert create_error(services, version="old") == 32000
    assert create_error(services, target_milestone="m0") == 32000
    assert create_error(services, keywords="old") == 32000


def test_closed_or_inactive_product_is_106(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE products SET is_active = 0")
    assert create_error(services) == 106


# Status by the caller's rights ---------------------------------------------------

def test_plain_user_gets_unconfirmed_and_no_say(services):
    editbugs_only_for_members(services)
    plain = services.add_user("plain@example.com")
    services.add_user("someone@example.com")
    other = file_bug(services)
    bug_id = file_bug(services, as_user=plain, status="IN_PROGRESS",
                      assigned_to="someone@example.com", depends_on=[other])
    bug = get_bug(services, bug_id)
    assert bug["status"] == "UNCONFIRMED" and bug["is_confirmed"] is False
    assert bug["assigned_to"] == ADMIN
    assert bug["depends_on"] == []
    assert bug["creator"] == "plain@example.com"


def test_plain_user_without_unconfirmed_gets_first_status(services):
    editbugs_only_for_members(services)
    plain = services.add_user("plain@example.com")
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE products SET has_unconfirmed = 0")
    assert get_bug(services, file_bug(services, as_user=plain))["status"] == "CONFIRMED"


def test_canconfirm_member_chooses_status(services):
    editbugs_only_for_members(services)
    services.add_user("confirmer@example.com", groups=("canconfirm",))
    bug_id = file_bug(services, as_user="confirmer@example.com", status="IN_PROGRESS")
    assert get_bug(services, bug_id)["status"] == "IN_PROGRESS"
    bug_id = file_bug(services, as_user="confirmer@example.com", status="UNCONFIRMED")
    assert get_bug(services, bug_id)["is_confirmed"] is False


def test_editbugs_member_assigns(services):
    services.add_user("dev@example.com")
    bug = get_bug(services, file_bug(services, assigned_to="dev@example.com"))
    assert bug["assigned_to"] == "dev@example.com"


# Aliases, keywords, cc --------------------------------------------------------------

def test_alias_string_is_split(services):
    bug_id = file_bug(services, alias="one, two")
    assert get_bug(services, bug_id)["alias"] == ["one", "two"]
    assert get_bug(services, "two")["id"] == bug_id


@pytest.mark.parametrize("alias", ["12345", "x" * 41, ["has space"], ["comma,in"]])
def test_bad_aliases_are_103(services, alias):
    assert create_error(services, alias=alias) == 103


def test_alias_in_use_is_103_in_any_case(services):
    file_bug(services, alias="taken")
    assert create_error(services, alias="TAKEN") == 103


def test_keywords_sorted_case_insensitively(services):
    for name in ("beta", "Alpha", "gamma"):
        add_keyword(services, name)
    bug = get_bug(services, file_bug(services, keywords="gamma, beta Alpha"))
    assert bug["keywords"] == ["Alpha", "beta", "gamma"]


# Groups ----------------------------------------------------------------------------

def test_groups_follow_the_product_controls(services):
    default = add_bug_group(services, "defaultgroup")
    shown = add_bug_group(services, "showngroup")
    mandatory = add_bug_group(services, "mandatorygroup")
    add_bug_group(services, "uncontrolled")
    control(services, default, DEFAULT, NA)
    control(services, shown, SHOWN, NA)
    control(services, mandatory, MANDATORY, MANDATORY)
    assert get_bug(services, file_bug(services))["groups"] == ["defaultgroup", "mandatorygroup"]
    assert get_bug(services, file_bug(services, groups=[]))["groups"] == ["mandatorygroup"]
    assert get_bug(services, file_bug(services, groups=["showngroup"]))["groups"] == \
        ["mandatorygroup", "showngroup"]
    assert create_error(services, groups=["uncontrolled"]) == 120


def test_member_control_needs_membership(services):
    secret = add_bug_group(services, "secret")
    control(services, secret, SHOWN, NA)
    services.add_user("plain@example.com")
    assert create_error(services, as_user="plain@example.com", groups=["secret"]) == 120


# Dependencies ---------------------------------------------------------------------

@freeze_time("2026-05-06 07:08:09")
def test_dependencies_recorded_on_both_bugs(services):
    first = file_bug(services, now=datetime(2026, 1, 1, tzinfo=timezone.utc))
    second = file_bug(services, depends_on=[first])
    assert get_bug(services, second)["depends_on"] == [first]
    target = get_bug(services, first)
    assert target["blocks"] == [second]
    assert target["last_change_time"] == "2026-05-06T07:08:09Z"
    assert history_of(services, first) == [{
        "when": "2026-05-06T07:08:09Z", "who": ADMIN,
        "changes": [{"field_name": "blocks", "removed": "", "added": str(second)}]}]


def test_dependency_loop_on_create_is_116(services):
    first = file_bug(services)
    second = file_bug(services, depends_on=[first])
    assert create_error(services, depends_on=[second], blocks=[first]) == 116
    assert create_error(services, depends_on=[first], blocks=[first]) == 116


# See Also ---------------------------------------------------------------------------

def test_see_also_remote_and_local(services):
    other = file_bug(services)
    bug_id = file_bug(services, see_also=["https://github.com/o/r/issues/7", str(other),
                                          "https://bugzilla.example.org/show_bug.cgi?id=9&x=y"])
    assert get_bug(services, bug_id)["see_also"] == [
        "https://github.com/o/r/issues/7", f"show_bug.cgi?id={other}",
        "https://bugzilla.example.org/show_bug.cgi?id=9"]
    assert get_bug(services, other)["see_also"] == [f"show_bug.cgi?id={bug_id}"]


# Time tracking -------------------------------------------------------------------------

def test_time_fields_for_timetrackers(services):
    bug = get_bug(services, file_bug(services, estimated_time=4.5, deadline="2026-09-30"))
    assert bug["estimated_time"] == 4.5 and bug["remaining_time"] == 4.5
    assert bug["deadline"] == "2026-09-30"


def test_time_fields_ignored_for_others(services):
    editbugs_only_for_members(services)
    plain = services.add_user("plain@example.com")
    bug_id = file_bug(services, as_user=plain, estimated_time=4.5, deadline="2026-09-30")
    bug = get_bug(services, bug_id)
    assert bug["estimated_time"] == 0.0 and bug["deadline"] is None


# Private description ----------------------------------------------------------------

def test_private_description_needs_insider(services):
    assert create_error(services, description="secret", comment_is_private=True) == 113
    add_bug_group(services, "insiders")
    set_param(services, "insidergroup", "insiders")
    bug_id = file_bug(services, description="secret", comment_is_private=True)
    assert comments_of(services, bug_id)[0][3] == 1


# Custom fields ------------------------------------------------------------------------

def test_custom_fields_stored_and_shown(services):
    add_custom_field(services, "cf_color", 2, ["red", "green"])
    add_custom_field(services, "cf_tags", 3, ["a", "b", "c"])
    add_custom_field(services, "cf_note", 1)
    add_custom_field(services, "cf_when", 5)
    add_custom_field(services, "cf_other", 6)
    add_custom_field(services, "cf_count", 10)
    other = file_bug(services)
    bug_id = file_bug(services, cf_color="Green", cf_tags=["c", "a"], cf_note=" hi ",
                      cf_when="2026-03-04 05:06:07", cf_other=str(other), cf_count="-12")
    bug = get_bug(services, bug_id)
    assert bug["cf_color"] == "green" and bug["cf_tags"] == ["c", "a"]
    assert bug["cf_note"] == "hi" and bug["cf_when"] == "2026-03-04T05:06:07Z"
    assert bug["cf_other"] == other and bug["cf_count"] == "-12"
    empty = get_bug(services, other)
    assert (empty["cf_color"], empty["cf_tags"], empty["cf_note"], empty["cf_when"],
            empty["cf_other"], empty["cf_count"]) == ("---", [], "", None, None, "0")


def test_custom_field_errors(services):
    add_custom_field(services, "cf_color", 2, ["red"])
    add_custom_field(services, "cf_count", 10)
    add_custom_field(services, "cf_day", 9)
    assert create_error(services, cf_color="blue") == 51
    assert create_error(services, cf_count="1.5") == 32000
    assert create_error(services, cf_count=str(2**31)) == 54
    assert create_error(services, cf_day="2026-02-30") == 56


def test_mandatory_custom_field_is_enforced(services):
    add_custom_field(services, "cf_required", 1, is_mandatory=True)
    assert create_error(services) == 32000
    assert get_bug(services, file_bug(services, cf_required="x"))["cf_required"] == "x"


# Nothing stored on error ------------------------------------------------------------

def test_failed_create_leaves_no_trace(services):
    first = file_bug(services)
    before = services.query("SELECT COUNT(*) FROM bug_activity")[0][0]
    assert create_error(services, depends_on=[first], flags=[{"name": "nosuch",
                                                              "status": "+"}]) == 51
    assert bug_count(services) == 1
    assert services.query("SELECT COUNT(*) FROM bug_activity")[0][0] == before
    assert services.query("SELECT COUNT(*) FROM comments")[0][0] == 1


def test_reporter_with_canconfirm_only_may_file_in_entry_group_product(services):
    group = add_bug_group(services, "entrygroup")
    control(services, group, SHOWN, SHOWN, entry=1)
    services.add_user("outsider@example.com")
    services.add_user("insider@example.com")
    add_to_group(services, "insider@example.com", "entrygroup")
    assert create_error(services, as_user="outsider@example.com") == 106
    assert file_bug(services, as_user="insider@example.com")


@pytest.mark.parametrize("url, stored", [
    ("https://bugs.launchpad.net/ubuntu/+bug/123", "https://bugs.launchpad.net/ubuntu/+bug/123"),
    ("https://bugs.debian.org/123", "https://bugs.debian.org/123"),
    ("https://bugs.debian.org/cgi-bin/bugreport.cgi?bug=9",
     "https://bugs.debian.org/cgi-bin/bugreport.cgi?bug=9"),
    ("https://gitlab.com/g/p/-/issues/4", "https://gitlab.com/g/p/-/issues/4"),
    ("https://issues.apache.org/jira/browse/ABC-12",
     "https://issues.apache.org/jira/browse/ABC-12"),
    ("https://trac.example.org/ticket/77", "https://trac.example.org/ticket/77"),
    ("https://mantis.example.org/view.php?id=5", "https://mantis.example.org/view.php?id=5"),
    ("https://sourceforge.net/p/proj/bugs/12/", "https://sourceforge.net/p/proj/bugs/12/"),
    ("https://bugs.chromium.org/p/chromium/issues/detail?id=8",
     "https://bugs.chromium.org/p/chromium/issues/detail?id=8"),
])
def test_see_also_trackers(services, url, stored):
    assert get_bug(services, file_bug(services, see_also=url))["see_also"] == [stored]


@pytest.mark.parametrize("url", ["https://example.com/show_bug.cgi?id=abc",
                                 "https://example.com/" + "x" * 250, "not a url",
                                 "https://github.com/o/r/wiki"])
def test_see_also_rejected(services, url):
    assert create_error(services, see_also=[url]) == 112


# Refused values of fixed lists name the legal ones ---------------------------------

def create_message(client, admin_key, **fields):
    resp = client.simulate_post("/rest/bug", params={"Bugzilla_api_key": admin_key},
                                json={k: v for k, v in dict(BASE, **fields).items()
                                      if v is not None})
    assert resp.status_code in (400, 404), resp.text
    return resp.json["message"]


@pytest.mark.parametrize("fields, legal", [
    ({"priority": "Urgent"}, "Legal values: Highest, High, Normal, Low, Lowest, ---."),
    ({"severity": "apocalyptic"},
     "Legal values: blocker, critical, major, normal, minor, trivial, enhancement."),
    ({"op_sys": "Plan 9"}, "Legal values: All, Windows, Mac OS, Linux, Other."),
    ({"op_sys": None}, "Legal values: All, Windows, Mac OS, Linux, Other."),
    ({"platform": "Amiga"}, "Legal values: All, PC, Macintosh, Other."),
    ({"status": "NOSUCH"},
     "Legal values: UNCONFIRMED, CONFIRMED, IN_PROGRESS, RESOLVED, VERIFIED."),
    ({"status": "RESOLVED"}, "Allowed: UNCONFIRMED, CONFIRMED, IN_PROGRESS."),
])
def test_refused_fixed_list_values_name_the_legal_ones(client, admin_key, fields, legal):
    assert create_message(client, admin_key, **fields).endswith(legal)


def test_legal_values_leave_out_inactive_ones(client, admin_key, services):
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE field_values SET is_active = 0 WHERE value = 'Lowest'")
    message = create_message(client, admin_key, priority="Lowest")
    assert message == ("The priority 'Lowest' is no longer active. "
                       "Legal values: Highest, High, Normal, Low, ---.")


def test_refused_custom_select_value_names_the_legal_ones(client, admin_key, services):
    add_custom_field(services, "cf_colour", 2, values=["red", "green"])
    message = create_message(client, admin_key, cf_colour="blue")
    assert message.endswith("Legal values: ---, red, green.")
