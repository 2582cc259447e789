"""Instance information: version, extensions, timezone, time, parameters."""

from datetime import datetime, timezone

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
    assert anonymous == {"maintainer": "", "requirelogin": "0"}
    logged_in = services.call(instance.parameters, as_user=plain, write=False)["parameters"]
    assert "maxattachmentsize" in logged_in and logged_in["maxattachmentsize"] == "1000"
    assert "insidergroup" not in logged_in
    admin = services.call(instance.parameters, as_user="admin@example.com", write=False)["parameters"]
    assert admin["insidergroup"] == "" and admin["maxusermatches"] == "1000"
    assert all(isinstance(v, str) for v in admin.values())
