"""The admin group and the system groups, as Bugzilla 5.2's installation
sets them up: admin is a member of every other system group, may bless it
and sees its members, so whoever is in admin administers for as long as
they are in it (added or removed over REST or on editusers.cgi); the first
administrator holds admin (member and blesser) and editusers directly and
the rest through admin; editbugs and bz_canusewhineatothers are members of
bz_canusewhines, bz_sudoers of bz_sudo_protect."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bugsvc.catalogue.install import INHERITED_BY, SYSTEM_GROUPS
from bugsvc.errors import ServiceError
from bugsvc.services import group as group_service, instance, user
from page_support import Browser


NEWCOMER, NEWCOMER_PASSWORD = "newcomer@example.com", "newcomer-password-1"
PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"
# Every system group but admin: admin is a member of each.
SYSTEM = sorted(name for name, _, _ in SYSTEM_GROUPS if name != "admin")


@pytest.fixture
def people(services):
    services.add_user(NEWCOMER, password=NEWCOMER_PASSWORD, real_name="Nell Newcomer")
    services.add_user(PLAIN, password=PLAIN_PASSWORD, real_name="Pat Plain")


def memberships(services, login):
    """{group name: sorted grant types} of `login`'s memberships (no bless rows)."""
    found = {}
    for name, grant_type in services.query(
            "SELECT g.name, ug.grant_type FROM user_groups ug JOIN groups g ON g.id = ug.group_id"
            " JOIN users u ON u.id = ug.user_id WHERE u.login = ? AND ug.is_bless = 0"
            " ORDER BY g.name, ug.grant_type", (login,)):
        found.setdefault(name, []).append(grant_type)
    return found


def direct_rows(services, login):
    return services.query("SELECT g.name, ug.is_bless FROM user_groups ug JOIN groups g"
                          " ON g.id = ug.group_id JOIN users u ON u.id = ug.user_id"
                          " WHERE u.login = ? AND ug.grant_type = 0 ORDER BY g.name, ug.is_bless",
                          (login,))


def stored(services):
    """What the refused calls below could change."""
    return {table: services.table(table)
            for table in ("users", "components", "params", "user_groups")}


def rest(client, method, path, key, body=None):
    return client.simulate_request(method, path, params={"Bugzilla_api_key": key}
                                   if key else None, json=body)


def administers(client, services, login, tag):
    """The calls editusers, editcomponents and tweakparams members may make,
    and a bless of a system group, as `login` (None: anonymous): over REST
    their (HTTP status, Bugzilla code), the parameter's (which Bugzilla
    changes on editparams.cgi alone) as the service, its error code or 0."""
    key = services.api_key(login) if login else None
    made = rest(client, "POST", "/rest/user", key, {"email": f"made-{tag}@example.com"})
    part = rest(client, "POST", "/rest/component", key,
                {"product": "TestProduct", "name": f"Part {tag}", "description": "A part",
                 "default_assignee": PLAIN})
    blessed = rest(client, "PUT", f"/rest/user/{PLAIN}", key,
                   {"groups": {"add": ["tweakparams"]}})
    try:
        services.call(instance.update_parameters, {"maintainer": f"{tag}@example.com"},
                      as_user=login)
        param = 0
    except ServiceError as error:
        param = error.code
    return [(made.status_code, made.json.get("code")), (part.status_code, part.json.get("code")),
            (blessed.status_code, blessed.json.get("code")), param]


def test_a_new_installation_makes_admin_a_member_of_every_system_group(services):
    inheritance = set(services.query(
        "SELECT m.name, g.name FROM group_group_map x JOIN groups m ON m.id = x.member_id"
        " JOIN groups g ON g.id = x.grantor_id"))
    assert inheritance == {("admin", name) for name in SYSTEM} | {
        (member, grantor) for grantor, members in INHERITED_BY.items() for member in members}
    for grant_type in (1, 2):       # bless and visibility
        assert {row[0] for row in services.query(
            "SELECT g.name FROM group_grants x JOIN groups m ON m.id = x.member_id"
            " JOIN groups g ON g.id = x.grantor_id WHERE m.name = 'admin' AND x.grant_type = ?",
            (grant_type,))} >= set(SYSTEM)
    # The first administrator: admin (member and bless) and editusers
    # directly, as Bugzilla's make_admin; every other system group through
    # admin (editbugs by its regexp too).
    assert direct_rows(services, ADMIN) == [("admin", 0), ("admin", 1), ("editusers", 0)]
    held = memberships(services, ADMIN)
    assert held["admin"] == [0] and held["editusers"] == [0] and held["editbugs"] == [2]
    # (No derived row where a direct or regexp one is.)
    assert all(held[name] == [1] for name in SYSTEM if name not in ("editusers", "editbugs"))


def test_an_account_added_to_admin_over_rest_administers_at_once_and_no_longer_once_removed(
        client, services, admin_key, people):
    before = stored(services)
    refused = administers(client, services, NEWCOMER, "before")
    assert refused == [(401, 304), (401, 304), (401, 304), 304]
    assert stored(services) == before
    added = rest(client, "PUT", f"/rest/user/{NEWCOMER}", admin_key, {"groups": {"add": ["admin"]}})
    assert added.status_code == 200
    assert administers(client, services, NEWCOMER, "granted") == [(201, None), (201, None),
                                                                  (200, None), 0]
    assert services.query("SELECT COUNT(*) FROM users WHERE login = 'made-granted@example.com'"
                          ) == [(1,)]
    assert services.query("SELECT COUNT(*) FROM components WHERE name = 'Part granted'") == [
        (1,)]
    assert memberships(services, PLAIN)["tweakparams"] == [0]
    assert services.query("SELECT value FROM params WHERE name = 'maintainer'") == [
        ("granted@example.com",)]
    # Direct in admin alone; every other system group through it.
    assert direct_rows(services, NEWCOMER) == [("admin", 0)]
    held = memberships(services, NEWCOMER)
    assert set(held) == {"admin", *SYSTEM} and held["editbugs"] == [2]
    assert all(held[name] == [1] for name in SYSTEM if name != "editbugs")
    # Taken out of admin, the account has none of those powers any more.
    removed = rest(client, "PUT", f"/rest/user/{NEWCOMER}", admin_key,
                   {"groups": {"remove": ["admin"]}})
    assert removed.status_code == 200
    before = stored(services)
    assert administers(client, services, NEWCOMER, "after") == [(401, 304), (401, 304), (401, 304),
                                                           304]
    assert stored(services) == before
    assert set(memberships(services, NEWCOMER)) == {"editbugs", "bz_canusewhines"}


def test_plain_users_and_anonymous_callers_are_unaffected(client, services, people):
    before = stored(services)
    assert administers(client, services, PLAIN, "plain") == [
        (401, 304), (401, 304), (401, 304), 304]
    # (User.create answers 304 to a logged-out caller, as Bugzilla's.)
    assert administers(client, services, None, "anonymous") == [
        (401, 304), (401, 410), (401, 410), 410]
    assert stored(services) == before
    assert set(memberships(services, PLAIN)) == {"editbugs", "bz_canusewhines"}


def test_group_get_and_user_get_show_the_memberships_admin_gives(services, people):
    services.call(user.update, {"names": [NEWCOMER], "groups": {"add": ["admin"]}},
                  as_user=ADMIN)
    found = services.call(group_service.get, {"names": ["tweakparams"], "membership": 1},
                          as_user=ADMIN)["groups"][0]
    assert sorted(member["name"] for member in found["membership"]) == [ADMIN, NEWCOMER]
    shown = services.call(user.get, {"names": [NEWCOMER]}, as_user=NEWCOMER)["users"][0]
    assert {g["name"] for g in shown["groups"]} == {"admin", *SYSTEM}
    # Another account's groups, as the administrator (editusers) sees them.
    shown = services.call(user.get, {"names": [NEWCOMER]}, as_user=ADMIN)["users"][0]
    assert {g["name"] for g in shown["groups"]} == {"admin", *SYSTEM}
    services.call(user.update, {"names": [NEWCOMER], "groups": {"remove": ["admin"]}},
                  as_user=ADMIN)
    found = services.call(group_service.get, {"names": ["tweakparams"], "membership": 1},
                          as_user=ADMIN)["groups"][0]
    assert [member["name"] for member in found["membership"]] == [ADMIN]


def test_an_account_made_admin_on_editusers_changes_parameters_and_components(
        app, services, people):
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    newcomer_id = services.user_id(NEWCOMER)

    def set_admin(member):
        admin.get(f"/editusers.cgi?action=edit&userid={newcomer_id}")
        page = admin.post("/editusers.cgi", {
            "action": "update", "userid": newcomer_id, "login": NEWCOMER,
            "name": "Nell Newcomer", "groups_shown": ["admin"],
            "groups": ["admin"] if member else []})
        assert page.status_code == 200

    def tries(browser, tag):
        """editparams.cgi's and editcomponents.cgi's answers to `browser`'s
        forms (a page that refuses has no form: its token is then the home
        page's). The parameters form leaves what it does not send as it is."""
        if browser.get("/editparams.cgi").status_code != 200:
            browser.get("/")
        saved = browser.post("/editparams.cgi",
                             {"param-maintainer": f"{tag}@example.com"}).status_code
        if browser.get("/editcomponents.cgi?product=TestProduct&action=add").status_code != 200:
            browser.get("/")
        part = browser.post("/editcomponents.cgi", {
            "action": "new", "product": "TestProduct", "name": f"Part {tag}",
            "description": "A part", "default_assignee": PLAIN}).status_code
        return saved, part

    newcomer = Browser(app)
    newcomer.login(NEWCOMER, NEWCOMER_PASSWORD)
    before = stored(services)
    assert tries(newcomer, "before") == (401, 401)
    assert stored(services) == before
    set_admin(True)
    assert tries(newcomer, "granted") == (200, 200)
    assert services.query("SELECT value FROM params WHERE name = 'maintainer'") == [
        ("granted@example.com",)]
    assert services.query("SELECT COUNT(*) FROM components WHERE name = 'Part granted'") == [
        (1,)]
    set_admin(False)
    before = stored(services)
    assert tries(newcomer, "after") == (401, 401)
    assert stored(services) == before
    # A plain user, and a visitor who is not signed in, are turned away alike.
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    assert tries(plain, "plain") == (401, 401)
    assert stored(services) == before
