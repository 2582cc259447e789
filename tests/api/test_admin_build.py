"""An administrator builds a tracker from nothing through HTTP alone and
reads it all back, the way a setup script would."""

import pytest

from accounts import ADMIN


class Api:
    """The admin's HTTP session: every call carries the API key."""

    def __init__(self, client, key):
        self.client, self.key = client, key

    def _call(self, method, path, body=None, **query):
        resp = getattr(self.client, f"simulate_{method}")(
            "/rest" + path, params={"Bugzilla_api_key": self.key, **query}, json=body)
        assert resp.status_code in (200, 201), (method, path, resp.json)
        return resp

    def post(self, path, body):
        resp = self._call("post", path, body)
        assert resp.status_code == 201
        return resp.json["id"]

    def put(self, path, body):
        return self._call("put", path, body).json

    def get(self, path, **query):
        return self._call("get", path, **query).json


@pytest.fixture
def api(client, admin_key):
    return Api(client, admin_key)


def test_build_a_tracker_and_read_it_back(api, services):
    services.add_user("dev@example.com")
    services.add_user("qa@example.com")
    api.put("/parameters", {"useclassification": "1", "usetargetmilestone": "1",
                            "useqacontact": "1"})

    hardware = api.post("/classification", {"name": "Hardware", "description": "Devices",
                                            "sort_key": 10})
    router = api.post("/product", {"name": "Router", "description": "Home routers",
                                   "version": "1.0", "classification": "Hardware",
                                   "default_milestone": "R1"})
    firmware = api.post("/product", {"name": "Firmware", "description": "Boot code",
                                     "version": "0.9", "classification": "Hardware"})
    wifi = api.post("/component", {"product": "Router", "name": "WiFi",
                                   "description": "Wireless", "default_assignee":
                                   "dev@example.com", "default_qa_contact": "qa@example.com",
                                   "default_cc": ["qa@example.com"]})
    api.post("/component", {"product": "Router", "name": "LAN", "description": "Wired",
                            "default_assignee": ADMIN})
    api.post("/component", {"product": "Firmware", "name": "Loader", "description": "Stage 1",
                            "default_assignee": "dev@example.com"})
    api.post("/version", {"product": "Router", "name": "2.0", "sort_key": 1})
    api.post("/milestone", {"product": "Router", "name": "R2", "sort_key": 20})
    api.put("/product/Router", {"default_milestone": "R2"})
    api.post("/keyword", {"name": "regression", "description": "Used to work"})
    review = api.post("/flag_type", {"name": "review", "description": "Code review",
                                     "inclusions": ["Router"]})
    api.post("/field/bug", {"name": "cf_board", "display_name": "Board", "type": 1})

    products = api.get("/product", names=["Router", "Firmware"])["products"]
    by_name = {p["name"]: p for p in products}
    assert set(by_name) == {"Router", "Firmware"}
    routed = by_name["Router"]
    assert routed["id"] == router and routed["classification"] == "Hardware"
    assert routed["default_milestone"] == "R2"
    assert [c["name"] for c in routed["components"]] == ["LAN", "WiFi"]
    wifi_object = routed["components"][1]
    assert wifi_object["id"] == wifi
    assert wifi_object["default_assigned_to"] == "dev@example.com"
    assert wifi_object["default_qa_contact"] == "qa@example.com"
    assert [t["id"] for t in wifi_object["flag_types"]["bug"]] == [review]
    assert by_name["Firmware"]["components"][0]["flag_types"] == {"bug": [], "attachment": []}
    assert [(v["name"], v["sort_key"]) for v in routed["versions"]] == [("1.0", 0), ("2.0", 1)]
    assert [(m["name"], m["sort_key"]) for m in routed["milestones"]] == [("R1", 0), ("R2", 20)]
    assert by_name["Firmware"]["id"] == firmware

    classifications = api.get(f"/classification/{hardware}")["classifications"]
    assert [p["name"] for p in classifications[0]["products"]] == ["Firmware", "Router"]
    assert api.get("/keyword")["keywords"][0]["name"] == "regression"
    assert router in api.get("/product_enterable")["ids"]
    fields = api.get("/field/bug/cf_board")["fields"]
    assert fields[0]["name"] == "cf_board"
    assert api.get("/last_audit_time", **{"class": "Bugzilla::Component"})[
        "last_audit_time"] is not None


def test_every_admin_call_refuses_anonymous_and_plain_users(client, services):
    services.add_user("plain@example.com")
    plain_key = services.api_key("plain@example.com")
    calls = [("post", "/rest/product"), ("put", "/rest/product/1"),
             ("post", "/rest/component"), ("put", "/rest/component/1"),
             ("delete", "/rest/component/1"), ("put", "/rest/component/TestProduct/TestComponent"),
             ("delete", "/rest/component/TestProduct/TestComponent"),
             ("post", "/rest/version"), ("put", "/rest/version/1"),
             ("post", "/rest/milestone"), ("put", "/rest/milestone/1"),
             ("post", "/rest/keyword"), ("put", "/rest/keyword/1"),
             ("post", "/rest/classification"), ("put", "/rest/classification/1")]
    for method, path in calls:
        simulate = getattr(client, f"simulate_{method}")
        anonymous = simulate(path, json={"name": "x"})
        assert (anonymous.status_code, anonymous.json["code"]) == (401, 410), path
        plain = simulate(path, params={"Bugzilla_api_key": plain_key}, json={"name": "x"})
        assert (plain.status_code, plain.json["code"]) == (401, 304), path
    assert services.query("SELECT name FROM products") == [("TestProduct",)]
    assert services.query("SELECT name FROM components") == [("TestComponent",)]
    assert services.query("SELECT COUNT(*) FROM audit_log") == [(0,)]
