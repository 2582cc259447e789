"""python-bugzilla (the library) against a real bugsvc server, over both of
its transports: REST (/rest/) and XML-RPC (/xmlrpc.cgi). Every call goes
through the library's public API, so the requests are exactly the ones it
sends to a Bugzilla 5.2 server."""

import io
import itertools
import xmlrpc.client

import pytest

from pybugzilla_support import ADMIN, ADMIN_PASSWORD, DEV, PLAIN, PRODUCT, QA, seeded_server


pytestmark = pytest.mark.slow

bugzilla = pytest.importorskip("bugzilla")

TRANSPORTS = ("rest", "xmlrpc")
_serial = itertools.count(1)


@pytest.fixture(scope="module")
def site(tmp_path_factory):
    yield from seeded_server(tmp_path_factory, "pybugzilla")


def connect(site, transport, api_key=None):
    """A Bugzilla object that reads no bugzillarc and caches no token."""
    force = {"force_rest": True} if transport == "rest" else {"force_xmlrpc": True}
    return bugzilla.Bugzilla(site.url, api_key=api_key, use_creds=False, **force)


@pytest.fixture(params=TRANSPORTS)
def transport(request):
    return request.param


@pytest.fixture
def admin_bz(site, transport):
    return connect(site, transport, site.admin_key)


@pytest.fixture
def plain_bz(site, transport):
    return connect(site, transport, site.keys[PLAIN])


@pytest.fixture
def anon_bz(site, transport):
    return connect(site, transport)


def error_code(call, *args, **kwargs):
    """The Bugzilla error code `call` fails with (either transport)."""
    with pytest.raises((bugzilla.BugzillaError, xmlrpc.client.Fault)) as caught:
        call(*args, **kwargs)
    return bugzilla.BugzillaError.get_bugzilla_error_code(caught.value)


def new_bug(bz, component="Engine", **fields):
    """Create a bug in Widgets with a unique alias; returns the fetched Bug."""
    serial = next(_serial)
    values = dict(product=PRODUCT, component=component, version="1.0", op_sys="Linux",
                  platform="PC", summary=f"Widget trouble {serial}",
                  description=f"Steps for trouble {serial}", alias=f"trouble-{serial}")
    values.update(fields)
    created = bz.createbug(bz.build_createbug(**values))
    return bz.getbug(created.id)


# Connecting and logging in ------------------------------------------------------------

def test_a_bare_url_is_probed_to_xml_rpc_and_a_rest_url_stays_rest(site):
    probed = bugzilla.Bugzilla(site.url, use_creds=False)
    assert probed.is_xmlrpc() and probed.url == site.url + "/xmlrpc.cgi"
    rest = bugzilla.Bugzilla(site.url + "/rest/", use_creds=False)
    assert rest.is_rest()
    assert (probed.bz_ver_major, probed.bz_ver_minor) == (5, 2)
    assert (rest.bz_ver_major, rest.bz_ver_minor) == (5, 2)


def test_logged_in_follows_the_api_key(site, transport, admin_bz, anon_bz):
    assert admin_bz.logged_in is True
    assert anon_bz.logged_in is False
    # A stale key does not fail connecting, which only asks for the version
    # (a call exempt from login); the first call that uses it fails.
    stale = connect(site, transport, "W" * 40)
    assert (stale.bz_ver_major, stale.bz_ver_minor) == (5, 2)
    assert error_code(lambda: stale.logged_in) == 306


def test_wrong_password_fails_login_and_the_right_one_logs_in_until_logout(site, transport):
    bz = connect(site, transport)
    with pytest.raises(bugzilla.BugzillaError) as caught:
        bz.login(ADMIN, "not the password")
    assert "Login failed" in str(caught.value)
    assert bz.logged_in is False

    answer = bz.login(ADMIN, ADMIN_PASSWORD)
    token = answer["token"]
    assert answer["id"] == 1 and token.startswith("1-")
    assert bz.logged_in is True
    assert site.rest("GET", "/user", query={"ids": 1, "Bugzilla_token": token})[0] == 200
    bz.logout()
    status, body = site.rest("GET", "/user", query={"ids": 1, "Bugzilla_token": token})
    assert (status, body["code"]) == (400, 32000)


# Products, components, versions, users ------------------------------------------------

def test_products_components_owners_and_versions(site, anon_bz):
    assert {"TestProduct", PRODUCT} <= {product["name"] for product in anon_bz.getproducts()}
    assert sorted(anon_bz.getcomponents(PRODUCT)) == ["Engine", "Wheels"]
    details = anon_bz.getcomponentsdetails(PRODUCT)
    assert {name: detail["default_assigned_to"] for name, detail in details.items()} == \
        {"Engine": DEV, "Wheels": QA}
    products = anon_bz.product_get(ids=[site.product_id], include_fields=["name", "versions"])
    assert [product["name"] for product in products] == [PRODUCT]
    assert set(products[0]) == {"name", "versions"}
    assert [version["name"] for version in products[0]["versions"]] == ["1.0", "2.0"]


def test_component_create_and_update_in_python_bugzillas_format(transport, admin_bz):
    name = f"Gears-{transport}"
    created = admin_bz.addcomponent({"product": PRODUCT, "component": name,
                                     "description": "Toothed", "initialowner": DEV,
                                     "initialcclist": QA, "is_active": True})
    assert isinstance(created["id"], int)
    detail = admin_bz.getcomponentdetails(PRODUCT, name, force_refresh=True)
    assert (detail["description"], detail["default_assigned_to"], detail["is_active"]) == \
        ("Toothed", DEV, True)

    answer = admin_bz.editcomponent({"product": PRODUCT, "component": name,
                                     "description": "Finely toothed", "initialowner": QA,
                                     "is_active": False})
    assert answer["components"][0]["id"] == created["id"]
    detail = admin_bz.getcomponentdetails(PRODUCT, name, force_refresh=True)
    assert (detail["description"], detail["default_assigned_to"], detail["is_active"]) == \
        ("Finely toothed", QA, False)


def test_component_changes_need_editcomponents(transport, plain_bz, anon_bz):
    data = {"product": PRODUCT, "component": f"Refused-{transport}", "description": "No",
            "initialowner": DEV}
    assert error_code(plain_bz.addcomponent, data) == 304
    assert error_code(anon_bz.addcomponent, data) == 410
    assert error_code(plain_bz.editcomponent, {"product": PRODUCT, "component": "Engine",
                                               "description": "Hijacked"}) == 304
    assert plain_bz.getcomponentdetails(PRODUCT, "Engine")["description"] == "Makes it go"


def test_createuser_sends_the_real_name_as_name(transport, admin_bz, plain_bz):
    login = f"newcomer-{transport}@example.com"
    user = admin_bz.createuser(login, name="New Comer", password="newcomer-password-1")
    assert (user.email, user.real_name) == (login, "New Comer")
    assert error_code(plain_bz.createuser, f"intruder-{transport}@example.com", "Intruder",
                      "intruder-password-1") == 304
    assert error_code(admin_bz.getuser, f"intruder-{transport}@example.com") == 51


# Bugs ---------------------------------------------------------------------------------

def test_createbug_with_alias_then_getbug_by_id_and_alias(admin_bz, anon_bz):
    bug = new_bug(admin_bz, component="Wheels", severity="major")
    alias = bug.alias[0]
    assert (bug.product, bug.component, bug.version, bug.severity) == \
        (PRODUCT, "Wheels", "1.0", "major")
    assert (bug.assigned_to, bug.creator) == (QA, ADMIN)
    assert anon_bz.getbug(alias).id == bug.id
    assert [found.id for found in anon_bz.getbugs([bug.id, alias])] == [bug.id, bug.id]


def test_getbug_errors_are_101_for_a_missing_id_and_100_for_a_missing_alias(anon_bz):
    assert error_code(anon_bz.getbug, 999999) == 101
    assert error_code(anon_bz.getbug, "no-such-alias") == 100


def test_createbug_needs_a_login(anon_bz):
    assert error_code(anon_bz.createbug, product=PRODUCT, component="Engine", version="1.0",
                      op_sys="Linux", platform="PC", summary="Anonymous", description="x") == 410


def test_query_by_product_component_id_alias_and_fields(admin_bz, anon_bz):
    engine = new_bug(admin_bz, component="Engine")
    wheels = new_bug(admin_bz, component="Wheels")

    def ids(query):
        return {bug.id for bug in anon_bz.query(query)}

    found = ids(anon_bz.build_query(product=PRODUCT, component="Engine"))
    assert engine.id in found and wheels.id not in found
    assert ids(anon_bz.build_query(bug_id=[engine.id, wheels.id])) == {engine.id, wheels.id}
    assert ids(anon_bz.build_query(alias=wheels.alias[0])) == {wheels.id}

    trimmed = anon_bz.query(anon_bz.build_query(bug_id=[engine.id], include_fields=["summary"]))
    assert [(bug.id, bug.summary) for bug in trimmed] == [(engine.id, engine.summary)]
    assert set(trimmed[0].get_raw_data()) == {"id", "summary"}


def test_query_by_resolution(admin_bz):
    fixed = new_bug(admin_bz)
    admin_bz.update_bugs([fixed.id], admin_bz.build_update(status="RESOLVED", resolution="FIXED"))
    still_open = new_bug(admin_bz)

    def ids(resolution):
        return {bug.id for bug in admin_bz.query({"product": PRODUCT, "resolution": resolution})}

    assert fixed.id in ids("FIXED") and still_open.id not in ids("FIXED")
    assert still_open.id in ids("---") and fixed.id not in ids("---")


def test_update_status_resolution_cc_keywords_and_flag_with_requestee(admin_bz, anon_bz):
    bug = new_bug(admin_bz)
    admin_bz.update_bugs([bug.id], admin_bz.build_update(
        status="IN_PROGRESS", cc_add=[DEV, QA], keywords_add=["regression"],
        flags=[{"name": "review", "status": "?", "requestee": DEV}]))
    bug.refresh()
    assert (bug.status, bug.resolution) == ("IN_PROGRESS", "")
    assert sorted(bug.cc) == [DEV, QA] and bug.keywords == ["regression"]
    assert [(flag["name"], flag["status"], flag["requestee"], flag["setter"])
            for flag in bug.flags] == [("review", "?", DEV, ADMIN)]
    assert bug.get_flag_status("review") == "?"

    answer = admin_bz.update_bugs([bug.id], admin_bz.build_update(
        status="RESOLVED", resolution="WONTFIX", cc_remove=[QA], keywords_remove=["regression"]))
    assert answer["bugs"][0]["changes"]["resolution"] == {"removed": "", "added": "WONTFIX"}
    bug.refresh()
    assert (bug.status, bug.resolution, bug.cc, bug.keywords) == \
        ("RESOLVED", "WONTFIX", [DEV], [])
    assert error_code(anon_bz.update_bugs, [bug.id], anon_bz.build_update(status="CONFIRMED")) \
        == 410


def test_update_of_several_bugs_sends_them_all(admin_bz):
    first, second = new_bug(admin_bz), new_bug(admin_bz)
    answer = admin_bz.update_bugs([first.id, second.id], admin_bz.build_update(priority="High"))
    assert [entry["id"] for entry in answer["bugs"]] == [first.id, second.id]
    assert {bug.priority for bug in admin_bz.getbugs([first.id, second.id])} == {"High"}


def test_private_comments_reach_insiders_only(admin_bz, plain_bz, anon_bz):
    bug = new_bug(admin_bz)
    admin_bz.update_bugs([bug.id], admin_bz.build_update(comment="Only for insiders",
                                                         comment_private=True))
    plain_bz.update_bugs([bug.id], plain_bz.build_update(comment="For everyone"))

    def texts(bz):
        return [(comment["text"], comment["is_private"])
                for comment in bz.getbug(bug.id).getcomments()]

    assert texts(admin_bz) == [(bug.getcomments()[0]["text"], False),
                               ("Only for insiders", True), ("For everyone", False)]
    assert texts(plain_bz) == texts(anon_bz) == [(bug.getcomments()[0]["text"], False),
                                                 ("For everyone", False)]
    assert error_code(plain_bz.update_bugs, [bug.id],
                      plain_bz.build_update(comment="Sneaky", comment_private=True)) == 113
    assert len(admin_bz.get_comments([bug.id])["bugs"][str(bug.id)]["comments"]) == 3


def test_attach_get_and_update_flags_of_attachments(admin_bz, plain_bz, anon_bz):
    bug = new_bug(admin_bz)
    content = b"line one\nline two\n"
    attach_id = admin_bz.attachfile(bug.id, io.BytesIO(content), "The log", file_name="run.log",
                                    content_type="text/plain", comment="Log attached")
    assert isinstance(attach_id, int)
    opened = anon_bz.openattachment(attach_id)
    assert (opened.name, opened.read()) == ("run.log", content)
    listed = anon_bz.get_attachments([bug.id], None)["bugs"][str(bug.id)]
    assert [(item["id"], item["summary"], item["content_type"]) for item in listed] == \
        [(attach_id, "The log", "text/plain")]

    admin_bz.updateattachmentflags(bug.id, attach_id, "approval", status="?", requestee=QA)
    attachment = admin_bz.get_attachments(None, attach_id)["attachments"][str(attach_id)]
    assert [(flag["name"], flag["status"], flag["requestee"]) for flag in attachment["flags"]] == \
        [("approval", "?", QA)]
    assert error_code(anon_bz.attachfile, bug.id, io.BytesIO(b"x"), "Anonymous",
                      file_name="x.txt") == 410


def test_private_attachments_are_hidden_from_non_insiders(admin_bz, plain_bz):
    bug = new_bug(admin_bz)
    attach_id = admin_bz.attachfile(bug.id, io.BytesIO(b"secret"), "Secret", file_name="s.txt",
                                    is_private=True)
    assert admin_bz.openattachment(attach_id).read() == b"secret"
    assert plain_bz.get_attachments([bug.id], None)["bugs"][str(bug.id)] == []
    assert error_code(plain_bz.openattachment, attach_id) == 304
