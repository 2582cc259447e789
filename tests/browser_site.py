"""The site the browser tests share (a pytest plugin that conftest.py
lists, so the test modules name its fixtures as parameters without
importing them): `site`, a real bugsvc server on a free loopback port with
a plain user, an insider and a restricted group, set up over REST as an
administrator would; `driver`, a headless Chromium (tests/browser_support.py)
for one module; and the helpers that sign in, fill forms and read the site.
Both fixtures are module-scoped: each browser test module gets its own
server and browser, which pytest-xdist keeps on one worker."""

import sys

import pytest

from browser_support import navigate, new_driver, open_page, require_browser
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
def site(tmp_path_factory):
    require_browser()
    workdir = tmp_path_factory.mktemp("browser")
    db_path = workdir / "browser.sqlite"
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
