"""Parameters: GET /rest/parameters tiers, PUT /rest/parameters (by
tweakparams members), their audit and GET /rest/last_audit_time, and requirelogin."""

from datetime import datetime, timezone

import pytest
from freezegun import freeze_time

from accounts import ADMIN
from bugsvc.catalogue import settings
from bugsvc.errors import ServiceError
from bugsvc.services import instance
from bugsvc.store import audit


@pytest.fixture
def plain(services):
    return services.add_user("plain@example.com", password="plain-password")


@pytest.fixture
def tweaker(services):
    return services.add_user("tweaker@example.com", groups=("tweakparams",))


def stored(services):
    return dict(services.query("SELECT name, value FROM params"))


def update(services, changes, as_user=ADMIN, now=None):
    return services.call(instance.update_parameters, changes, as_user=as_user, now=now)


# Reading ------------------------------------------------------------------------------

def test_the_first_administrator_is_the_maintainer_of_a_new_installation(services):
    # As Bugzilla's setup makes its first administrator the maintainer.
    assert stored(services)["maintainer"] == ADMIN
    assert settings.DEFINITIONS["maintainer"][0] == ""


def test_anonymous_sees_only_maintainer_and_requirelogin(client):
    answer = client.simulate_get("/rest/parameters")
    assert answer.status_code == 200
    assert answer.json == {"parameters": {"maintainer": ADMIN, "requirelogin": "0"}}
    # Over RPC too.
    answer = client.simulate_post("/jsonrpc.cgi", json={"method": "Bugzilla.parameters",
                                                        "params": [{}], "id": 1}).json
    assert answer["result"] == {"parameters": {"maintainer": ADMIN, "requirelogin": "0"}}


# The names the interface document lists for a logged-in caller.
DOCUMENTED_LOGGED_IN = (
    "allowemailchange", "attachment_base", "commentonchange_resolution", "commentonduplicate",
    "cookiepath", "defaultopsys", "defaultplatform", "defaultpriority", "defaultseverity",
    "duplicate_or_move_bug_status", "emailregexpdesc", "emailsuffix",
    "letsubmitterchoosemilestone", "letsubmitterchoosepriority", "mailfrom", "maintainer",
    "maxattachmentsize", "maxlocalattachment", "musthavemilestoneonaccept",
    "noresolveonopenblockers", "password_complexity", "rememberlogin", "requirelogin",
    "search_allow_no_criteria", "urlbase", "use_see_also", "useclassification",
    "usemenuforusers", "useqacontact", "usestatuswhiteboard", "usetargetmilestone")


def test_logged_in_user_sees_documented_set_only(client, services, plain):
    seen = services.call(instance.parameters, as_user=plain, write=False)["parameters"]
    assert set(seen) == set(DOCUMENTED_LOGGED_IN)
    key = services.api_key("plain@example.com")
    answer = client.simulate_get("/rest/parameters", params={"Bugzilla_api_key": key}).json
    assert set(answer["parameters"]) == set(DOCUMENTED_LOGGED_IN)
    assert (answer["parameters"]["cookiepath"], answer["parameters"]["rememberlogin"],
            answer["parameters"]["usemenuforusers"],
            answer["parameters"]["allowemailchange"]) == ("/", "on", "0", "1")
    answer = client.simulate_post("/jsonrpc.cgi", json={
        "method": "Bugzilla.parameters", "params": [{"Bugzilla_api_key": key}], "id": 1}).json
    assert set(answer["result"]["parameters"]) == set(DOCUMENTED_LOGGED_IN)
    assert (seen["defaultseverity"] == "enhancement"
            and seen["duplicate_or_move_bug_status"] == "RESOLVED")
    assert "insidergroup" not in seen and "emailregexp" not in seen


def test_tweakparams_member_sees_every_parameter_as_strings(client, services, tweaker):
    key = services.api_key("tweaker@example.com")
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": key}).json["parameters"]
    assert set(seen) == set(settings.DEFINITIONS)
    assert seen["maxusermatches"] == "1000" and seen["timetrackinggroup"] == "editbugs"
    assert all(isinstance(value, str) for value in seen.values())


def test_include_and_exclude_fields_choose_parameter_names(services):
    chosen = services.call(instance.parameters, {"include_fields": "maintainer,urlbase"},
                           as_user=ADMIN)["parameters"]
    assert chosen == {"maintainer": ADMIN, "urlbase": ""}
    rest = services.call(instance.parameters, {"exclude_fields": "maintainer"},
                         as_user=ADMIN)["parameters"]
    assert "maintainer" not in rest and "urlbase" in rest


def test_include_fields_cannot_reveal_hidden_parameters(client):
    answer = client.simulate_get("/rest/parameters", params={"include_fields": "insidergroup,_all"})
    assert answer.json == {"parameters": {"maintainer": ADMIN, "requirelogin": "0"}}


# Changing -------------------------------------------------------------------------------

def test_anonymous_change_is_refused_with_410(client):
    answer = client.simulate_put("/rest/parameters", json={"maintainer": "x@example.com"})
    assert (answer.status_code, answer.json["code"]) == (401, 410)
    assert client.simulate_get("/rest/parameters").json["parameters"]["maintainer"] == ADMIN


def test_user_without_tweakparams_is_refused_with_304(client, services, plain):
    key = services.api_key("plain@example.com")
    answer = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": key},
                                 json={"maintainer": "x@example.com"})
    assert (answer.status_code, answer.json["code"]) == (401, 304)
    assert stored(services)["maintainer"] == ADMIN


def test_tweakparams_member_changes_parameters_over_http(client, services, tweaker):
    key = services.api_key("tweaker@example.com")
    answer = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": key},
                                 json={"maintainer": "boss@example.com", "usetargetmilestone": True,
                                       "maxusermatches": 50, "defaultseverity": "normal"})
    assert answer.status_code == 200
    assert answer.json == {"parameters": {
        "maintainer": {"added": "boss@example.com", "removed": ADMIN},
        "usetargetmilestone": {"added": "1", "removed": "0"},
        "maxusermatches": {"added": "50", "removed": "1000"},
        "defaultseverity": {"added": "normal", "removed": "enhancement"},
    }}
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": key}).json["parameters"]
    assert (seen["maintainer"], seen["usetargetmilestone"], seen["maxusermatches"],
            seen["defaultseverity"]) == ("boss@example.com", "1", "50", "normal")


def test_unchanged_values_are_not_reported_or_audited(services):
    answer = update(services, {"requirelogin": "0", "maxattachmentsize": "1000",
                               "useqacontact": "on"})
    assert answer == {"parameters": {"useqacontact": {"added": "1", "removed": "0"}}}
    assert services.query("SELECT field FROM audit_log") == [("useqacontact",)]


@pytest.mark.parametrize("value, expected", [
    (True, "1"), (False, "0"), (1, "1"), (0, "0"), ("true", "1"), ("off", "0"), (" 1 ", "1")])
def test_boolean_parameters_accept_the_usual_spellings(services, value, expected):
    update(services, {"usestatuswhiteboard": "1" if expected == "0" else "0"})
    update(services, {"usestatuswhiteboard": value})
    assert stored(services)["usestatuswhiteboard"] == expected


def test_group_parameter_takes_the_groups_own_spelling(services):
    update(services, {"insidergroup": "EditBugs"})
    assert stored(services)["insidergroup"] == "editbugs"
    update(services, {"insidergroup": ""})
    assert stored(services)["insidergroup"] == ""


def test_unknown_name_is_51_and_nothing_is_stored(client, admin_key, services):
    before = stored(services)
    answer = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                 json={"maintainer": "ok@example.com", "no_such_param": "1"})
    assert (answer.status_code, answer.json["code"]) == (404, 51)
    assert "no_such_param" in answer.json["message"]
    assert stored(services) == before
    assert services.query("SELECT COUNT(*) FROM audit_log") == [(0,)]


def test_attachment_base_must_be_another_host_than_urlbase(services):
    update(services, {"urlbase": "https://bugs.example.com/"})
    with pytest.raises(ServiceError) as caught:
        update(services, {"attachment_base": "HTTPS://bugs.example.com/files/"})
    assert caught.value.code == 32000 and "another host" in caught.value.message
    update(services, {"attachment_base": "https://files.example.com/"})
    assert stored(services)["attachment_base"] == "https://files.example.com/"


@pytest.mark.parametrize("name, value", [
    ("usetargetmilestone", "maybe"),
    ("maxattachmentsize", "-5"),
    ("maxattachmentsize", "lots"),
    ("password_complexity", "strong"),
    ("insidergroup", "no-such-group"),
    ("defaultpriority", "Urgent"),
    ("defaultpriority", ""),
    ("defaultplatform", "Amiga"),
    ("duplicate_or_move_bug_status", "CONFIRMED"),
    ("duplicate_or_move_bug_status", "NOPE"),
    ("urlbase", "ftp://bugs.example.com/"),
    ("urlbase", "https://bugs.example.com"),
    ("attachment_base", "https://files.example.com"), ("attachment_base", "javascript:x/"),
    ("maintainer", "not an address"),
    ("emailregexp", "(unclosed"),
    ("maintainer", ["a@example.com"]),
    ("maxusermatches", {"value": 3}),
    ("emailsuffix", None),
    ("mail_delivery_method", "Sendmail"),
    ("smtpserver", "mail.example.com:99999"),
    ("smtpserver", "mail example.com"),
    ("smtpserver", "mail.example.com:port"),
    ("createemailregexp", "[unclosed"),
    ("webhooks_group", "no-such-group"),
])
def test_invalid_value_is_32000_and_nothing_is_stored(services, name, value):
    before = stored(services)
    with pytest.raises(ServiceError) as caught:
        update(services, {"maintainer": "first@example.com", name: value})
    assert caught.value.code == 32000 and name in caught.value.message
    assert stored(services) == before


def test_one_bad_value_among_several_over_http_stores_nothing(client, admin_key, services):
    before = stored(services)
    answer = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                 json={"maintainer": "a@example.com", "useqacontact": 1,
                                       "maxusermatches": "many"})
    assert (answer.status_code, answer.json["code"]) == (400, 32000)
    assert stored(services) == before
    assert services.query("SELECT COUNT(*) FROM audit_log") == [(0,)]


@pytest.mark.parametrize("name, value", [
    ("defaultplatform", ""), ("defaultopsys", "Linux"),
    ("duplicate_or_move_bug_status", "VERIFIED"),
    ("urlbase", "https://bugs.example.com/"), ("emailsuffix", "@example.com"),
    ("attachment_base", "https://files.example.net/%bugid%/"),
    ("maintainer", ""), ("emailregexp", r"^[^@]+@example\.com$"),
    ("password_complexity", "letters_numbers"), ("comment_taggers_group", "canconfirm"),
    ("mail_delivery_method", "SMTP"), ("mail_delivery_method", "Test"),
    ("smtpserver", "mail.example.com:587"), ("smtpserver", "[::1]:25"), ("smtpserver", ""),
    ("mailfrom", "Bugs <bugs@example.com>"), ("createemailregexp", r"@example\.com$"),
    ("globalwatchers", "admin@example.com, qa@example.com"), ("webhooks_enabled", "1"),
])
def test_valid_values_are_stored(services, name, value):
    update(services, {name: value})
    assert stored(services)[name] == value


# Parameters of the web pages, and those not offered ----------------------------------------------

# Bugzilla's defaults for the parameters that govern the web pages.
PAGE_PARAMETERS = {"allowemailchange": "1", "cookiepath": "/", "default_search_limit": "500",
                   "rememberlogin": "on", "usemenuforusers": "0"}
NOT_OFFERED = ("allowuserdeletion",)


def test_the_page_parameters_are_offered_with_bugzillas_defaults(client, admin_key, services):
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    assert {name: seen[name] for name in PAGE_PARAMETERS} == PAGE_PARAMETERS
    assert {name: stored(services)[name] for name in PAGE_PARAMETERS} == PAGE_PARAMETERS
    answer = update(services, {"cookiepath": "/bugs/", "rememberlogin": "defaulton",
                               "usemenuforusers": True, "default_search_limit": 50,
                               "allowemailchange": "0"})
    assert answer == {"parameters": {
        "cookiepath": {"added": "/bugs/", "removed": "/"},
        "rememberlogin": {"added": "defaulton", "removed": "on"},
        "usemenuforusers": {"added": "1", "removed": "0"},
        "default_search_limit": {"added": "50", "removed": "500"},
        "allowemailchange": {"added": "0", "removed": "1"}}}


@pytest.mark.parametrize("name, value", [
    ("cookiepath", "bugs/"), ("cookiepath", "/a b"), ("cookiepath", "/x;domain=evil"),
    ("cookiepath", "/x,y"), ("cookiepath", ""), ("rememberlogin", "always"),
    ("rememberlogin", "ON"), ("default_search_limit", "-1"), ("default_search_limit", "many"),
    ("usemenuforusers", "maybe"),
])
def test_page_parameters_refuse_values_they_cannot_take(services, name, value):
    before = stored(services)
    with pytest.raises(ServiceError) as caught:
        update(services, {name: value})
    assert caught.value.code == 32000
    assert stored(services) == before


def test_parameters_without_an_effect_are_not_offered(client, admin_key, services):
    services.add_user("plain@example.com")
    plain_key = services.api_key("plain@example.com")
    for key in (admin_key, plain_key):
        seen = client.simulate_get("/rest/parameters",
                                   params={"Bugzilla_api_key": key}).json["parameters"]
        assert not set(NOT_OFFERED) & set(seen)
    assert not set(NOT_OFFERED) & set(settings.DEFINITIONS)


@pytest.mark.parametrize("name", NOT_OFFERED)
def test_changing_one_is_51_like_an_unknown_name(client, admin_key, services, name):
    before = services.query("SELECT name, value FROM params ORDER BY name")
    answer = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                 json={name: "1"})
    assert (answer.status_code, answer.json["code"]) == (404, 51)
    assert answer.json["message"] == f"There is no parameter named '{name}'."
    assert services.query("SELECT name, value FROM params ORDER BY name") == before


def test_a_value_stored_by_an_earlier_version_is_ignored(client, admin_key, services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO params (name, value) VALUES ('allowuserdeletion', '1')")
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    assert "allowuserdeletion" not in seen and seen["maxusermatches"] == "1000"
    changed = update(services, {"maxusermatches": 5})
    assert changed == {"parameters": {"maxusermatches": {"added": "5", "removed": "1000"}}}
    assert services.query("SELECT value FROM params WHERE name = 'allowuserdeletion'") == [
        ("1",)]


def test_update_with_an_unknown_parameter_and_a_known_one_changes_nothing(services):
    with pytest.raises(ServiceError) as caught:
        update(services, {"maxusermatches": 5, "allowuserdeletion": "1"})
    assert caught.value.code == 51
    assert services.query("SELECT value FROM params WHERE name = 'maxusermatches'") == [("1000",)]


def test_allowbugdeletion_is_shown_to_tweakparams_members_only(client, admin_key, services):
    """As Bugzilla 5.2: off by default, among the parameters only those who
    may change them read (neither its logged-in nor its anonymous list)."""
    services.add_user("plain@example.com")
    plain_key = services.api_key("plain@example.com")
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    assert seen["allowbugdeletion"] == "0"
    for params in ({"Bugzilla_api_key": plain_key}, {}):
        assert "allowbugdeletion" not in client.simulate_get(
            "/rest/parameters", params=params).json["parameters"]
    assert update(services, {"allowbugdeletion": True}) == {
        "parameters": {"allowbugdeletion": {"added": "1", "removed": "0"}}}


# Audit and last_audit_time -----------------------------------------------------------------

def test_last_audit_time_is_null_when_nothing_was_audited(client):
    answer = client.simulate_get("/rest/last_audit_time")
    assert answer.status_code == 200 and answer.json == {"last_audit_time": None}


def test_parameter_change_is_audited_and_moves_last_audit_time(client, admin_key, services):
    with freeze_time("2026-02-03 04:05:06"):
        client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                            json={"maintainer": "boss@example.com"})
    assert services.query("SELECT class, field, removed, added, at_time FROM audit_log") == [
        ("Bugzilla::Param", "maintainer", ADMIN, "boss@example.com", "2026-02-03 04:05:06")]
    assert client.simulate_get("/rest/last_audit_time").json == {
        "last_audit_time": "2026-02-03T04:05:06Z"}
    with freeze_time("2026-02-04 00:00:00"):
        client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                            json={"maintainer": "other@example.com"})
    assert client.simulate_get("/rest/last_audit_time").json == {
        "last_audit_time": "2026-02-04T00:00:00Z"}


def fake_admin_change(class_name, object_id=1):
    def change(ctx, params):
        audit.record(ctx, class_name, object_id, "name", "old", "new")
    return change


@pytest.fixture
def audited(services):
    """A Product change on day 1, a Param change on day 2, a Group change on day 3."""
    def at(day):
        return datetime(2026, 1, day, 12, 0, 0, tzinfo=timezone.utc)
    services.call(fake_admin_change("Product"), as_user=ADMIN, now=at(1))
    update(services, {"maintainer": "m@example.com"}, now=at(2))
    services.call(fake_admin_change("Group"), as_user=ADMIN, now=at(3))


@pytest.mark.parametrize("classes, expected", [
    (None, "2026-01-03T12:00:00Z"),
    ("Bugzilla::Product", "2026-01-01T12:00:00Z"),
    ("Service::Product", "2026-01-01T12:00:00Z"),
    (["Service::Product", "Bugzilla::Param"], "2026-01-02T12:00:00Z"),
    (["Bugzilla::Product", "not a class", "Bugzilla::Pro duct"], "2026-01-01T12:00:00Z"),
    (["not a class", "Product"], "2026-01-03T12:00:00Z"),     # nothing valid: every class
    ("Bugzilla::Keyword", None),
    ("Bugzilla", None),
])
def test_last_audit_time_class_filter(client, audited, classes, expected):
    params = {} if classes is None else {"class": classes}
    answer = client.simulate_get("/rest/last_audit_time", params=params)
    assert answer.status_code == 200
    assert answer.json == {"last_audit_time": expected}


# requirelogin ------------------------------------------------------------------------------

@pytest.fixture
def login_required(services):
    update(services, {"requirelogin": 1})


@pytest.mark.parametrize("path", ["/rest/extensions", "/rest/time", "/rest/last_audit_time"])
def test_requirelogin_closes_other_calls_to_anonymous_callers(client, login_required, path):
    answer = client.simulate_get(path)
    assert (answer.status_code, answer.json["code"]) == (401, 410)


@pytest.mark.parametrize("path", ["/rest/version", "/rest/timezone", "/rest/parameters"])
def test_requirelogin_keeps_version_timezone_parameters_open(client, login_required, path):
    assert client.simulate_get(path).status_code == 200


def test_requirelogin_parameters_tell_anonymous_callers_to_log_in(client, login_required):
    assert client.simulate_get("/rest/parameters").json == {
        "parameters": {"maintainer": ADMIN, "requirelogin": "1"}}


def test_requirelogin_keeps_login_open(client, login_required, services, plain):
    answer = client.simulate_get("/rest/login", params={"login": "plain@example.com",
                                                        "password": "plain-password"})
    assert answer.status_code == 200 and answer.json["id"] == plain


def test_requirelogin_lets_logged_in_callers_through(client, login_required, services, plain):
    key = services.api_key("plain@example.com")
    answer = client.simulate_get("/rest/time", params={"Bugzilla_api_key": key})
    assert answer.status_code == 200 and answer.json["tz_name"] == "UTC"


def test_anonymous_callers_use_open_calls_while_requirelogin_is_off(client):
    for path in ("/rest/extensions", "/rest/time", "/rest/last_audit_time"):
        assert client.simulate_get(path).status_code == 200


# Mail parameters ------------------------------------------------------------------------------

def test_mail_parameters_have_bugzillas_defaults(services):
    values = stored(services)
    assert {name: values[name] for name in (
        "mailfrom", "smtpserver", "smtp_username", "smtp_password", "smtp_ssl",
        "globalwatchers", "createemailregexp")} == {
        "mailfrom": "bugzilla-daemon", "smtpserver": "localhost", "smtp_username": "",
        "smtp_password": "", "smtp_ssl": "0", "globalwatchers": "", "createemailregexp": ".*"}
    # Sendmail is not offered; mail goes nowhere until it is set up.
    assert values["mail_delivery_method"] == "None"


def test_mailfrom_is_shown_to_logged_in_callers_not_smtp_settings(client, plain_key):
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": plain_key}).json["parameters"]
    assert seen["mailfrom"] == "bugzilla-daemon"
    assert not {"smtpserver", "smtp_username", "smtp_password", "mail_delivery_method",
                "createemailregexp", "globalwatchers"} & set(seen)
    assert "mailfrom" not in client.simulate_get("/rest/parameters").json["parameters"]


def test_the_smtp_password_is_never_shown_answered_or_audited(client, admin_key, services):
    answer = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                 json={"smtp_password": "s3cret pass"})
    assert answer.status_code == 200
    assert answer.json == {"parameters": {"smtp_password": {"added": "********",
                                                            "removed": ""}}}
    # Stored as given (the mailer needs it), and shown to nobody, not even tweakparams.
    assert services.query("SELECT value FROM params WHERE name = 'smtp_password'") == [
        ("s3cret pass",)]
    seen = client.simulate_get("/rest/parameters",
                               params={"Bugzilla_api_key": admin_key}).json["parameters"]
    assert seen["smtp_password"] == "********"
    audited = services.query("SELECT removed, added FROM audit_log WHERE field = 'smtp_password'")
    assert audited == [("", "********")]
    # The mask sent back (a form showing it) changes nothing.
    again = client.simulate_put("/rest/parameters", params={"Bugzilla_api_key": admin_key},
                                json={"smtp_password": "********", "smtp_username": "bugs"})
    assert again.json == {"parameters": {"smtp_username": {"added": "bugs", "removed": ""}}}
    assert services.query("SELECT value FROM params WHERE name = 'smtp_password'") == [
        ("s3cret pass",)]
    assert "s3cret" not in str(services.query("SELECT * FROM audit_log"))
