"""The audit log: every admin change is recorded, whatever the way in
(operations over REST and RPC, the pages, the command line), with who made
it, the object's kind and name, and when; GET /rest/audit_log and the audit
log page (auditlog.cgi) read it for the members of admin only."""

import io
import re
import xmlrpc.client

import pytest
from freezegun import freeze_time

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from bugsvc.api.operations import OPERATIONS
from bugsvc.catalogue import settings
from bugsvc.cli import commands
from bugsvc.errors import ServiceError
from bugsvc.store import audit
from page_support import PASSWORDS, PLAIN, Browser, text_of


# Write operations that change no setting, account or catalogue object of
# the installation (bugs, one's own session, tokens being asked for, mail
# sent again): they leave the audit log alone. Every other write operation
# is an admin change and must be audited (the test below walks them all).
NOT_ADMIN_CHANGES = {
    "User.logout", "User.offer_account_by_email", "User.request_password_reset",
    "User.cancel_token", "User.request_email_change", "User.update_email_settings",
    "Notification.resend", "Bug.create", "Bug.update", "Bug.update_see_also",
    "Bug.update_tags", "Bug.add_comment", "Bug.update_comment_tags", "Bug.add_attachment",
    "Bug.update_attachment", "BugUserLastVisit.update", "EditComments.update_comment",
}
# Audited changes made through mailed tokens or by anyone for themselves;
# their tests are beside their features (test_self_registration.py,
# test_email_change.py, test_pages_mail.py, test_user.py,
# test_chart.py, test_whine.py, test_sanity_check.py: a repair is audited when it
# fixes something).
AUDITED_ELSEWHERE = {
    "User.create_account", "User.reset_password", "User.change_email", "User.update_self",
    "SavedSearch.create", "SavedSearch.delete", "Series.create", "Series.delete",
    "SanityCheck.repair", "Whine.create_event", "Whine.update_event", "Whine.delete_event",
}


def admin_changes(services, plain_id):
    """(operation, params, class, expected object name) of every admin write
    operation, in an order where each finds what it needs."""
    return [
        ("Bugzilla.update_parameters", {"usestatuswhiteboard": "1"}, "Param",
         "usestatuswhiteboard"),
        ("Group.create", {"name": "auditors", "description": "They audit"}, "Group", "auditors"),
        ("Group.update", {"names": ["auditors"], "description": "They read"}, "Group",
         "auditors"),
        ("Classification.create", {"name": "Hardware"}, "Classification", "Hardware"),
        ("Classification.update", {"names": ["Hardware"], "description": "Boxes"},
         "Classification", "Hardware"),
        ("Classification.create", {"name": "Empty"}, "Classification", "Empty"),
        ("Classification.delete", {"names": ["Empty"]}, "Classification", "Empty"),
        ("Product.create", {"name": "Router", "description": "Routers", "version": "1.0"},
         "Product", "Router"),
        ("Product.update", {"names": ["Router"], "description": "Home routers"}, "Product",
         "Router"),
        ("Product.create", {"name": "Spare", "description": "Spare", "version": "1"},
         "Product", "Spare"),
        ("Product.delete", {"names": ["Spare"]}, "Product", "Spare"),
        ("Component.create", {"product": "Router", "name": "WiFi", "description": "Radio",
                              "default_assignee": ADMIN}, "Component", "WiFi"),
        ("Component.create", {"product": "Router", "name": "Old", "description": "Old",
                              "default_assignee": ADMIN}, "Component", "Old"),
        ("Component.update", {"names": [{"product": "Router", "component": "WiFi"}],
                              "description": "Wireless"}, "Component", "WiFi"),
        ("Component.delete", {"names": [{"product": "Router", "component": "Old"}]},
         "Component", "Old"),
        ("Version.create", {"product": "Router", "name": "2.0"}, "Version", "2.0"),
        ("Version.update", {"ids": ["LAST"], "name": "2.1"}, "Version", "2.1"),
        ("Milestone.create", {"product": "Router", "name": "M1"}, "Milestone", "M1"),
        ("Milestone.update", {"ids": ["LAST"], "sort_key": 5}, "Milestone", "M1"),
        ("Milestone.delete", {"ids": ["LAST"]}, "Milestone", "M1"),
        ("Version.create", {"product": "Router", "name": "spare"}, "Version", "spare"),
        ("Version.delete", {"ids": ["LAST"]}, "Version", "spare"),
        ("Keyword.create", {"name": "regression", "description": "Worked before"}, "Keyword",
         "regression"),
        ("Keyword.update", {"names": ["regression"], "description": "It worked"}, "Keyword",
         "regression"),
        ("FlagType.create", {"name": "review", "description": "Reviewed?"}, "FlagType",
         "review"),
        ("FlagType.update", {"names": ["review"], "sortkey": 5}, "FlagType", "review"),
        ("FlagType.delete", {"ids": ["LAST"]}, "FlagType", "review"),
        ("Field.create", {"name": "cf_colour", "display_name": "Colour", "type": 2,
                          "values": ["red"]}, "Field", "cf_colour"),
        ("Field.update", {"names": ["cf_colour"], "values": {"add": ["blue"]}}, "Field",
         "cf_colour"),
        ("FieldValue.create", {"field": "priority", "value": "P1"}, "Field::Choice::priority",
         "P1"),
        ("FieldValue.update", {"field": "priority", "value": "P1", "name": "P0"},
         "Field::Choice::priority", "P0"),
        ("FieldValue.delete", {"field": "priority", "value": "P0"}, "Field::Choice::priority",
         "P0"),
        ("Workflow.update", {"transitions": [{"from": None, "to": "CONFIRMED"},
                                             {"from": "CONFIRMED", "to": "RESOLVED",
                                              "comment_required": True}]},
         "Status", "CONFIRMED"),
        ("User.create", {"email": "new@example.com", "password": "new password 1"}, "User",
         "new@example.com"),
        ("User.update", {"names": [PLAIN], "full_name": "Pat"}, "User", PLAIN),
        ("ApiKey.create", {"user": PLAIN, "description": "ci"}, "User", PLAIN),
        ("ApiKey.update", {"ids": ["LAST"], "revoked": True}, "User", PLAIN),
        ("Webhooks.create", {"name": "hook", "url": "https://hooks.example.com/in",
                             "events": ["create"], "product": "Router"}, "Webhook", "hook"),
        ("Webhooks.update", {"ids": ["LAST"], "enabled": False}, "Webhook", "hook"),
        ("Webhooks.delete", {"ids": ["LAST"]}, "Webhook", "hook"),
        ("ForgeRepository.create", {"forge": "github", "repository": "team/router",
                                    "secret": "a long enough secret"},
         "ForgeRepository", "team/router"),
        ("ForgeRepository.update", {"ids": ["LAST"], "branches": "main"}, "ForgeRepository",
         "team/router"),
        ("ForgeRepository.delete", {"ids": ["LAST"]}, "ForgeRepository", "team/router"),
    ]


def entries(services):
    return services.query("SELECT u.login, a.class, a.object_name FROM audit_log a"
                          " LEFT JOIN users u ON u.id = a.user_id ORDER BY a.id")


def test_every_write_operation_is_an_admin_change_or_named_as_none():
    writes = {operation.name for operation in OPERATIONS if operation.writes}
    admin = {change[0] for change in admin_changes(None, None)}
    assert writes == admin | NOT_ADMIN_CHANGES | AUDITED_ELSEWHERE
    assert not admin & (NOT_ADMIN_CHANGES | AUDITED_ELSEWHERE)


def test_every_admin_operation_is_audited_with_who_what_and_when(services):
    plain_id = services.add_user(PLAIN, password=PASSWORDS[PLAIN])
    set_param(services, "webhooks_enabled", "1")
    created = None
    for number, (name, params, kind, object_name) in enumerate(
            admin_changes(services, plain_id)):
        if params.get("ids") == ["LAST"]:       # the object the call before created
            params = dict(params, ids=[created])
        before = len(entries(services))
        with freeze_time(f"2026-03-04 05:06:{number:02d}"):
            answer = services.runner.call(OPERATIONS[name], params, services.user_id(ADMIN))
        if name.endswith(".create"):
            created = answer["id"]
        added = entries(services)[before:]
        assert added, f"{name} left no audit entry"
        assert (ADMIN, "Bugzilla::" + kind, object_name) in added, (name, added)
        assert services.query("SELECT MAX(at_time) FROM audit_log") == [
            (f"2026-03-04 05:06:{number:02d}",)]


def test_a_refused_change_is_not_audited(services):
    services.add_user(PLAIN, password=PASSWORDS[PLAIN])
    before = entries(services)
    with pytest.raises(ServiceError):
        services.runner.call(OPERATIONS["Keyword.create"], {"name": "x", "description": "x"},
                             services.user_id(PLAIN))
    with pytest.raises(ServiceError):
        services.runner.call(OPERATIONS["Bugzilla.update_parameters"], {"urlbase": "ftp://x"},
                             services.user_id(ADMIN))
    assert entries(services) == before


def test_changes_over_rest_xmlrpc_jsonrpc_and_the_pages_are_audited(
        app, client, services, admin_key):
    client.simulate_post("/rest/keyword", params={"Bugzilla_api_key": admin_key},
                         json={"name": "over-rest", "description": "x"})
    body = xmlrpc.client.dumps(({"Bugzilla_api_key": admin_key, "name": "over-xmlrpc",
                                 "description": "x"},), "Keyword.create", allow_none=True)
    client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    client.simulate_post("/jsonrpc.cgi", json={
        "method": "Keyword.create", "id": 1,
        "params": [{"Bugzilla_api_key": admin_key, "name": "over-jsonrpc",
                    "description": "x"}]})
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    browser.get("/editkeywords.cgi")
    browser.post("/editkeywords.cgi", {"action": "new", "name": "over-page",
                                       "description": "x"})
    assert [row for row in entries(services) if row[1] == "Bugzilla::Keyword"] == [
        (ADMIN, "Bugzilla::Keyword", name)
        for name in ("over-rest", "over-xmlrpc", "over-jsonrpc", "over-page")]


def test_the_command_line_changes_are_audited_without_an_account(config, services):
    out, err = io.StringIO(), io.StringIO()
    assert commands.manage_parameters(config, ["useqacontact=1"], out, err) == 0
    assert commands.create_api_key(config, ADMIN, "script", out, err) == 0
    assert entries(services)[-2:] == [(None, "Bugzilla::Param", "useqacontact"),
                                      (None, "Bugzilla::User", ADMIN)]
    key_id = services.query("SELECT MAX(id) FROM api_keys")[0][0]
    assert services.query("SELECT field, removed, added FROM audit_log ORDER BY id DESC"
                          " LIMIT 1") == [("api_key", "", str(key_id))]
    # The secret printed is never in the log.
    assert out.getvalue().split()[-1] not in str(services.query("SELECT * FROM audit_log"))


def test_a_deleted_objects_entries_keep_its_name(services):
    services.runner.call(OPERATIONS["Component.create"], {
        "product": "TestProduct", "name": "Doomed", "description": "x",
        "default_assignee": ADMIN}, services.user_id(ADMIN))
    services.runner.call(OPERATIONS["Component.delete"], {
        "names": [{"product": "TestProduct", "component": "Doomed"}]}, services.user_id(ADMIN))
    answer = services.runner.call(OPERATIONS["Bugzilla.audit_log"], {"object": "doomed"},
                                  services.user_id(ADMIN))
    assert [(e["object_name"], e["field"], e["removed"]) for e in answer["entries"]] == [
        ("Doomed", None, "__remove__"), ("Doomed", None, None)]


def test_entries_written_before_names_were_kept_get_their_objects_name(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("ALTER TABLE audit_log DROP COLUMN object_name")
        conn.execute("INSERT INTO audit_log (user_id, class, object_id, field, at_time)"
                     " VALUES (NULL, 'Bugzilla::Product', 1, NULL, '2026-01-01 00:00:00')")
        conn.execute("INSERT INTO audit_log (user_id, class, object_id, field, at_time)"
                     " VALUES (NULL, 'Bugzilla::Param', 0, 'urlbase', '2026-01-01 00:00:00')")
        conn.execute("INSERT INTO audit_log (user_id, class, object_id, field, at_time)"
                     " VALUES (NULL, 'Bugzilla::Keyword', 999, NULL, '2026-01-01 00:00:00')")
        audit.name_old_entries(conn)
    assert services.query("SELECT class, object_name FROM audit_log ORDER BY id") == [
        ("Bugzilla::Product", "TestProduct"), ("Bugzilla::Param", "urlbase"),
        ("Bugzilla::Keyword", "")]


# Reading it: GET /rest/audit_log ---------------------------------------------------------

@pytest.fixture
def history(services):
    """Changes by the administrator on two days and one from the command line."""
    admin = services.user_id(ADMIN)
    with freeze_time("2026-05-01 10:00:00"):
        services.runner.call(OPERATIONS["Product.create"], {
            "name": "Garden Tools", "description": "Rakes", "version": "1"}, admin)
    with freeze_time("2026-05-03 12:00:00"):
        services.runner.call(OPERATIONS["Keyword.create"], {
            "name": "garden-regression", "description": "x"}, admin)
        services.runner.call(OPERATIONS["Bugzilla.update_parameters"], {"useqacontact": "1"},
                             admin)
    with freeze_time("2026-05-04 08:00:00"):
        # As the command line changes a parameter: in a unit of work, without an account.
        with services.units.context(None, write=True) as ctx:
            settings.change(ctx, {"usetargetmilestone": "1"})


def read(client, key, **params):
    return client.simulate_get("/rest/audit_log", params=dict(params, Bugzilla_api_key=key))


def test_admin_reads_and_filters_the_log_over_rest(client, history, admin_key):
    answer = read(client, admin_key)
    assert answer.status_code == 200
    rows = [(e["user"], e["class"], e["object_name"], e["field"], e["at_time"])
            for e in answer.json["entries"]]
    assert rows[0] == (None, "Bugzilla::Param", "usetargetmilestone", "usetargetmilestone",
                       "2026-05-04T08:00:00Z")
    assert ("admin@example.com", "Bugzilla::Product", "Garden Tools", None,
            "2026-05-01T10:00:00Z") in rows
    assert answer.json["total_matches"] == len(rows)
    assert "Bugzilla::Keyword" in answer.json["classes"]
    names = {e["object_name"] for e in read(client, admin_key, object="GARDEN").json["entries"]}
    assert names == {"Garden Tools", "garden-regression"}
    names = {e["object_name"] for e in read(client, admin_key,
                                            object="garden tools").json["entries"]}
    assert names == {"Garden Tools"}
    only = read(client, admin_key, **{"class": "Keyword"}).json["entries"]
    assert {e["object_name"] for e in only} == {"garden-regression"}
    by_cli = read(client, admin_key, user="").json["entries"]
    assert [e["object_name"] for e in by_cli] == ["usetargetmilestone"]
    by_admin = read(client, admin_key, user="ADMIN@example.com").json["entries"]
    assert len(by_admin) == len(rows) - 1
    day = read(client, admin_key, since="2026-05-03", until="2026-05-03").json["entries"]
    assert {e["object_name"] for e in day} == {"garden-regression", "useqacontact"}
    page = read(client, admin_key, limit=1, offset=1).json
    assert len(page["entries"]) == 1 and page["entries"][0]["id"] == answer.json["entries"][1]["id"]
    # The like-pattern characters are words like any other.
    assert read(client, admin_key, object="%").json["entries"] == []


def test_wrong_filters_answer_their_errors(client, history, admin_key):
    assert read(client, admin_key, since="yesterday").json["code"] == 56
    assert read(client, admin_key, limit=5000).json["code"] == 54
    assert read(client, admin_key, colour="red").json["code"] == 53


def test_only_admins_read_the_log(client, services, history, plain_key):
    assert read(client, plain_key).json["code"] == 304
    refused = client.simulate_get("/rest/audit_log")
    assert refused.json["code"] == 410
    answer = client.simulate_post("/jsonrpc.cgi", json={
        "method": "Bugzilla.audit_log", "id": 1, "params": [{"Bugzilla_api_key": plain_key}]})
    assert answer.json["error"]["code"] == 304


def test_xmlrpc_answers_times_as_datetimes(client, history, admin_key):
    body = xmlrpc.client.dumps(({"Bugzilla_api_key": admin_key, "limit": 1},),
                               "Bugzilla.audit_log")
    resp = client.simulate_post("/xmlrpc.cgi", body=body, headers={"Content-Type": "text/xml"})
    entry = xmlrpc.client.loads(resp.content)[0][0]["entries"][0]
    assert isinstance(entry["at_time"], xmlrpc.client.DateTime)


# The page ---------------------------------------------------------------------------------

def test_the_page_lists_and_filters_the_changes(app, history):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    index = browser.get("/admin.cgi")
    assert 'href="/auditlog.cgi"' in index.text
    page = browser.get("/auditlog.cgi")
    text = text_of(page.text)
    assert page.status_code == 200
    assert "Garden Tools" in text and "usetargetmilestone" in text and "(no account)" in text
    filtered = browser.get("/auditlog.cgi?object=garden&class=Bugzilla%3A%3AKeyword")
    rows = re.findall(r"<tr>\s*<td class=\"when\">", filtered.text)
    assert len(rows) == 1 and "garden-regression" in filtered.text
    assert 'value="garden"' in filtered.text
    assert '<option value="Bugzilla::Keyword" selected>' in filtered.text
    cli = browser.get("/auditlog.cgi?no_account=1")
    assert len(re.findall(r"<tr>\s*<td class=\"when\">", cli.text)) == 1


def test_a_wrong_date_is_shown_on_the_form_as_typed_with_the_reason(app, history):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    page = browser.get("/auditlog.cgi?since=last+week&object=garden")
    assert page.status_code == 400
    assert 'role="alert"' in page.text and "is not a legal date" in page.text
    assert 'value="last week"' in page.text and 'value="garden"' in page.text


def test_a_plain_user_and_a_visitor_are_refused(app, history, plain_key):
    browser = Browser(app)
    page = browser.get("/auditlog.cgi")
    assert page.status_code == 401 and "Sign in" in page.text and "Garden" not in page.text
    browser.login(PLAIN, PASSWORDS[PLAIN])
    page = browser.get("/auditlog.cgi")
    assert page.status_code == 401 and "Sorry" in page.text and "Garden" not in page.text
    assert 'href="/auditlog.cgi"' not in browser.get("/admin.cgi").text
