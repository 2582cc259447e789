"""The one list of bug fields (bugsvc/catalogue/bug_fields.py): no name of a
field means another; every name a field goes by means that field wherever
the interface takes it (search criteria and parameters, sort orders,
quicksearch, filing, updating, legal values), and nowhere else."""

import re
from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from accounts import ADMIN_PASSWORD
from bug_rows import ADMIN, add_group, search_world, set_param
from bug_support import comments_of, file_bug, get_bug, update_bug
from bugsvc.catalogue import bug_fields, settings
from bugsvc.catalogue.field_types import BUG_ID, INTEGER, MULTI_SELECT, SINGLE_SELECT
from bugsvc.errors import ServiceError
from bugsvc.services import (
    bug as bug_service,
    bug_search,
    comment as comment_service,
    field as field_service,
    webhook as webhook_service,
)
from notify_support import deliver, use_smtp
from page_support import Browser


INSIDER = "insider@example.com"


# The list itself ---------------------------------------------------------------

def test_no_name_of_a_field_means_another_field():
    owner = {}
    for field in bug_fields.STANDARD:
        names = {field.name, field.api, field.bug_key, *field.param_names, *field.old_names}
        if field.list_name:
            names.add(field.list_name)
        for name in names:
            assert owner.setdefault(name, field.name) == field.name, name
    quick = [short for field in bug_fields.STANDARD for short in field.quicksearch]
    assert len(quick) == len(set(quick))


def test_places_in_lists_are_each_taken_once():
    for place in (lambda f: f.sort_key if f.description else None,
                  lambda f: f.list_column.order if f.list_column else None,
                  lambda f: f.new_bugmail):
        taken = [place(field) for field in bug_fields.STANDARD if place(field) is not None]
        assert len(taken) == len(set(taken))


def test_a_fields_parameter_is_an_installation_parameter():
    parameters = {field.parameter for field in bug_fields.STANDARD if field.parameter}
    assert parameters and parameters <= set(settings.defaults())


def test_every_custom_field_type_has_a_kind_and_only_selects_have_values():
    assert set(bug_fields.CUSTOM_KINDS) == set(range(1, INTEGER + 1))
    assert {code for code, kind in bug_fields.CUSTOM_KINDS.items() if kind.is_select} == {
        SINGLE_SELECT, MULTI_SELECT}
    assert bug_fields.CUSTOM_KINDS[BUG_ID].shown == "bug"


def test_a_new_installation_has_a_field_row_for_each_described_field(services):
    rows = services.query("SELECT name, display_name, type, is_mandatory, sort_key, is_custom"
                          " FROM fields ORDER BY sort_key")
    assert [tuple(row) for row in rows] == [
        (field.name, field.description, field.type, int(field.mandatory), field.sort_key, 0)
        for field in sorted(bug_fields.STANDARD, key=lambda f: f.sort_key) if field.description]


# Search -----------------------------------------------------------------------------

@pytest.fixture
def bugs(services):
    return search_world(services)


@pytest.fixture
def find(services, bugs):
    names = {bug_id: name for name, bug_id in bugs.items()}

    def run(params, as_user=None):
        result = services.call(bug_search.search, params, as_user=as_user, write=False)
        return [names.get(bug["id"], bug["id"]) for bug in result["bugs"]]
    return run


def criterion(field, operator, value):
    return {"f1": field, "o1": operator, "v1": value}


@freeze_time("2026-02-10 00:00:00")
@pytest.mark.parametrize("older, own, operator, value, expected", [
    ("opendate", "creation_ts", "greaterthan", "2026-02-01", ["printing", "dupe"]),
    ("changeddate", "delta_ts", "lessthan", "2026-01-11", ["crash", "verified"]),
    ("changedin", "days_elapsed", "greaterthan", "20", ["crash", "verified"]),
    ("dup_id", "dupe_of", "equals", "button", ["dupe"]),
    ("long_desc", "longdesc", "substring", "nsfoo", ["crash"]),
    ("comment_count", "longdescs.count", "greaterthan", "2", ["crash"]),
    ("creator", "reporter", "equals", "eve@example.com", ["dupe", "verified"]),
    ("whiteboard", "status_whiteboard", "substring", "triaged", ["crash"]),
])
def test_search_criteria_take_every_name_of_a_field(find, bugs, older, own, operator, value,
                                                    expected):
    value = str(bugs[value]) if value in bugs else value
    assert find(criterion(older, operator, value)) == expected
    assert find(criterion(own, operator, value)) == expected


def test_hours_worked_are_searched_as_actual_time_by_time_trackers_only(services, find):
    assert find(criterion("actual_time", "equals", "0"), ADMIN) == find(
        criterion("work_time", "equals", "0"), ADMIN) != []
    add_group(services, "timers", members=[ADMIN])
    set_param(services, "timetrackinggroup", "timers")
    services.add_user("plain@example.com")
    for name in ("actual_time", "work_time"):
        with pytest.raises(ServiceError) as caught:
            find(criterion(name, "equals", "0"), "plain@example.com")
        assert caught.value.code == 108


@pytest.mark.parametrize("params, expected", [
    ({"summary": "printing"}, ["printing"]),
    ({"short_desc": "printing"}, ["printing"]),
    ({"long_desc": "nsFoo"}, ["crash"]),
    ({"whiteboard": "triaged", "whiteboard_type": "substring"}, ["crash"]),
    ({"status_whiteboard": "triaged", "status_whiteboard_type": "substring"}, ["crash"]),
    ({"creator": "eve"}, ["dupe", "verified"]),
    ({"platform": "Macintosh"}, ["button"]),
    ({"rep_platform": "Macintosh"}, ["button"]),
])
def test_simple_parameters_take_bugzilla_and_interface_names(find, params, expected):
    assert find(params) == expected


@pytest.mark.parametrize("older", ["dup_id", "changedin", "opendate", "actual_time"])
def test_older_names_are_no_simple_parameters(find, bugs, older):
    assert find({older: str(bugs["button"]), "product": "Gadget"}) == ["button", "dupe"]


@pytest.mark.parametrize("order", ["opendate DESC", "creation_ts DESC", "creation_time DESC"])
def test_sort_orders_take_every_name_of_a_field(find, order):
    assert find({"order": order}) == ["dupe", "printing", "button", "crash", "verified"]


@pytest.mark.parametrize("text, expected", [
    ("qa:carol", ["crash"]),
    ("qacontact:carol", ["crash"]),
    ("platform:mac", []),
    ("ALL platform:mac", ["button"]),
    ("ALL os:mac", ["button"]),
    ("ALL severity:minor", ["button"]),
    ("url:example.com", ["crash"]),
    ("group:secret", []),
    ("reporter:dave", ["printing"]),
    ("version:unspec", ["crash", "printing"]),
])
def test_quicksearch_takes_the_short_names(find, text, expected):
    assert find({"quicksearch": text}) == expected


@pytest.mark.parametrize("name", ["rep_platform", "bug_status", "bug_severity", "bug_file_loc",
                                  "status_whiteboard", "bug_group", "cclist_accessible"])
def test_quicksearch_knows_some_fields_by_their_short_name_only(services, bugs, name):
    with pytest.raises(ServiceError) as caught:
        services.call(bug_search.search, {"quicksearch": f"{name}:x"}, write=False)
    assert caught.value.code == 32000 and name in caught.value.message


# Filing and updating ---------------------------------------------------------------------

@freeze_time("2026-03-01 12:00:00")
def test_filing_takes_bugzillas_names(services):
    bug_id = file_bug(services, summary=None, platform=None, short_desc="Named the old way",
                      rep_platform="Macintosh", bug_severity="major", bug_status="CONFIRMED",
                      bug_file_loc="http://example.com/", status_whiteboard="[old]",
                      cclist_accessible=False, reporter_accessible=False,
                      comment="What happened", commentprivacy=False)
    bug = get_bug(services, bug_id)
    assert (bug["summary"], bug["platform"], bug["severity"], bug["status"], bug["url"],
            bug["whiteboard"], bug["is_cc_accessible"], bug["is_creator_accessible"]) == (
        "Named the old way", "Macintosh", "major", "CONFIRMED", "http://example.com/", "[old]",
        False, False)
    assert comments_of(services, bug_id)[0][2] == "What happened"


@pytest.mark.parametrize("name", ["bug_group", "dup_id", "everconfirmed", "creation_ts"])
def test_filing_refuses_other_names(services, name):
    with pytest.raises(ServiceError) as caught:
        file_bug(services, **{name: "1"})
    assert caught.value.code == 53


def test_updating_takes_bugzillas_names_except_where_bugzilla_does_not(services):
    first, second = file_bug(services), file_bug(services)
    changes = update_bug(services, second, bug_status="RESOLVED", resolution="DUPLICATE",
                         dup_id=first, status_whiteboard="[dupe]", cclist_accessible=False,
                         short_desc="ignored", rep_platform="Macintosh")["changes"]
    assert set(changes) == {"status", "resolution", "dupe_of", "whiteboard", "is_cc_accessible"}
    bug = get_bug(services, second)
    assert (bug["dupe_of"], bug["summary"], bug["platform"]) == (
        first, "Something is broken", "PC")


@pytest.mark.parametrize("name, expected", [
    ("status", ["UNCONFIRMED", "CONFIRMED", "IN_PROGRESS", "RESOLVED", "VERIFIED"]),
    ("bug_status", ["UNCONFIRMED", "CONFIRMED", "IN_PROGRESS", "RESOLVED", "VERIFIED"]),
    ("severity", ["blocker", "critical", "major", "normal", "minor", "trivial", "enhancement"]),
    ("platform", ["All", "PC", "Macintosh", "Other"]),
])
def test_legal_values_take_both_names(services, name, expected):
    assert services.call(field_service.legal_values, {"field": name},
                         write=False)["values"] == expected


@pytest.mark.parametrize("name", ["whiteboard", "creator", "summary", "id", "depends_on"])
def test_legal_values_of_a_field_without_values_is_108(services, name):
    with pytest.raises(ServiceError) as caught:
        services.call(field_service.legal_values, {"field": name}, write=False)
    assert caught.value.code == 108 and name in caught.value.message


def test_history_names_the_changes_by_their_interface_names(services):
    bug_id = file_bug(services)
    with freeze_time(datetime(2026, 3, 2, tzinfo=timezone.utc)):
        update_bug(services, bug_id, summary="Renamed", severity="major", whiteboard="[w]",
                   is_cc_accessible=False)
    history = services.call(bug_service.history, {"ids": [bug_id]}, write=False)
    [entry] = history["bugs"][0]["history"]
    assert {change["field_name"] for change in entry["changes"]} == {
        "summary", "severity", "whiteboard", "is_cc_accessible"}


# Where people read them: pages, mail, webhooks -----------------------------------------

ALL_COLUMNS = ("alias,short_desc,bug_status,resolution,product,component,classification,"
               "version,target_milestone,rep_platform,op_sys,priority,bug_severity,assigned_to,"
               "assigned_to_realname,reporter,reporter_realname,qa_contact,bug_file_loc,"
               "status_whiteboard,keywords,changeddate,opendate,flagtypes.name,deadline,"
               "estimated_time,remaining_time,actual_time")
_HEADING = re.compile(r'<th scope="col"><a href="[^"]*">([^<]+)</a></th>')


def test_a_bug_list_heads_each_column_with_the_fields_label(app, services):
    file_bug(services)
    page = Browser(app).get(f"/buglist.cgi?bug_status=__all__&columnlist={ALL_COLUMNS}")
    assert _HEADING.findall(page.text) == [
        "Bug", "Alias", "Summary", "Status", "Resolution", "Product", "Component",
        "Classification", "Version", "Target Milestone", "Hardware", "OS", "Priority",
        "Severity", "Assignee", "Assigned to realname", "Reporter", "Reporter realname",
        "QA Contact", "URL", "Whiteboard", "Keywords", "Changed", "Opened", "Flags", "Deadline",
        "Orig. Est.", "Hours Left", "Hours Worked"]
    named = Browser(app).get("/buglist.cgi?bug_status=__all__"
                             "&columnlist=summary,platform,creator,last_change_time,groups")
    assert _HEADING.findall(named.text) == ["Bug", "Summary", "Hardware", "Reporter", "Changed"]


@pytest.mark.parametrize("usestatuswhiteboard", ["0", "1"])
def test_the_column_chooser_offers_the_whiteboard_while_its_parameter_is_on(
        app, services, usestatuswhiteboard):
    set_param(services, "usestatuswhiteboard", usestatuswhiteboard)
    file_bug(services)
    page = Browser(app).get("/buglist.cgi?bug_status=__all__")
    offered = re.findall(r'<label for="col-\d+">([^<]+)</label>', page.text)
    whiteboard = ["Whiteboard"] if usestatuswhiteboard == "1" else []
    assert offered == [
        "Alias", "Summary", "Status", "Resolution", "Product", "Component", "Classification",
        "Version", "Target Milestone", "Hardware", "OS", "Priority", "Severity", "Assignee",
        "Assigned to realname", "Reporter", "Reporter realname", "QA Contact", "URL",
        *whiteboard, "Keywords", "Changed", "Opened", "Flags", "Deadline", "Orig. Est.",
        "Hours Left", "Hours Worked"]


def test_a_bugs_history_page_labels_each_change(app, services):
    bug_id = file_bug(services)
    update_bug(services, bug_id, summary="Renamed", platform="Macintosh", severity="major",
               whiteboard="[w]", is_cc_accessible=False, estimated_time=3, depends_on={
                   "add": [file_bug(services)]})
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get(f"/show_activity.cgi?id={bug_id}")
    rows = [re.findall(r"<td[^>]*>(.*?)</td>", row, re.S)
            for row in re.findall(r"<tr>(.*?)</tr>", page.text, re.S)]
    labels = [cells[-3] for cells in rows if len(cells) >= 3]
    assert set(labels) == {"Summary", "Hardware", "Severity", "Whiteboard", "CC list accessible",
                           "Orig. Est.", "Depends on"}


@pytest.fixture
def mailed(services, smtp):
    use_smtp(services, smtp)
    for name in ("useqacontact", "usestatuswhiteboard", "usetargetmilestone"):
        set_param(services, name, "1")
    services.add_user("dev@example.com")
    return services


def test_a_new_bugs_mail_lists_its_fields_in_bugzillas_words(mailed, smtp):
    blocker = file_bug(mailed)
    file_bug(mailed, assigned_to="dev@example.com", qa_contact="dev@example.com",
             cc=["dev@example.com"], whiteboard="[w]", url="http://example.com/",
             alias=["nicely"], estimated_time=2, deadline="2026-05-01", blocks=[blocker],
             priority="Highest")
    deliver(mailed)
    body = smtp.to("dev@example.com")[0].get_content()
    labels = re.findall(r"^ *([A-Za-z][A-Za-z ]*): \S", body, re.MULTILINE)
    assert labels[:labels.index("Alias") + 3] == [
        "Bug ID", "Summary", "Product", "Version", "Hardware", "OS", "Status", "Severity",
        "Priority", "Component", "Assignee", "Reporter", "QA Contact", "CC", "Blocks", "URL",
        "Whiteboard", "Target Milestone", "Alias", "Estimated Hours", "Deadline"]


def test_a_change_mail_names_the_fields_as_bugzilla_does(mailed, smtp):
    bug_id = file_bug(mailed, assigned_to="dev@example.com")
    update_bug(mailed, bug_id, summary="Renamed", platform="Macintosh", whiteboard="[w]",
               is_cc_accessible=False)
    deliver(mailed)
    changed = smtp.to("dev@example.com")[-1]
    assert set(changed["X-Bugzilla-Changed-Fields"].split()) == {
        "short_desc", "rep_platform", "status_whiteboard", "cclist_accessible"}
    rows = re.findall(r"^ *([A-Za-z][A-Za-z ]*)\|", changed.get_content(), re.MULTILINE)
    assert rows == ["What", "Summary", "Platform", "Status Whiteboard", "CC Accessible"]


def test_a_webhook_names_a_comments_privacy_and_blanks_an_unset_priority(services, receiver):
    set_param(services, "webhooks_enabled", "1")
    set_param(services, "webhooks_allow_private_addresses", "1")    # the receiver is loopback
    set_param(services, "insidergroup", "admin")
    register = services.call(webhook_service.create, {
        "name": "all", "url": receiver.url, "events": ["change", "comment"],
        "product": "TestProduct", "component": "TestComponent"}, as_user=ADMIN)
    assert register["id"]
    bug_id = file_bug(services, priority="High")
    comment_id = services.call(comment_service.add, {"id": bug_id, "comment": "note"},
                               as_user=ADMIN)["id"]
    update_bug(services, bug_id, priority="---", comment_is_private={str(comment_id): True})
    deliver(services)
    changes = [change for call in receiver.calls
               for change in call["json"]["event"].get("changes", [])]
    assert {"field": "priority", "removed": "High", "added": ""} in changes
    assert {"field": "longdescs.is_private", "removed": "0", "added": "1"} in changes
