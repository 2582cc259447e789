"""The site the browser tests share (a pytest plugin that conftest.py
lists, so the test modules name its fixtures as parameters without
importing them): `site`, a real bugsvc server on a free loopback port with
a plain user, an insider and a restricted group, set up over REST as an
administrator would; `driver`, a headless Chromium (tests/browser_support.py)
for one module; and the helpers that sign in, fill forms and read the site.
Both fixtures are module-scoped: each browser test module gets its own
server and browser, which pytest-xdist keeps on one worker.

The site's database is an SQLite file, unless the module is marked
`site_on_each_engine` (`pytestmark = [..., pytest.mark.site_on_each_engine]`):
then its tests run once per engine that --db-backend chooses (conftest's
pytest_generate_tests parametrizes `site_engine`), the PostgreSQL run
against a new database of the session's throwaway cluster."""

import sys

import pytest

from browser_support import (
    axe_violations,
    emulate,
    navigate,
    new_driver,
    open_page,
    overflow,
    require_browser,
)
from live_server import ROOT, Server, api_key_for


ADMIN, ADMIN_PASSWORD = "admin@example.com", "browser admin password 1"
PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain password 1"
INSIDER, INSIDER_PASSWORD = "insider@example.com", "insider password 1"
PASSWORDS = {ADMIN: ADMIN_PASSWORD, PLAIN: PLAIN_PASSWORD, INSIDER: INSIDER_PASSWORD}


class Site:
    """The server under test, with the administrator's API key for setting
    the world up over REST (as an administrator would)."""

    def __init__(self, server, key):
        self.server = server
        self.url = server.url
        self.key = key

    def rest(self, method, path, body=None, **query):
        status, answer, _ = self.server.call(method, "/rest" + path,
                                             dict(query, Bugzilla_api_key=self.key), body)
        assert status < 300, (status, answer)
        return answer


@pytest.fixture(scope="module")
def site_engine():
    """The engine of the module's site: SQLite, unless the module is marked
    `site_on_each_engine` (then a parameter: each engine chosen)."""
    return "sqlite"


@pytest.fixture(scope="module")
def site(site_engine, tmp_path_factory, request):
    require_browser()
    workdir = tmp_path_factory.mktemp("browser")
    if site_engine == "postgresql":
        cluster = request.getfixturevalue("postgresql")
        database = cluster.create_database()
        db_path = cluster.url(database)
    else:
        database, db_path = None, workdir / "browser.sqlite"
    server = Server([sys.executable, str(ROOT / "bugsvc.py")], db_path, workdir,
                    {"BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD}, name="browser")
    try:
        site = Site(server, api_key_for(db_path, ADMIN))
        site.db_path = db_path
        for login, password, name in ((PLAIN, PLAIN_PASSWORD, "Pat Plain"),
                                      (INSIDER, INSIDER_PASSWORD, "Ida Insider")):
            site.rest("POST", "/user", {"email": login, "password": password, "full_name": name})
        site.rest("POST", "/group", {"name": "staff", "description": "Our staff",
                                     "is_active": True})
        site.rest("POST", "/group", {"name": "secret", "description": "Security team",
                                     "is_active": True})
        site.rest("PUT", f"/user/{INSIDER}", {"groups": {"add": ["staff"]}})
        site.rest("PUT", "/parameters", {"insidergroup": "staff"})
        site.rest("PUT", "/product/TestProduct", {"group_controls": {
            "secret": {"membercontrol": "Shown", "othercontrol": "NA"}}})
        site.rest("POST", "/keyword", {"name": "regression", "description": "It worked"})
        site.rest("POST", "/flag_type", {"name": "review", "description": "Code review",
                                         "target_type": "bug"})
        yield site
    finally:
        server.stop()
        if database is not None:
            cluster.drop_database(database)


@pytest.fixture(scope="module")
def driver(site, tmp_path_factory):
    browser = new_driver(tmp_path_factory.mktemp("downloads"))
    yield browser
    browser.quit()


def file_bug(site, summary, **fields):
    body = {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
            "summary": summary, "description": f"About {summary}", "op_sys": "Linux",
            "platform": "PC"}
    body.update(fields)
    return site.rest("POST", "/bug", body)["id"]


def by(driver, css):
    from selenium.webdriver.common.by import By
    return driver.find_element(By.CSS_SELECTOR, css)


def all_of(driver, css):
    from selenium.webdriver.common.by import By
    return driver.find_elements(By.CSS_SELECTOR, css)


def sign_in(driver, site, who):
    driver.delete_all_cookies()
    open_page(driver, site.url + "/login")
    by(driver, "#Bugzilla_login").send_keys(who)
    by(driver, "#Bugzilla_password").send_keys(PASSWORDS[who])
    click_and_wait(driver, "form.stacked button[type=submit]", f"{who}'s home page", "My work")


def sign_out(driver, site):
    driver.delete_all_cookies()
    open_page(driver, site.url + "/")


def click_and_wait(driver, css, what, shows=None):
    """Click the button (or link) `css` and wait for the page it leads to
    (showing `shows`, if given)."""
    button = by(driver, css)
    navigate(driver, button.click, what, shows)


def choose(driver, css, text):
    from selenium.webdriver.support.ui import Select
    Select(by(driver, css)).select_by_visible_text(text)


def bug_of(site, bug_id):
    return site.rest("GET", f"/bug/{bug_id}")["bugs"][0]


def keys(browser, *typed):
    """Type `typed` (text and keys) into whatever has the focus."""
    from selenium.webdriver.common.action_chains import ActionChains
    ActionChains(browser).send_keys(*typed).perform()


def tab_to(browser, css, limit=60):
    """Press Tab until `css` has the focus, which must be visible."""
    from selenium.webdriver.common.keys import Keys
    target = by(browser, css)
    for _ in range(limit):
        if browser.switch_to.active_element == target:
            break
        keys(browser, Keys.TAB)
    else:
        raise AssertionError(f"{css} cannot be reached with the Tab key")
    style = browser.execute_script("var s = getComputedStyle(document.activeElement);"
                                   "return [s.outlineStyle, s.outlineWidth];")
    assert style[0] != "none" and style[1] != "0px", f"no visible focus on {css}"
    return target


# The screens and colour schemes a page is checked in (JavaScript on or off
# is the driver's): a wide screen and a phone's, light and dark.
SCREENS = ((1280, 1000), (390, 844))
SCHEMES = ("light", "dark")


def check_every_state(driver, found, name):
    """Note in `found`, for the page the driver shows at each of SCREENS in
    each of SCHEMES ("NAME at WIDTH SCHEME"), axe-core's violations, on the
    phone's screen whether it scrolls sideways, and in dark whether the page
    turned dark: the page is laid out again for each state (its state kept:
    an open list, a dialog, a typed text), not loaded again, so a signed-in
    browser serves every state. The driver ends on a light 1280-pixel
    screen."""
    try:
        backgrounds = {}
        for scheme in SCHEMES:
            for width, height in SCREENS:
                emulate(driver, width, height, scheme)
                problems = list(axe_violations(driver))
                if width < 600:
                    extra, worst = overflow(driver)
                    if extra > 0:
                        problems.append(("sideways", f"{extra}px", worst))
                backgrounds[scheme] = driver.execute_script(
                    "return getComputedStyle(document.body).backgroundColor")
                found[f"{name} at {width} {scheme}"] = problems
        if backgrounds["dark"] == backgrounds["light"]:
            found[f"{name} in dark"] = [("scheme", "the page stayed "
                                        f"{backgrounds['light']} in dark")]
    finally:
        emulate(driver)


def every_page(site):
    """Every page, as the visitor who may open it."""
    bug_id = file_bug(site, "Accessibility sample", keywords=["regression"])
    site.rest("PUT", f"/bug/{bug_id}", {"flags": [{"name": "review", "status": "?",
                                                  "requestee": PLAIN}],
                                        "cc": {"add": [PLAIN]}})
    attachment = site.rest("POST", f"/bug/{bug_id}/attachment", {
        "ids": [bug_id], "data": "aGVsbG8=", "file_name": "hello.txt", "summary": "Hello",
        "content_type": "text/plain"})["ids"][0]
    user_id = site.rest("GET", f"/user/{PLAIN}")["users"][0]["id"]
    site.rest("PUT", "/parameters", {"webhooks_enabled": "1"})
    site.rest("POST", "/webhooks", {"name": "ci", "url": "https://hooks.example.com/bugs",
                                    "events": ["create", "comment"], "product": "Any"})
    reset = mailed_token(site, "password", user_id=user_id)
    offer = mailed_token(site, "account", login="newcomer@example.com")
    new_address = mailed_token(site, "emailnew", user_id=user_id, login="pat@elsewhere.example")
    old_address = mailed_token(site, "emailold", user_id=user_id, login=PLAIN)
    anonymous = ["/", "/login", "/query.cgi", "/buglist.cgi?bug_status=__open__",
                 f"/show_bug.cgi?id={bug_id}", f"/show_activity.cgi?id={bug_id}",
                 "/show_bug.cgi", "/show_bug.cgi?id=999999", "/enter_bug.cgi",
                 "/token.cgi?t=x&a=cfmpw", f"/attachment.cgi?id={attachment}&action=edit",
                 f"/token.cgi?t={reset}&a=cfmpw", f"/token.cgi?t={reset}&a=cxlpw",
                 f"/token.cgi?t={offer}&a=request_new_account",
                 f"/token.cgi?t={offer}&a=cancel_new_account", "/createaccount.cgi",
                 "/page.cgi?id=quicksearch.html", "/page.cgi?id=fields.html",
                 "/page.cgi?id=bug-writing.html", f"/showdependencytree.cgi?id={bug_id}",
                 f"/token.cgi?t={new_address}&a=cfmem", f"/token.cgi?t={new_address}&a=cxlem",
                 f"/token.cgi?t={old_address}&a=cxlem"]
    signed_in = ["/", f"/show_bug.cgi?id={bug_id}", "/enter_bug.cgi?product=TestProduct",
                 f"/attachment.cgi?bugid={bug_id}&action=enter",
                 f"/attachment.cgi?id={attachment}&action=edit",
                 "/buglist.cgi?product=TestProduct&columnlist=priority,short_desc,keywords",
                 "/userprefs.cgi", "/userprefs.cgi?tab=apikey", "/userprefs.cgi?tab=email",
                 "/userprefs.cgi?tab=webhooks", "/userprefs.cgi?tab=mfa",
                 "/userprefs.cgi?tab=saved-searches", "/logout", "/admin.cgi",
                 "/editproducts.cgi", "/editproducts.cgi?product=TestProduct",
                 "/editproducts.cgi?action=add",
                 "/editcomponents.cgi?product=TestProduct&component=TestComponent",
                 "/editcomponents.cgi?product=TestProduct&action=add", "/editusers.cgi",
                 "/editusers.cgi?action=add", f"/editusers.cgi?action=edit&userid={user_id}",
                 "/editgroups.cgi", "/editgroups.cgi?action=add",
                 "/editgroups.cgi?action=changeform&group=1", "/editparams.cgi",
                 "/editkeywords.cgi", "/editkeywords.cgi?action=edit&id=1",
                 "/auditlog.cgi", "/auditlog.cgi?object=staff&since=last+week",
                 "/editparams.cgi?section=mta", "/editflagtypes.cgi",
                 "/editflagtypes.cgi?action=enter&target_type=attachment",
                 "/editflagtypes.cgi?action=edit&id=1", "/editflagtypes.cgi?action=copy&id=1",
                 "/editflagtypes.cgi?action=confirmdelete&id=1", "/editfields.cgi",
                 "/editfields.cgi?action=add", "/editvalues.cgi?field=priority",
                 "/editforges.cgi"]
    return bug_id, anonymous, signed_in


def mailed_token(site, kind, user_id=None, login=None):
    """A token as a mailed link carries it, stored as the mail would store
    it (the mails themselves are tested with a real SMTP server)."""
    from datetime import datetime, timezone

    from bugsvc.accounts import tokens
    from bugsvc.store.location import open_database
    database = open_database(site.db_path)
    try:
        with database.transaction(write=True) as conn:
            return tokens.issue(conn, kind, datetime.now(timezone.utc), user_id=user_id,
                                login=login)
    finally:
        database.close()
