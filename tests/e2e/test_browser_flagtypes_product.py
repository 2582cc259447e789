"""editflagtypes.cgi for a product's own administrator in a real headless
Chromium against a real server: a member of staff, whose group controls
give editcomponents on TestProduct alone, makes a flag type for one of its
components and narrows a type that also covers another product to it, with
the keyboard; the other product's inclusion stays and the locked fields are
shown as such; a refusal comes back as typed; axe-core finds no violation.
A plain user and a visitor are refused."""

import json

import pytest

from browser_site import INSIDER, PLAIN, by, sign_in, sign_out
from browser_support import axe_violations, navigate, open_page


pytestmark = [pytest.mark.slow, pytest.mark.site_on_each_engine]


def submit_with_enter(driver, what):
    from selenium.webdriver.common.keys import Keys
    navigate(driver, lambda: by(driver, "main form button[type=submit]").send_keys(Keys.ENTER),
             what)


def choose_only(driver, css, text):
    from selenium.webdriver.support.ui import Select
    menu = Select(by(driver, css))
    menu.deselect_all()
    menu.select_by_visible_text(text)


@pytest.fixture(scope="module")
def shared(site):
    """Staff (the insider's group) administers TestProduct; the type
    'shared' applies to TestProduct and to Other. Returns its id."""
    site.rest("POST", "/product", {"name": "Other", "description": "Someone else's",
                                   "version": "1.0"})
    site.rest("PUT", "/product/TestProduct", {"group_controls": {
        "staff": {"membercontrol": "Shown", "othercontrol": "NA", "editcomponents": True}}})
    return site.rest("POST", "/flag_type", {"name": "shared", "description": "Shared review",
                                            "inclusions": ["TestProduct", "Other"]})["id"]


def inclusions_of(site, name):
    listed = site.rest("GET", "/flag_type")["flagtypes"]
    return next(t["inclusions"] for t in listed if t["name"] == name)


def test_a_product_administrator_manages_the_flag_types_of_its_product(site, driver, shared):
    found = {}
    sign_in(driver, site, INSIDER)
    open_page(driver, site.url + "/editflagtypes.cgi")
    assert "Shared review" in driver.page_source
    found["list"] = axe_violations(driver)
    # A new type for one component of its product.
    open_page(driver, site.url + "/editflagtypes.cgi?action=enter&target_type=bug")
    assert "__Any__:__Any__" not in driver.page_source and "Other:" not in driver.page_source
    found["new type"] = axe_violations(driver)
    by(driver, "#name").send_keys("qa review")
    by(driver, "#description").send_keys("QA of our component")
    choose_only(driver, "#inclusions", "TestProduct:TestComponent")
    submit_with_enter(driver, "the refusal")
    assert 'role="alert"' in driver.page_source and 'value="qa review"' in driver.page_source
    found["refused type"] = axe_violations(driver)
    name = by(driver, "#name")
    name.clear()
    name.send_keys("qa-review")
    submit_with_enter(driver, "the list with the new type")
    assert 'role="alert"' not in driver.page_source and "QA of our component" in driver.page_source
    assert inclusions_of(site, "qa-review") == ["TestProduct:TestComponent"]
    # The shared type: its fields locked, its inclusion in TestProduct narrowed.
    open_page(driver, site.url + f"/editflagtypes.cgi?action=edit&id={shared}")
    assert "also applies to products you do not administer" in driver.page_source
    assert not by(driver, "#description").is_enabled() and not by(driver, "#name").is_enabled()
    found["shared type"] = axe_violations(driver)
    choose_only(driver, "#inclusions", "TestProduct:TestComponent")
    submit_with_enter(driver, "the list after the change")
    assert 'role="alert"' not in driver.page_source
    assert inclusions_of(site, "shared") == ["Other:__Any__", "TestProduct:TestComponent"]
    # Deleting it is refused with the reason.
    open_page(driver, site.url + f"/editflagtypes.cgi?action=confirmdelete&id={shared}")
    assert "may not delete it" in driver.page_source
    found["refused deletion"] = axe_violations(driver)
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)


def test_a_plain_user_and_a_visitor_are_refused(site, driver, shared):
    sign_in(driver, site, PLAIN)
    open_page(driver, site.url + "/editflagtypes.cgi")
    assert "Sorry" in driver.page_source and "Shared review" not in driver.page_source
    sign_out(driver, site)
    open_page(driver, site.url + "/editflagtypes.cgi")
    assert "Sign in" in driver.page_source and "Shared review" not in driver.page_source
