"""A real headless Chromium (Debian's chromium and chromium-driver, driven
by Selenium) and axe-core (from the npm registry, installed by .ci/run) for
the browser tests. Nothing is downloaded here: without the browser, its
driver or axe-core the tests are skipped with the reason, and in CI
(environment variable CI set) they fail instead."""

import os
import shutil
from pathlib import Path

import pytest


ROOT = Path(__file__).resolve().parent.parent
CHROMIUM = os.environ.get("BUGSVC_TEST_CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("BUGSVC_TEST_CHROMEDRIVER", "/usr/bin/chromedriver")
# Where .ci/run installs axe-core (`npm install --prefix .venv/npm axe-core@4`).
AXE = Path(os.environ.get("BUGSVC_TEST_AXE",
                          ROOT / ".venv" / "npm" / "node_modules" / "axe-core" / "axe.min.js"))
# Flags that keep the browser off the network and working as root in CI.
FLAGS = ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--no-first-run", "--disable-quic", "--disable-extensions",
         "--disable-default-apps", "--metrics-recording-only", "--mute-audio",
         "--window-size=1280,1000")
WAIT_SECONDS = 30


def missing():
    """Why the browser tests cannot run here, or None."""
    try:
        import selenium  # noqa: F401
    except ImportError:
        return "selenium is not installed (pip install -e '.[test]')"
    for path, package in ((CHROMIUM, "chromium"), (CHROMEDRIVER, "chromium-driver")):
        if not (Path(path).is_file() or shutil.which(path)):
            return f"{path} is missing (apt-get install {package})"
    if not AXE.is_file():
        return (f"axe-core is missing at {AXE} (npm install --no-save --prefix .venv/npm "
                "axe-core@4)")
    return None


def require_browser():
    """Skip (or, in CI, fail) when the browser tests cannot run."""
    reason = missing()
    if reason:
        if os.environ.get("CI"):
            pytest.fail(f"the browser tests cannot run in CI: {reason}")
        pytest.skip(reason)


def new_driver(download_dir=None, javascript=True):
    """A headless Chromium; javascript=False turns the pages' scripts off, on
    every page it opens (as a visitor who blocks them; the test's own
    execute_script still runs, and axe_violations turns them on for axe
    alone)."""
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in FLAGS:
        options.add_argument(flag)
    if download_dir:
        options.add_experimental_option("prefs", {"download.default_directory": str(download_dir)})
    driver = webdriver.Chrome(service=Service(CHROMEDRIVER), options=options)
    driver.set_page_load_timeout(60)
    driver.scripts_off = not javascript
    _page_scripts(driver, javascript)
    return driver


def _page_scripts(driver, on):
    """Let the pages' scripts run, or not (Chromium's DevTools switch; it
    holds across navigations)."""
    driver.execute_cdp_cmd("Emulation.setScriptExecutionDisabled", {"value": not on})


def wait_for(driver, condition, what, seconds=WAIT_SECONDS):
    """Wait until `condition(driver)` is true (returned) or fail after
    `seconds` naming `what`; errors of a page that is being replaced (a
    script run while its document unloads, an element gone stale) count as
    not yet."""
    from selenium.common.exceptions import (
        JavascriptException,
        NoSuchElementException,
        StaleElementReferenceException,
    )
    from selenium.webdriver.support.ui import WebDriverWait
    waiting = WebDriverWait(driver, seconds, poll_frequency=0.05, ignored_exceptions=(
        JavascriptException, NoSuchElementException, StaleElementReferenceException))
    return waiting.until(condition, f"gave up waiting for {what}")


def page_is_whole(driver):
    """True once the browser shows a whole page of the site: its document
    loaded (readyState complete) and holding the layout's main element."""
    return driver.execute_script("return document.readyState === 'complete'"
                                 " && document.getElementById('main') !== null")


def wait_for_page(driver, what, shows=None):
    """Wait until the browser shows a whole page of the site holding the
    text `shows` (if given)."""
    wait_for(driver, lambda d: page_is_whole(d) and (shows is None or shows in d.page_source),
             what)


def open_page(driver, url, shows=None):
    """Go to `url` and wait until its page is whole (and holds `shows`)."""
    driver.get(url)
    wait_for_page(driver, url, shows)


def navigate(driver, action, what, shows=None):
    """Do `action()` (a click on a link or a form's button, a key that
    submits) and wait for the page it leads to: the page shown before gone
    (its document stale), then the new one whole and holding `shows`. Every
    navigation a test starts goes through here, so the next step never
    meets a page still loading (an empty page source, a half-parsed one, or
    the one before)."""
    from selenium.webdriver.common.by import By
    before = driver.find_element(By.TAG_NAME, "html")
    action()
    wait_for(driver, lambda _: gone(before), f"the page to leave for {what}")
    wait_for_page(driver, what, shows)


def gone(element):
    """True once `element`'s document has been replaced: the element is
    stale, or (chromedriver's answer while the old document is being
    replaced) its node no longer belongs to the document."""
    from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
    try:
        element.is_enabled()
    except StaleElementReferenceException:
        return True
    except WebDriverException as exc:
        if "does not belong to the document" in (exc.msg or ""):
            return True
        raise
    return False


def axe_violations(driver):
    """axe-core's violations on the page the driver shows (every rule of
    WCAG 2.0/2.1 A and AA and axe's best practices)."""
    if getattr(driver, "scripts_off", False):
        # axe itself is a script: on for it alone (the page's scripts ran
        # when it loaded, or not; they do not run again).
        _page_scripts(driver, True)
        try:
            return _axe_violations(driver)
        finally:
            _page_scripts(driver, False)
    return _axe_violations(driver)


def _axe_violations(driver):
    if not driver.execute_script("return typeof window.axe !== 'undefined'"):
        driver.execute_script(AXE.read_text(encoding="utf-8"))
    result = driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "axe.run(document, {runOnly: {type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a',"
        " 'wcag21aa', 'best-practice']}}).then(function (r) { done(r.violations); },"
        " function (e) { done([{id: 'axe-error', help: String(e), nodes: []}]); });")
    return [(v["id"], v["help"], [node.get("target") for node in v["nodes"]][:5])
            for v in result]
