"""XML-RPC at /xmlrpc.cgi: stdlib marshalling, a parser that refuses
document types, faults with the REST codes, dateTime.iso8601 and base64
values, and a real waitress server called with xmlrpc.client.ServerProxy."""

import http.client
import json
import threading
import urllib.request
import xmlrpc.client
from datetime import datetime

import pytest
import waitress
from freezegun import freeze_time
from waitress import wasyncore

from accounts import ADMIN, ADMIN_PASSWORD
from bugsvc.errors import ServiceError
from bugsvc.web.rpc.xmlrpc import call_params, parse_call, response_body, to_wire


def xcall(client, method, *params, content_type="text/xml", headers=None):
    """POST one XML-RPC call; returns the falcon result."""
    body = xmlrpc.client.dumps(params, method, allow_none=True)
    return client.simulate_post("/xmlrpc.cgi", body=body,
                                headers={"Content-Type": content_type, **(headers or {})})


def post_xml(client, document):
    return client.simulate_post("/xmlrpc.cgi", body=document,
                                headers={"Content-Type": "text/xml"})


def result_of(resp):
    assert resp.status_code == 200
    assert resp.headers["Content-Type"] == "text/xml; charset=UTF-8"
    return xmlrpc.client.loads(resp.content)[0][0]


def fault_of(resp):
    assert resp.status_code == 200
    with pytest.raises(xmlrpc.client.Fault) as caught:
        xmlrpc.client.loads(resp.content)
    return caught.value.faultCode


# Calls and faults -----------------------------------------------------------------

def test_version(client):
    assert result_of(xcall(client, "Bugzilla.version", {})) == {"version": "5.2"}


def test_wrong_password_is_fault_300_with_http_200(client):
    assert fault_of(xcall(client, "User.login", {"login": ADMIN, "password": "wrong"})) == 300


def test_group_create_needs_login_and_creategroups(client, admin_key, plain_key, services):
    params = {"name": "xml-team", "description": "XML people"}
    assert fault_of(xcall(client, "Group.create", dict(params))) == 410
    assert fault_of(xcall(client, "Group.create", {**params, "Bugzilla_api_key": plain_key})) == 304
    assert "xml-team" not in services.group_names()
    created = result_of(xcall(client, "Group.create", {**params, "Bugzilla_api_key": admin_key}))
    assert isinstance(created["id"], int) and "xml-team" in services.group_names()


def test_credentials_in_the_struct_or_in_headers(client, admin_key):
    by_param = result_of(xcall(client, "Group.get", {"names": ["admin"],
                                                     "Bugzilla_login": ADMIN,
                                                     "Bugzilla_password": ADMIN_PASSWORD}))
    by_header = result_of(xcall(client, "Group.get", {"names": ["admin"]},
                                headers={"X-BUGZILLA-API-KEY": admin_key}))
    assert by_param == by_header
    assert by_param["groups"][0]["name"] == "admin"
    assert fault_of(xcall(client, "Group.get", {"Bugzilla_api_key": "k" * 40})) == 306


def test_login_gives_a_token_that_logs_in_and_logout_answers_nil(client):
    login = result_of(xcall(client, "User.login", {"login": ADMIN, "password": ADMIN_PASSWORD}))
    groups = result_of(xcall(client, "Group.get", {"names": ["admin"],
                                                   "Bugzilla_token": login["token"]}))
    assert groups["groups"][0]["name"] == "admin"
    resp = xcall(client, "User.logout", {"Bugzilla_token": login["token"]})
    assert b"<nil/>" in resp.content and result_of(resp) is None
    assert fault_of(xcall(client, "Group.get", {"Bugzilla_token": login["token"]})) == 32000


def test_include_fields_trim_results(client, admin_key):
    result = result_of(xcall(client, "Group.get", {"names": ["admin"], "include_fields": ["name"],
                                                   "Bugzilla_api_key": admin_key}))
    assert result == {"groups": [{"name": "admin"}]}


def test_unknown_method_is_fault_minus_32601(client):
    assert fault_of(xcall(client, "Bugzilla.nothing", {})) == -32601
    assert fault_of(xcall(client, "Nothing.at_all")) == -32601


def test_a_first_parameter_that_is_no_struct_counts_as_no_parameters(client):
    assert result_of(xcall(client, "Bugzilla.version", "positional", 3)) == {"version": "5.2"}
    assert result_of(xcall(client, "Bugzilla.version")) == {"version": "5.2"}


# Transport rules --------------------------------------------------------------------

@pytest.mark.parametrize("content_type", ["text/plain", "application/json",
                                          "application/x-www-form-urlencoded", ""])
def test_other_content_types_are_fault_32612_and_change_nothing(client, admin_key, services,
                                                                content_type):
    resp = xcall(client, "Group.create", {"name": "forged", "description": "d",
                                          "Bugzilla_api_key": admin_key},
                 content_type=content_type)
    assert fault_of(resp) == 32612
    assert "forged" not in services.group_names()


def test_xml_content_types_with_a_charset_are_accepted(client):
    for content_type in ("application/xml", "text/xml; charset=utf-8", "TEXT/XML"):
        resp = xcall(client, "Bugzilla.timezone", {}, content_type=content_type)
        assert result_of(resp) == {"timezone": "+0000"}


def test_head_answers_200_for_python_bugzillas_probe_and_get_is_a_fault(client):
    head = client.simulate_head("/xmlrpc.cgi")
    assert head.status_code == 200 and head.content == b""
    assert fault_of(client.simulate_get("/xmlrpc.cgi")) == 32610


BILLION_LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;&lol;&lol;&lol;&lol;&lol;&lol;">]>
<methodCall><methodName>Group.create</methodName><params><param><value><struct>
<member><name>name</name><value><string>&lol2;</string></value></member>
<member><name>description</name><value><string>x</string></value></member>
<member><name>Bugzilla_api_key</name><value><string>KEY</string></value></member>
</struct></value></param></params></methodCall>"""

EXTERNAL_ENTITY = """<?xml version="1.0"?>
<!DOCTYPE call [<!ENTITY secret SYSTEM "file:///etc/passwd">]>
<methodCall><methodName>Bugzilla.version</methodName><params><param><value>
<string>&secret;</string></value></param></params></methodCall>"""


def test_document_types_and_entities_are_refused(client, admin_key, services):
    before = services.group_names()
    assert fault_of(post_xml(client, BILLION_LAUGHS.replace("KEY", admin_key))) == 32000
    assert fault_of(post_xml(client, EXTERNAL_ENTITY)) == 32000
    bare_doctype = "<!DOCTYPE methodCall><methodCall><methodName>Bugzilla.version</methodName>" \
                   "</methodCall>"
    assert fault_of(post_xml(client, bare_doctype)) == 32000
    assert services.group_names() == before


@pytest.mark.parametrize("document", [
    "<methodCall><methodName>Bugzilla.version</methodName>",
    "not xml at all",
    "",
    "<methodCall><params><param><value><int>1</int></value></param></params></methodCall>",
    xmlrpc.client.dumps(({"version": "5.2"},), methodresponse=True),
    "<methodCall><methodName>Bugzilla.version</methodName><params><param><value>"
    "<string>&undefined;</string></value></param></params></methodCall>",
])
def test_documents_that_are_no_call_are_fault_32000(client, document):
    assert fault_of(post_xml(client, document)) == 32000


@pytest.mark.parametrize("value", ["<int>twelve</int>", "<boolean>2</boolean>",
                                   "<double>fast</double>", "<base64>!!!</base64>",
                                   "<dateTime.iso8601>yesterday</dateTime.iso8601>"])
def test_values_of_the_wrong_form_are_fault_minus_32600(client, value):
    document = ("<methodCall><methodName>Bugzilla.version</methodName><params><param><value>"
                f"<struct><member><name>x</name><value>{value}</value></member></struct>"
                "</value></param></params></methodCall>")
    assert fault_of(post_xml(client, document)) == -32600


# Values in -----------------------------------------------------------------------------

def test_nil_and_empty_numbers_arrive_as_null():
    document = ("<methodCall><methodName>Bug.get</methodName><params><param><value><struct>"
                "<member><name>a</name><value><nil/></value></member>"
                "<member><name>b</name><value><int></int></value></member>"
                "<member><name>c</name><value><double/></value></member>"
                "<member><name>d</name><value><dateTime.iso8601/></value></member>"
                "<member><name>e</name><value><i4>7</i4></value></member>"
                "</struct></value></param></params></methodCall>")
    method, params = parse_call(document.encode())
    assert method == "Bug.get"
    assert call_params(params) == {"a": None, "b": None, "c": None, "d": None, "e": 7}


def test_base64_and_datetimes_arrive_as_the_services_strings():
    params = ({"data": xmlrpc.client.Binary(b"\x00binary\xff"),
               "new_since": xmlrpc.client.DateTime("20260102T03:04:05"),
               "zoned": xmlrpc.client.DateTime("20260102T03:04:05+0100"),
               "list": [xmlrpc.client.DateTime("2026-01-02T03:04:05Z")]},)
    assert call_params(params) == {"data": "AGJpbmFyef8=", "new_since": "2026-01-02T03:04:05Z",
                                   "zoned": "2026-01-02T02:04:05Z",
                                   "list": ["2026-01-02T03:04:05Z"]}
    with pytest.raises(ServiceError) as caught:
        call_params(({"when": xmlrpc.client.DateTime("2026-13-45T99:00:00")},))
    assert caught.value.code == -32600


def test_file_content_sent_as_a_plain_string_is_taken_as_the_content():
    assert call_params(({"data": "hello"},), binary_in=("data",)) == {"data": "aGVsbG8="}
    binary = call_params(({"data": xmlrpc.client.Binary(b"hello")},), binary_in=("data",))
    assert binary == {"data": "aGVsbG8="}


# Values out ------------------------------------------------------------------------------

@freeze_time("2026-03-04 05:06:07")
def test_time_is_sent_as_datetime_iso8601(client):
    resp = xcall(client, "Bugzilla.time", {})
    assert b"<dateTime.iso8601>20260304T05:06:07</dateTime.iso8601>" in resp.content
    values, _ = xmlrpc.client.loads(resp.content, use_datetime=True)
    assert values[0]["db_time"] == datetime(2026, 3, 4, 5, 6, 7)
    assert values[0]["tz_name"] == "UTC"


def test_last_audit_time_is_a_datetime_and_a_null_one_is_left_out(client, admin_key):
    with freeze_time("2026-05-06 07:08:09"):
        result_of(xcall(client, "Group.create", {"name": "audited", "description": "d",
                                                 "Bugzilla_api_key": admin_key}))
    audit = result_of(xcall(client, "Bugzilla.last_audit_time", {"class": ["Bugzilla::Group"]}))
    assert audit["last_audit_time"].value == "20260506T07:08:09"
    nothing = result_of(xcall(client, "Bugzilla.last_audit_time", {"class": ["Bugzilla::Nope"]}))
    assert nothing == {}


def test_to_wire_converts_by_key_and_leaves_other_strings_alone():
    value = {"bugs": [{"id": 3, "creation_time": "2026-01-02T03:04:05Z",
                       "summary": "2026-01-02T03:04:05Z", "deadline": "2026-01-02",
                       "cf_when": "2026-01-02T03:04:05Z", "cf_text": "later",
                       "dupe_of": None, "blocks": [1, None, 2], 7: "int key",
                       "comments": [{"time": "2026-01-02T03:04:05Z", "count": 2**40}]}]}
    bug = to_wire(value)["bugs"][0]
    assert isinstance(bug["creation_time"], xmlrpc.client.DateTime)
    assert bug["creation_time"].value == "20260102T03:04:05"
    assert isinstance(bug["cf_when"], xmlrpc.client.DateTime)
    assert bug["summary"] == "2026-01-02T03:04:05Z" and bug["deadline"] == "2026-01-02"
    assert bug["cf_text"] == "later" and "dupe_of" not in bug and bug["blocks"] == [1, 2]
    assert bug["7"] == "int key"
    assert isinstance(bug["comments"][0]["time"], xmlrpc.client.DateTime)
    assert bug["comments"][0]["count"] == float(2**40)


def test_declared_binary_keys_are_sent_as_base64():
    wire = to_wire({"attachments": {"5": {"data": "aGk=", "file_name": "aGk="}}}, ("data",))
    attachment = wire["attachments"]["5"]
    assert isinstance(attachment["data"], xmlrpc.client.Binary) and attachment["data"].data == b"hi"
    assert attachment["file_name"] == "aGk="
    body = response_body({"attachments": {"5": {"data": "aGk="}}}, ("data",))
    assert b"<base64>" in body


def test_text_that_xml_cannot_carry_is_replaced_and_carriage_returns_survive():
    body = response_body({"text": "a\x01b\r\nc", "ok": True})
    value = xmlrpc.client.loads(body)[0][0]
    assert value == {"text": "a\ufffdb\r\nc", "ok": True}


# A real server and a real client ----------------------------------------------------------

@pytest.fixture
def live_url(app):
    server = waitress.create_server(app, host="127.0.0.1", port=0, threads=2)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.effective_port}"
    # Sockets are closed by the server's own loop thread (closing them from
    # here would pull them from under its select); the loop then ends.
    server.trigger.pull_trigger(lambda: wasyncore.close_all(server._map))
    thread.join(timeout=10)
    server.task_dispatcher.shutdown()
    assert not thread.is_alive()


def test_server_proxy_against_waitress(live_url, admin_key):
    with xmlrpc.client.ServerProxy(f"{live_url}/xmlrpc.cgi") as proxy:
        assert proxy.Bugzilla.version() == {"version": "5.2"}
        with pytest.raises(xmlrpc.client.Fault) as caught:
            proxy.User.login({"login": ADMIN, "password": "wrong"})
        assert caught.value.faultCode == 300
        groups = proxy.Group.get({"names": ["admin"], "Bugzilla_api_key": admin_key})
        assert [group["name"] for group in groups["groups"]] == ["admin"]
        products = proxy.Product.get({"names": ["TestProduct"], "Bugzilla_api_key": admin_key})
        assert [product["name"] for product in products["products"]] == ["TestProduct"]
        with pytest.raises(xmlrpc.client.Fault) as unknown:
            proxy.Bugzilla.nothing()
        assert unknown.value.faultCode == -32601


def test_probe_and_json_rpc_against_waitress(live_url):
    host, port = live_url.removeprefix("http://").split(":")
    connection = http.client.HTTPConnection(host, int(port), timeout=10)
    connection.request("HEAD", "/xmlrpc.cgi")
    assert connection.getresponse().status == 200
    connection.close()
    request = urllib.request.Request(f"{live_url}/jsonrpc.cgi", method="POST",
                                     data=json.dumps({"method": "Bugzilla.version",
                                                      "params": [{}], "id": 1}).encode(),
                                     headers={"Content-Type": "application/json"})
    with urllib.request.urlopen(request, timeout=10) as response:
        assert json.loads(response.read()) == {"result": {"version": "5.2"}, "error": None,
                                               "id": 1}
