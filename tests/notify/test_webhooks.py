"""Webhooks with a real HTTP receiver on loopback: registering them
(bugzilla.mozilla.org's list, a secret shown once, URLs that may not reach
the server's own network), the payload of each event in
bugzilla.mozilla.org's format as the owner may see it, Standard Webhooks
signatures checked by a verifier written here from the specification, and
delivery: in order per bug, a failing receiver recovering, a failing bug
or a slow receiver holding up nobody else, webhooks that keep failing
disabled and their owners told."""

import base64
import hashlib
import hmac
import time

import pytest

from bug_support import (
    MANDATORY,
    NA,
    SHOWN,
    add_bug_group,
    control,
    file_bug,
    set_param,
    update_bug,
)
from bugsvc.services import (
    attachment as attachment_service,
    comment as comment_service,
    webhook as webhook_service,
)
from notify_support import deliver, use_smtp, wait_for


ADMIN = "admin@example.com"


# An independent verifier, written from the Standard Webhooks specification:
# the signed content is "{webhook-id}.{webhook-timestamp}.{body}", the key is
# the base64-decoded secret after "whsec_", each signature in the
# space-separated header is "v1," + base64(HMAC-SHA256), compared in constant
# time, and the timestamp must be close to now.
TOLERANCE_SECONDS = 5 * 60


def verify(secret, headers, body, now=None):
    """True when one of the call's signatures is the secret's."""
    msg_id = headers["webhook-id"]
    timestamp = headers["webhook-timestamp"]
    if abs((now or time.time()) - int(timestamp)) > TOLERANCE_SECONDS:
        return False
    key = base64.b64decode(secret.split("_", 1)[1])
    signed = msg_id.encode() + b"." + timestamp.encode() + b"." + body
    expected = base64.b64encode(hmac.new(key, signed, hashlib.sha256).digest()).decode()
    for item in headers["webhook-signature"].split(" "):
        version, _, value = item.partition(",")
        if version == "v1" and hmac.compare_digest(value, expected):
            return True
    return False


@pytest.fixture
def hooks(services, receiver):
    set_param(services, "webhooks_enabled", "1")
    set_param(services, "webhooks_allow_private_addresses", "1")    # the receiver is loopback
    services.add_user("dev@example.com", real_name="Dana Dev")
    return services


def register(services, url, as_user=ADMIN, **fields):
    params = {"name": fields.pop("name", "hook"), "url": url,
              "events": fields.pop("events", ["create", "change", "comment", "attachment",
                                              "attachment_change"]),
              "product": fields.pop("product", "TestProduct"), **fields}
    return services.call(webhook_service.create, params, as_user=as_user)


def bodies(receiver):
    return [call["json"] for call in receiver.calls]


# Registering ---------------------------------------------------------------------------

def test_registering_answers_the_secret_once_and_lists_bmos_fields(
        hooks, receiver, client, admin_key):
    answer = client.simulate_post("/rest/webhooks", params={"Bugzilla_api_key": admin_key},
                                  json={"name": "CI", "url": receiver.url,
                                        "events": "create,comment", "product": "TestProduct",
                                        "component": "TestComponent"})
    assert answer.status_code == 201
    assert answer.json["secret"].startswith("whsec_")
    assert len(base64.b64decode(answer.json["secret"][6:])) == 32
    listed = client.simulate_get("/rest/webhooks/list",
                                 params={"Bugzilla_api_key": admin_key}).json["webhooks"]
    assert listed == [{
        "id": answer.json["id"], "creator": ADMIN, "name": "CI", "url": receiver.url,
        "event": "create,comment", "product": "TestProduct", "component": "TestComponent",
        "enabled": True, "errors": 0, "pending": 0, "disabled_reason": "",
        "last_attempt": None, "last_success": None, "last_error": "",
        "previous_secret_valid_until": None}]
    assert answer.json["secret"] not in str(listed)


@pytest.mark.parametrize("url", ["http://127.0.0.1:9/x", "http://localhost/x",
                                 "http://10.0.0.5/hook", "http://[::1]/x",
                                 "http://169.254.169.254/latest/meta-data",
                                 "https://api.localhost/x", "ftp://example.com/x",
                                 "http://user:pw@example.com/x"])
def test_urls_into_the_servers_own_network_are_refused(services, url):
    set_param(services, "webhooks_enabled", "1")
    from bugsvc.errors import ServiceError
    with pytest.raises(ServiceError) as caught:
        register(services, url)
    assert caught.value.code == 32000
    assert services.query("SELECT COUNT(*) FROM webhooks") == [(0,)]


def test_a_name_that_resolves_to_a_private_address_is_refused_when_called(hooks, smtp):
    set_param(hooks, "webhooks_allow_private_addresses", "0")
    use_smtp(hooks, smtp)
    register(hooks, "http://localtest.invalid/hook")
    file_bug(hooks)
    deliver(hooks)
    [(state, error)] = hooks.query("SELECT state, last_error FROM outbox_messages"
                                   " WHERE channel = 'webhook'")
    assert state == "parked" and "cannot be resolved" in error


def test_who_may_register(services, client, plain_key, admin_key):
    body = {"name": "x", "url": "https://hooks.example.com/x", "events": ["create"],
            "product": "TestProduct"}
    answer = client.simulate_post("/rest/webhooks", params={"Bugzilla_api_key": admin_key},
                                  json=body)
    assert (answer.status_code, answer.json["code"]) == (400, 32000)     # turned off
    set_param(services, "webhooks_enabled", "1")
    assert client.simulate_post("/rest/webhooks", json=body).json["code"] == 410
    answer = client.simulate_post("/rest/webhooks", params={"Bugzilla_api_key": plain_key},
                                  json=dict(body, product="Any"))
    assert (answer.status_code, answer.json["code"]) == (401, 304)       # Any: admin only
    answer = client.simulate_post("/rest/webhooks", params={"Bugzilla_api_key": plain_key},
                                  json=body)
    assert answer.status_code == 201                                     # editbugs members
    set_param(services, "webhooks_group", "admin")
    answer = client.simulate_post("/rest/webhooks", params={"Bugzilla_api_key": plain_key},
                                  json=dict(body, name="y"))
    assert (answer.status_code, answer.json["code"]) == (401, 304)


def test_another_accounts_webhook_answers_like_a_missing_one(hooks, receiver, client,
                                                             plain_key, admin_key):
    hook = register(hooks, receiver.url)
    for path in (f"/rest/webhooks/{hook['id']}", "/rest/webhooks/999"):
        answer = client.simulate_put(path, params={"Bugzilla_api_key": plain_key},
                                     json={"enabled": False})
        assert (answer.status_code, answer.json["code"]) == (404, 51)
        assert answer.json["message"].startswith("There is no webhook with the id")
    assert client.simulate_get("/rest/webhooks/list",
                               params={"Bugzilla_api_key": plain_key}).json == {"webhooks": []}
    answer = client.simulate_get("/rest/webhooks/list", params={"Bugzilla_api_key": plain_key,
                                                                "all": 1})
    assert answer.json["code"] == 304
    everyone = client.simulate_get("/rest/webhooks/list",
                                   params={"Bugzilla_api_key": admin_key, "all": 1}).json
    assert [w["id"] for w in everyone["webhooks"]] == [hook["id"]]


def test_a_product_the_owner_cannot_see_answers_like_a_missing_one(hooks, receiver):
    hooks.add_user("plain@example.com")
    secret = add_bug_group(hooks, "secret", [])
    control(hooks, secret, MANDATORY, MANDATORY)
    from bugsvc.errors import ServiceError
    for product in ("TestProduct", "NoSuchProduct"):
        with pytest.raises(ServiceError) as caught:
            register(hooks, receiver.url, as_user="plain@example.com", product=product)
        assert caught.value.code == 106
        assert "does not exist, or you don't have access" in caught.value.message


def test_changing_a_webhook_answers_each_change_and_a_new_product_resets_the_component(
        services):
    set_param(services, "webhooks_enabled", "1")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO products (name, classification_id, description)"
                     " VALUES ('Other', 1, 'x')")
    hook = register(services, "https://hooks.example.com/a", events=["create"],
                    component="TestComponent")
    answer = services.call(webhook_service.update, {
        "ids": [hook["id"]], "name": "Renamed", "url": "https://hooks.example.com/b",
        "event": "comment,create", "product": "Other"}, as_user=ADMIN)
    assert answer == {"webhooks": [{"id": hook["id"], "changes": {
        "name": {"removed": "hook", "added": "Renamed"},
        "url": {"removed": "https://hooks.example.com/a", "added": "https://hooks.example.com/b"},
        "event": {"removed": "create", "added": "create,comment"},
        "product": {"removed": "TestProduct", "added": "Other"},
        "component": {"removed": "TestComponent", "added": "Any"}}}]}
    [listed] = services.call(webhook_service.list_webhooks, {}, as_user=ADMIN)["webhooks"]
    assert (listed["name"], listed["url"], listed["event"], listed["product"],
            listed["component"]) == ("Renamed", "https://hooks.example.com/b", "create,comment",
                                     "Other", "Any")
    again = services.call(webhook_service.update, {"ids": [hook["id"]], "name": "Renamed",
                                                   "product": "Other"}, as_user=ADMIN)
    assert again == {"webhooks": [{"id": hook["id"], "changes": {}}]}
    assert services.query("SELECT COUNT(*) FROM audit_log WHERE class = 'Bugzilla::Webhook'"
                          " AND field IS NOT NULL") == [(5,)]


@pytest.mark.parametrize("fields, code", [
    ({"events": ""}, 50), ({"events": 5}, 32000), ({"events": ["create", "nope"]}, 32000),
    ({"name": ""}, 50), ({"name": "x" * 65}, 32000), ({"name": "a\x00b"}, 32000),
    ({"url": ""}, 50), ({"url": "https://hooks.example.com/" + "x" * 2048}, 32000),
    ({"product": ""}, 50), ({"component": "NoSuchComponent"}, 51),
])
def test_a_webhook_that_cannot_be_registered_is_refused_and_nothing_stored(services, fields,
                                                                           code):
    from bugsvc.errors import ServiceError
    set_param(services, "webhooks_enabled", "1")
    params = {"url": "https://hooks.example.com/x", **fields}
    with pytest.raises(ServiceError) as caught:
        register(services, params.pop("url"), **params)
    assert caught.value.code == code
    assert services.query("SELECT COUNT(*) FROM webhooks") == [(0,)]


def test_names_are_unique_per_owner_and_a_change_needs_ids(services, plain_key):
    from bugsvc.errors import ServiceError
    set_param(services, "webhooks_enabled", "1")
    register(services, "https://hooks.example.com/x")
    register(services, "https://hooks.example.com/x", as_user="plain@example.com")
    with pytest.raises(ServiceError) as caught:
        register(services, "https://hooks.example.com/y")
    assert (caught.value.code, caught.value.message) == (
        32000, "You already have a webhook named 'hook'.")
    for service in (webhook_service.update, webhook_service.delete):
        with pytest.raises(ServiceError) as caught:
            services.call(service, {"name": "other"}, as_user=ADMIN)
        assert caught.value.code == 50
    set_param(services, "webhooks_enabled", "0")
    with pytest.raises(ServiceError) as caught:       # turned off comes first
        services.call(webhook_service.update, {"name": "other"}, as_user=ADMIN)
    assert caught.value.code == 32000
    assert services.query("SELECT name FROM webhooks ORDER BY id") == [("hook",), ("hook",)]


def test_an_administrator_lists_one_accounts_webhooks(services, plain_key):
    from bugsvc.errors import ServiceError
    set_param(services, "webhooks_enabled", "1")
    register(services, "https://hooks.example.com/x", name="mine")
    register(services, "https://hooks.example.com/x", as_user="plain@example.com",
             name="theirs")
    listed = services.call(webhook_service.list_webhooks, {"user": "plain@example.com"},
                           as_user=ADMIN)
    assert [(w["name"], w["creator"]) for w in listed["webhooks"]] == [
        ("theirs", "plain@example.com")]
    assert services.call(webhook_service.list_webhooks, {"user": "nobody@example.com"},
                         as_user=ADMIN) == {"webhooks": []}
    with pytest.raises(ServiceError) as caught:
        services.call(webhook_service.list_webhooks, {"user": ADMIN},
                      as_user="plain@example.com")
    assert caught.value.code == 304


# Payloads -------------------------------------------------------------------------------

def test_each_event_in_bmos_format_signed(hooks, receiver):
    hook = register(hooks, receiver.url)
    bug_id = file_bug(hooks, summary="It breaks", assigned_to="dev@example.com")
    deliver(hooks)          # the bug's fields are those it has when the call is made
    update_bug(hooks, bug_id, status="IN_PROGRESS", priority="High")
    comment_id = hooks.call(comment_service.add, {"id": bug_id, "comment": "A note"},
                            as_user=ADMIN)["id"]
    data = base64.b64encode(b"trace").decode()
    [attachment_id] = hooks.call(attachment_service.create, {
        "ids": [bug_id], "data": data, "file_name": "t.log", "summary": "Trace",
        "content_type": "text/plain"}, as_user=ADMIN)["ids"]
    hooks.call(attachment_service.update, {"ids": [attachment_id], "is_obsolete": True},
               as_user=ADMIN)
    deliver(hooks)
    created, changed, commented, attached, attachment_changed = bodies(receiver)
    for call in receiver.calls:
        assert verify(hook["secret"], call["headers"], call["body"])
        assert call["headers"]["content-type"] == "application/json"
        assert call["headers"]["webhook-id"].startswith("msg_")
    assert created["webhook_id"] == hook["id"] and created["webhook_name"] == "hook"
    event = created["event"]
    assert (event["action"], event["target"], event["routing_key"]) == ("create", "bug",
                                                                        "bug.create")
    assert event["user"] == {"id": 1, "login": ADMIN, "real_name": "Administrator"}
    assert event["time"].endswith("Z") and "changes" not in event
    bug = created["bug"]
    assert bug["id"] == bug_id and bug["summary"] == "It breaks"
    assert bug["product"] == "TestProduct" and bug["component"] == "TestComponent"
    assert bug["assigned_to"] == "dev@example.com"
    assert bug["assigned_to_detail"] == {"id": 2, "login": "dev@example.com",
                                         "real_name": "Dana Dev"}
    assert bug["creator"] == ADMIN and bug["is_private"] is False
    assert bug["operating_system"] == "Linux" and bug["platform"] == "PC"
    assert bug["priority"] == "" and bug["qa_contact"] == ""       # '---' is empty
    assert changed["event"]["routing_key"] == "bug.modify:status,priority"
    assert changed["event"]["changes"] == [
        {"field": "status", "removed": "CONFIRMED", "added": "IN_PROGRESS"},
        {"field": "priority", "removed": "", "added": "High"}]
    assert commented["event"]["routing_key"] == "comment.create"
    assert commented["bug"]["comment"] == {
        "id": comment_id, "body": "A note", "creation_time": commented["bug"]["comment"][
            "creation_time"], "is_private": False, "number": 1}
    assert attached["event"]["routing_key"] == "attachment.create"
    assert attached["bug"]["attachment"]["description"] == "Trace"
    assert attached["bug"]["attachment"]["file_name"] == "t.log"
    assert attachment_changed["event"]["routing_key"] == "attachment.modify:isobsolete"
    assert attachment_changed["event"]["changes"] == [
        {"field": "isobsolete", "removed": "0", "added": "1"}]


def test_a_webhook_gets_only_its_events_product_and_component(hooks, receiver):
    register(hooks, receiver.url, events=["comment"])
    with hooks.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO products (name, classification_id, description)"
                     " VALUES ('Other', 1, 'x')")
    bug_id = file_bug(hooks)
    update_bug(hooks, bug_id, priority="High", comment={"body": "Only this"})
    deliver(hooks)
    assert [b["event"]["routing_key"] for b in bodies(receiver)] == ["comment.create"]


def test_a_restricted_bug_is_sent_as_its_id_alone(hooks, receiver):
    secret = add_bug_group(hooks, "secret", [])
    control(hooks, secret, MANDATORY, MANDATORY)
    register(hooks, receiver.url)
    bug_id = file_bug(hooks, summary="Secret thing")
    update_bug(hooks, bug_id, priority="High")
    deliver(hooks)
    created, changed = bodies(receiver)
    assert created["bug"] == {"id": bug_id, "is_private": True}
    assert changed["bug"] == {"id": bug_id, "is_private": True}
    assert "changes" not in changed["event"] and changed["event"]["routing_key"] == "bug.modify"
    assert "Secret" not in str(receiver.calls)


def test_nothing_about_a_bug_the_owner_cannot_see(hooks, receiver):
    hooks.add_user("plain@example.com")
    register(hooks, receiver.url, as_user="plain@example.com")
    secret = add_bug_group(hooks, "secret", [])
    control(hooks, secret, MANDATORY, NA, entry=0)
    bug_id = file_bug(hooks, summary="Secret thing")
    update_bug(hooks, bug_id, priority="High")
    deliver(hooks)
    assert receiver.calls == []
    assert {row[0] for row in hooks.query("SELECT last_error FROM outbox_messages"
                                          " WHERE channel = 'webhook'")} == {
        "the webhook's owner cannot see the bug"}


def test_private_comments_only_to_insider_owners_and_then_as_ids(hooks, receiver):
    from notify_support import Receiver
    other = Receiver()
    try:
        hooks.add_user("insider@example.com")
        add_bug_group(hooks, "staff", ["insider@example.com"])
        set_param(hooks, "insidergroup", "staff")
        register(hooks, receiver.url, events=["comment"])          # admin: an insider
        hooks.add_user("plain@example.com")
        register(hooks, other.url, as_user="plain@example.com", events=["comment"])
        bug_id = file_bug(hooks)
        comment_id = hooks.call(comment_service.add, {"id": bug_id, "comment": "ACME pays",
                                                      "is_private": True}, as_user=ADMIN)["id"]
        deliver(hooks)
        [body] = bodies(receiver)
        assert body["bug"] == {"id": bug_id, "is_private": False,
                               "comment": {"id": comment_id, "is_private": True}}
        assert other.calls == []
        assert "ACME" not in str(receiver.calls)
    finally:
        other.stop()


def test_time_tracking_changes_are_left_out_for_owners_outside_the_group(hooks, receiver):
    add_bug_group(hooks, "timers", [])
    set_param(hooks, "timetrackinggroup", "timers")
    hooks.add_user("plain@example.com")
    register(hooks, receiver.url, as_user="plain@example.com", events=["change"])
    bug_id = file_bug(hooks)
    update_bug(hooks, bug_id, estimated_time=5, priority="High")
    deliver(hooks)
    [body] = bodies(receiver)
    assert [c["field"] for c in body["event"]["changes"]] == ["priority"]


# Delivery ----------------------------------------------------------------------------

def test_a_receiver_that_fails_and_recovers_gets_everything_in_order(hooks, receiver):
    register(hooks, receiver.url, events=["change"])
    bug_id = file_bug(hooks)
    receiver.statuses = [500, 503, 502]
    for priority in ("Highest", "High", "Normal", "Low"):
        update_bug(hooks, bug_id, priority=priority)
    deliver(hooks)
    added = [b["event"]["changes"][0]["added"] for b in bodies(receiver)]
    assert added == ["Highest", "High", "Normal", "Low"]
    assert receiver.attempts == 4 + 3
    # Each call keeps its webhook-id across attempts.
    assert len({call["headers"]["webhook-id"] for call in receiver.calls}) == 4


def test_a_failing_bug_does_not_hold_up_the_others(hooks, receiver):
    register(hooks, receiver.url, events=["change"])
    stuck, other = file_bug(hooks), file_bug(hooks)
    receiver.refuse = lambda body: 500 if body["bug"]["id"] == stuck else None
    update_bug(hooks, stuck, priority="High")
    update_bug(hooks, stuck, priority="Low")
    update_bug(hooks, other, priority="High")
    deliver(hooks, delays=(3600,))
    assert [b["bug"]["id"] for b in bodies(receiver)] == [other]
    assert hooks.query("SELECT bug_id, state, attempts FROM outbox_messages WHERE"
                       " bug_id = ? ORDER BY id", (stuck,)) == [(stuck, "pending", 1),
                                                                (stuck, "pending", 0)]


def test_a_slow_receiver_holds_up_nobody_else(hooks, receiver):
    from notify_support import Receiver
    slow = Receiver()
    slow.delay = 3
    try:
        register(hooks, slow.url, name="slow", events=["change"])
        register(hooks, receiver.url, name="fast", events=["change"])
        bug_id = file_bug(hooks)
        for priority in ("Highest", "High", "Low"):
            update_bug(hooks, bug_id, priority=priority)
        from bugsvc.notify.worker import Deliverer
        deliverer = Deliverer(hooks.units)
        threads = deliverer.start(threads=2)
        try:
            wait_for(lambda: len(receiver.calls) == 3, what="the fast receiver's calls")
            # They all arrived while the slow receiver was still on its first call.
            assert slow.in_flight == 1 and slow.calls == []
        finally:
            threads.stop(timeout=30)
    finally:
        slow.stop()


def test_a_webhook_that_keeps_failing_is_disabled_and_its_owner_told(
        hooks, receiver, smtp, client, admin_key):
    use_smtp(hooks, smtp)
    hook = register(hooks, receiver.url, events=["change"])
    bug_id = file_bug(hooks)
    receiver.refuse = lambda body: 500
    update_bug(hooks, bug_id, priority="High")
    update_bug(hooks, bug_id, priority="Low")
    deliver(hooks)
    [listed] = client.simulate_get("/rest/webhooks/list",
                                   params={"Bugzilla_api_key": admin_key}).json["webhooks"]
    # One call parked, the next one waiting behind it (never tried).
    assert listed["enabled"] is False and listed["errors"] == 1 and listed["pending"] == 1
    assert listed["disabled_reason"] == "its calls kept failing"
    assert "answered 500" in listed["last_error"] and listed["last_attempt"]
    [notice] = [m for m in smtp.to(ADMIN) if m["X-Bugzilla-Type"] == "admin"]
    assert notice["Subject"] == "Webhook hook was disabled"
    assert "answered 500" in notice.get_content()
    # Enabled again once the receiver works: the calls go out, in order.
    receiver.refuse = None
    answer = client.simulate_put(f"/rest/webhooks/{hook['id']}",
                                 params={"Bugzilla_api_key": admin_key}, json={"enabled": True})
    assert answer.json["webhooks"][0]["changes"] == {"enabled": {"removed": "0", "added": "1"}}
    deliver(hooks)
    assert [b["event"]["changes"][0]["added"] for b in bodies(receiver)] == ["High", "Low"]


def test_410_gone_disables_the_webhook_at_once(hooks, receiver):
    register(hooks, receiver.url, events=["change"])
    bug_id = file_bug(hooks)
    receiver.statuses = [410]
    update_bug(hooks, bug_id, priority="High")
    deliver(hooks)
    assert hooks.query("SELECT enabled, disabled_reason FROM webhooks") == [
        (0, "its receiver answered 410 Gone")]
    assert hooks.query("SELECT state, attempts FROM outbox_messages") == [("parked", 1)]


def test_a_rotated_secret_signs_beside_the_old_one_until_it_is_dropped(hooks, receiver):
    hook = register(hooks, receiver.url, events=["change"])
    bug_id = file_bug(hooks)
    rotated = hooks.call(webhook_service.update, {"ids": [hook["id"]], "rotate_secret": True},
                         as_user=ADMIN)
    new_secret = rotated["secret"]
    assert new_secret != hook["secret"]
    update_bug(hooks, bug_id, priority="High")
    deliver(hooks)
    [call] = receiver.calls
    assert len(call["headers"]["webhook-signature"].split(" ")) == 2
    assert verify(new_secret, call["headers"], call["body"])
    assert verify(hook["secret"], call["headers"], call["body"])
    hooks.call(webhook_service.update, {"ids": [hook["id"]], "drop_previous_secret": True},
               as_user=ADMIN)
    update_bug(hooks, bug_id, priority="Low")
    deliver(hooks)
    last = receiver.calls[-1]
    assert verify(new_secret, last["headers"], last["body"])
    assert not verify(hook["secret"], last["headers"], last["body"])
    tampered = last["body"].replace(b"Low", b"Lo ")
    assert not verify(new_secret, last["headers"], tampered)
    assert not verify(new_secret, last["headers"], last["body"], now=time.time() + 3600)


def test_deleting_a_webhook_drops_its_waiting_calls(hooks, receiver):
    hook = register(hooks, receiver.url, events=["change"])
    bug_id = file_bug(hooks)
    update_bug(hooks, bug_id, priority="High")
    hooks.call(webhook_service.delete, {"ids": [hook["id"]]}, as_user=ADMIN)
    deliver(hooks)
    assert receiver.calls == []
    assert hooks.query("SELECT COUNT(*) FROM webhooks") == [(0,)]


def test_a_bug_becoming_restricted_is_told_with_its_id_alone(hooks, receiver):
    secret = add_bug_group(hooks, "secret", [])
    control(hooks, secret, SHOWN, NA)
    register(hooks, receiver.url, events=["change"])
    bug_id = file_bug(hooks, summary="Soon secret")
    update_bug(hooks, bug_id, groups={"add": ["secret"]})
    deliver(hooks)
    [note, changed] = bodies(receiver)
    assert note["event"]["routing_key"] == "bug.modify:is_private"
    assert note["event"]["changes"] == [{"field": "is_private", "removed": "0", "added": "1"}]
    assert note["bug"] == {"id": bug_id, "is_private": True}
    assert changed["bug"] == {"id": bug_id, "is_private": True}
    assert "Soon secret" not in str(receiver.calls)


def test_the_readmes_receiver_accepts_signed_calls_and_refuses_forged_ones(hooks, tmp_path):
    import os
    import re
    import socket
    import subprocess
    import sys
    import urllib.error
    import urllib.request

    from live_server import ROOT, free_port
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    code = re.search(r"cat > receiver\.py <<'END'\n(.*?)\nEND\n", text, re.S).group(1)
    (tmp_path / "receiver.py").write_text(code)
    port = free_port()
    hook = register(hooks, f"http://127.0.0.1:{port}/hook", events=["change"])
    process = subprocess.Popen([sys.executable, "receiver.py", str(port)], cwd=tmp_path,
                               env=dict(os.environ, WEBHOOK_SECRET=hook["secret"]),
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        def listening():
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
                return True
            except OSError:
                return False
        wait_for(listening, what="the README's receiver")
        bug_id = file_bug(hooks)
        update_bug(hooks, bug_id, priority="High")
        deliver(hooks)
        assert hooks.query("SELECT state FROM outbox_messages") == [("sent",)]
        forged = urllib.request.Request(
            f"http://127.0.0.1:{port}/hook", data=b'{"event": {}}', method="POST",
            headers={"webhook-id": "msg_x", "webhook-timestamp": str(int(time.time())),
                     "webhook-signature": "v1,AAAA", "Content-Type": "application/json"})
        with pytest.raises(urllib.error.HTTPError) as refused:
            urllib.request.urlopen(forged, timeout=10)
        assert refused.value.code == 401
    finally:
        process.terminate()
        out, _ = process.communicate(timeout=10)
    assert out.splitlines() == [f"bug.modify:priority bug {bug_id}"]
