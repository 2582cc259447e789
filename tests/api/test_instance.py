"""Instance information: version, extensions, timezone, time, parameters."""

from freezegun import freeze_time

from bugsvc import __version__
from bugsvc.services import instance


def test_version_answers_compatibility_level(client):
    resp = client.simulate_get("/rest/version")
    assert resp.status_code == 200
    assert resp.json == {"version": "5.2"}


def test_extensions_name_bugsvc_with_its_version(client):
    assert client.simulate_get("/rest/extensions").json == {
        "extensions": {"bugsvc": {"version": __version__}}}


def test_timezone_is_utc(client):
    assert client.simulate_get("/rest/timezone").json == {"timezone": "+0000"}


@freeze_time("2026-03-04 05:06:07")
def test_time_reports_frozen_clock(client):
    body = client.simulate_get("/rest/time").json
    assert body == {"db_time": "2026-03-04T05:06:07Z", "web_time": "2026-03-04T05:06:07Z",
                    "web_time_utc": "2026-03-04T05:06:07Z", "tz_name": "UTC",
                    "tz_short_name": "UTC", "tz_offset": "+0000"}


def test_parameters_three_tiers(services):
    plain = services.add_user("plain@example.com")
    anonymous = services.call(instance.parameters, write=False)["parameters"]
    assert anonymous == {"maintainer": "admin@example.com", "requirelogin": "0"}
    logged_in = services.call(instance.parameters, as_user=plain, write=False)["parameters"]
    assert "maxattachmentsize" in logged_in and logged_in["maxattachmentsize"] == "1000"
    assert "insidergroup" not in logged_in
    admin = services.call(instance.parameters, as_user="admin@example.com",
                          write=False)["parameters"]
    assert admin["insidergroup"] == "" and admin["maxusermatches"] == "1000"
    assert all(isinstance(v, str) for v in admin.values())


@freeze_time("2026-03-04 05:06:07")
def test_instance_calls_answer_every_caller_alike(client, services, admin_key):
    services.add_user("plain@example.com")
    callers = [{}, {"Bugzilla_api_key": services.api_key("plain@example.com")},
               {"Bugzilla_api_key": admin_key}]
    for path in ("/rest/version", "/rest/extensions", "/rest/timezone", "/rest/time",
                 "/rest/last_audit_time"):
        answers = [client.simulate_get(path, params=credentials) for credentials in callers]
        assert [a.status_code for a in answers] == [200, 200, 200], path
        assert answers[0].json == answers[1].json == answers[2].json, path


def test_rest_cgi_is_an_alias(client):
    assert client.simulate_get("/rest.cgi/timezone").json == {"timezone": "+0000"}
