"""Last visits of bugs (interface "Bug last visited")."""

from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from bug_rows import ADMIN, add_bug, add_group
from bugsvc.errors import ServiceError
from bugsvc.services import last_visit
from conftest import world_fixture


USER = "user@example.com"
OTHER = "other@example.com"
MEMBER = "member@example.com"


@world_fixture
def bugs(services):
    services.add_user(USER)
    services.add_user(OTHER)
    services.add_user(MEMBER)
    add_group(services, "secret", members=[MEMBER])
    return {
        "reported": add_bug(services, summary="Reported", reporter=USER, aliases=["rep"]),
        "assigned": add_bug(services, summary="Assigned", assigned_to=USER),
        "cc": add_bug(services, summary="CC", cc=[USER]),
        "foreign": add_bug(services, summary="Not involved"),
        "hidden": add_bug(services, summary="Hidden", groups=["secret"], reporter=USER,
                          assigned_to=MEMBER),
    }


def error_code(services, function, params, as_user=None):
    with pytest.raises(ServiceError) as caught:
        services.call(function, params, as_user=as_user)
    return caught.value.code


def visits(services, login):
    return services.query("SELECT v.bug_id, v.last_visit_ts FROM bug_user_last_visit v"
                          " JOIN users u ON u.id = v.user_id WHERE u.login = ? ORDER BY v.bug_id",
                          (login,))


@freeze_time("2026-04-05 06:07:08")
def test_post_one_bug_over_http_answers_a_bare_array(client, services, bugs):
    key = services.api_key(USER)
    resp = client.simulate_post(f"/rest/bug_user_last_visit/{bugs['reported']}",
                                params={"Bugzilla_api_key": key})
    assert resp.status_code == 200
    assert resp.json == [{"id": bugs["reported"], "last_visit_ts": "2026-04-05T06:07:08Z"}]
    assert visits(services, USER) == [(bugs["reported"], "2026-04-05 06:07:08")]


def test_post_many_by_ids_in_the_body_and_again_later(client, services, bugs):
    key = services.api_key(USER)
    wanted = [bugs["cc"], "rep", bugs["assigned"]]
    with freeze_time("2026-04-05 06:00:00"):
        resp = client.simulate_post("/rest/bug_user_last_visit", params={"Bugzilla_api_key": key},
                                    json={"ids": wanted})
    assert [v["id"] for v in resp.json] == [bugs["cc"], bugs["reported"], bugs["assigned"]]
    with freeze_time("2026-04-06 07:00:00"):
        services.call(last_visit.update, {"ids": [bugs["cc"]]}, as_user=USER)
    assert dict(visits(services, USER)) == {
        bugs["reported"]: "2026-04-05 06:00:00", bugs["assigned"]: "2026-04-05 06:00:00",
        bugs["cc"]: "2026-04-06 07:00:00"}


def test_post_needs_login_ids_visibility_and_involvement(client, services, bugs):
    resp = client.simulate_post(f"/rest/bug_user_last_visit/{bugs['reported']}")
    assert resp.status_code == 401 and resp.json["code"] == 410
    assert error_code(services, last_visit.update, {}, USER) == 50
    # USER does not see every bug, so a missing id answers like a hidden one.
    assert error_code(services, last_visit.update, {"ids": [99999]}, USER) == 102
    assert error_code(services, last_visit.update, {"ids": [bugs["hidden"]]}, OTHER) == 102
    assert error_code(services, last_visit.update,
                      {"ids": [bugs["reported"], bugs["foreign"]]}, USER) == 32000
    assert visits(services, USER) == []


def test_reporter_of_a_hidden_bug_may_record_it(services, bugs):
    services.call(last_visit.update, {"ids": [bugs["hidden"]]}, as_user=USER)
    assert [row[0] for row in visits(services, USER)] == [bugs["hidden"]]


def test_get_without_ids_gives_the_20_most_recent(client, services):
    services.add_user(USER)
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    created = []
    for n in range(23):
        bug_id = add_bug(services, summary=f"Bug {n}", reporter=USER)
        services.call(last_visit.update, {"ids": [bug_id]}, as_user=USER,
                      now=start + timedelta(hours=n))
        created.append(bug_id)
    key = services.api_key(USER)
    resp = client.simulate_get("/rest/bug_user_last_visit", params={"Bugzilla_api_key": key})
    assert resp.status_code == 200
    assert [v["id"] for v in resp.json] == list(reversed(created))[:20]
    assert resp.json[0]["last_visit_ts"] == "2026-01-01T22:00:00Z"


def test_get_by_ids_path_and_query_are_merged(client, services, bugs):
    services.call(last_visit.update, {"ids": [bugs["reported"], bugs["cc"], bugs["assigned"]]},
                  as_user=USER)
    key = services.api_key(USER)
    resp = client.simulate_get(f"/rest/bug_user_last_visit/{bugs['cc']}",
                               query_string=f"ids={bugs['reported']}&Bugzilla_api_key={key}")
    assert resp.status_code == 200
    assert sorted(v["id"] for v in resp.json) == sorted([bugs["cc"], bugs["reported"]])
    never = services.call(last_visit.get, {"ids": [bugs["foreign"], 99999, "nope"]}, as_user=USER)
    assert never == []


def test_get_hides_visits_of_bugs_no_longer_visible(services, bugs):
    services.call(last_visit.update, {"ids": [bugs["hidden"], bugs["reported"]]}, as_user=USER)
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE bugs SET is_creator_accessible = 0 WHERE id = ?", (bugs["hidden"],))
    assert [v["id"] for v in services.call(last_visit.get, {}, as_user=USER)] == [bugs["reported"]]
    assert services.call(last_visit.get, {"ids": [bugs["hidden"]]}, as_user=USER) == []


def test_visits_are_per_user(services, bugs):
    services.call(last_visit.update, {"ids": [bugs["reported"]]}, as_user=USER)
    assert services.call(last_visit.get, {}, as_user=ADMIN) == []


def test_get_needs_login(client):
    resp = client.simulate_get("/rest/bug_user_last_visit")
    assert resp.status_code == 401 and resp.json["code"] == 410
    assert client.simulate_get("/rest/bug_user_last_visit/1").json["code"] == 410


def test_include_fields_shape_the_records(client, services, bugs):
    services.call(last_visit.update, {"ids": [bugs["reported"]]}, as_user=USER)
    key = services.api_key(USER)
    resp = client.simulate_get("/rest/bug_user_last_visit",
                               query_string=f"include_fields=id&Bugzilla_api_key={key}")
    assert resp.json == [{"id": bugs["reported"]}]
