"""Administration in a real headless Chromium against a real server: the
status workflow and the values of Bugzilla's own fields, set up with the
keyboard alone; axe-core finds no violation on their pages (a refusal
included), and bugs changed over REST afterwards follow the workflow; and a
whole installation (product, components, a custom field, a flag type, the
workflow, parameters) set up on the pages, which bugs filed over REST
afterwards follow."""

import json

import pytest

from browser_site import ADMIN, bug_of, by, file_bug, sign_in
from browser_support import axe_violations, navigate, open_page


pytestmark = [pytest.mark.slow, pytest.mark.site_on_each_engine]


def press_space_on(driver, css):
    from selenium.webdriver.common.keys import Keys
    by(driver, css).send_keys(Keys.SPACE)


def submit_with_enter(driver, css, what):
    from selenium.webdriver.common.keys import Keys
    navigate(driver, lambda: by(driver, css).send_keys(Keys.ENTER), what)


def test_an_administrator_makes_reopening_need_a_comment_in_the_browser(site, driver):
    sign_in(driver, site, ADMIN)
    found = {}
    # A new closed status, typed and submitted with the keyboard.
    open_page(driver, site.url + "/editvalues.cgi?field=bug_status&action=add")
    found["new status form"] = axe_violations(driver)
    by(driver, "#value").send_keys("SHIPPED")
    press_space_on(driver, "#is_open_0")
    submit_with_enter(driver, "main form button[type=submit]", "the statuses")
    assert 'role="status"' in driver.page_source and "SHIPPED" in driver.page_source
    found["statuses"] = axe_violations(driver)
    # The same name again is refused on the form, as typed.
    open_page(driver, site.url + "/editvalues.cgi?field=bug_status&action=add")
    by(driver, "#value").send_keys("shipped")
    submit_with_enter(driver, "main form button[type=submit]", "the refusal")
    assert 'role="alert"' in driver.page_source and 'value="shipped"' in driver.page_source
    found["refused status"] = axe_violations(driver)
    for path in ("/editvalues.cgi", "/editvalues.cgi?field=priority&action=edit&value=Low",
                 "/editproducts.cgi?action=editgroupcontrols&product=TestProduct",
                 "/editversions.cgi?product=TestProduct",
                 "/editmilestones.cgi?product=TestProduct", "/sanitycheck.cgi"):
        open_page(driver, site.url + path)
        found[path] = axe_violations(driver)
    site.rest("PUT", "/parameters", {"useclassification": "1"})
    site.rest("POST", "/classification", {"name": "Hardware"})
    for path in ("/editclassifications.cgi", "/editclassifications.cgi?action=add",
                 "/editclassifications.cgi?action=edit&classification=Hardware",
                 "/editclassifications.cgi?action=reclassify&classification=Hardware"):
        open_page(driver, site.url + path)
        found[path] = axe_violations(driver)
    # RESOLVED may move to SHIPPED.
    open_page(driver, site.url + "/editworkflow.cgi")
    found["workflow"] = axe_violations(driver)
    press_space_on(driver, 'input[aria-label="From RESOLVED to SHIPPED"]')
    submit_with_enter(driver, "main form button[type=submit]", "the saved workflow")
    assert 'role="status"' in driver.page_source
    assert by(driver, 'input[aria-label="From RESOLVED to SHIPPED"]').is_selected()
    # Reopening (RESOLVED to CONFIRMED) needs a comment.
    open_page(driver, site.url + "/editworkflow.cgi?action=edit_comment")
    found["comments"] = axe_violations(driver)
    press_space_on(driver, 'input[aria-label="A comment is required from RESOLVED to '
                           'CONFIRMED"]')
    submit_with_enter(driver, "main form button[type=submit]", "the saved comments")
    assert by(driver, 'input[aria-label="A comment is required from RESOLVED to '
                      'CONFIRMED"]').is_selected()
    open_page(driver, site.url + "/auditlog.cgi?class=Bugzilla::Status")
    assert "comment_required_to" in driver.page_source
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)

    # Over REST afterwards: a reopening without a comment is refused ...
    bug_id = file_bug(site, "Shipped then broken")
    site.rest("PUT", f"/bug/{bug_id}", {"status": "RESOLVED", "resolution": "FIXED"})
    status, answer, _ = site.server.call("PUT", f"/rest/bug/{bug_id}",
                                         {"Bugzilla_api_key": site.key},
                                         {"status": "CONFIRMED"})
    assert (status, answer["code"]) == (400, 32000), answer
    # ... one with a comment goes through, and so does the new move.
    site.rest("PUT", f"/bug/{bug_id}", {"status": "CONFIRMED",
                                        "comment": {"body": "Broken again."}})
    site.rest("PUT", f"/bug/{bug_id}", {"status": "RESOLVED", "resolution": "FIXED"})
    site.rest("PUT", f"/bug/{bug_id}", {"status": "SHIPPED"})
    assert site.rest("GET", f"/bug/{bug_id}")["bugs"][0]["status"] == "SHIPPED"


def _submit(driver, what):
    submit_with_enter(driver, "main form button[type=submit]", what)
    assert 'role="alert"' not in driver.page_source, what


def _choose_only(driver, css, text):
    from selenium.webdriver.support.ui import Select
    menu = Select(by(driver, css))
    menu.deselect_all()
    menu.select_by_visible_text(text)


def test_an_administrator_sets_up_an_installation_in_the_browser_and_rest_follows(site, driver):
    """An installation set up in the browser alone: a product with two components, a required
    drop-down shown only for that product, a review flag for one of its
    components, reopening a verified bug that needs a comment, and the
    parameters of new bugs' priority, all set up on the pages; bugs filed
    and changed over REST afterwards follow every one of those rules."""
    from browser_site import choose
    sign_in(driver, site, ADMIN)
    # The product and its components.
    open_page(driver, site.url + "/editproducts.cgi?action=add")
    by(driver, "#name").send_keys("Widgets")
    by(driver, "#description").send_keys("Things with moving parts")
    by(driver, "#version").clear()
    by(driver, "#version").send_keys("1.0")
    _submit(driver, "the new product")
    for name in ("Gears", "Springs"):
        open_page(driver, site.url + "/editcomponents.cgi?product=Widgets&action=add")
        by(driver, "#name").send_keys(name)
        by(driver, "#description").send_keys(f"The {name.lower()}")
        by(driver, "#default_assignee").send_keys(ADMIN)
        _submit(driver, f"the component {name}")
    # A drop-down every new Widgets bug must set, shown for Widgets alone.
    open_page(driver, site.url + "/editfields.cgi?action=add")
    by(driver, "#name").clear()
    by(driver, "#name").send_keys("cf_part")
    choose(driver, "#type", "Drop down")
    by(driver, "#display_name").send_keys("Part")
    press_space_on(driver, "#is_on_bug_entry")
    press_space_on(driver, "#is_mandatory")
    _choose_only(driver, "#visibility", "product is Widgets")
    _submit(driver, "the new field")
    for value in ("Cog", "Coil"):
        open_page(driver, site.url + "/editvalues.cgi?field=cf_part&action=add")
        by(driver, "#value").send_keys(value)
        _submit(driver, f"the value {value}")
    # A review flag for the Gears alone.
    open_page(driver, site.url + "/editflagtypes.cgi?action=enter&target_type=bug")
    by(driver, "#name").send_keys("gear-review")
    by(driver, "#description").send_keys("Review of a gear change")
    _choose_only(driver, "#inclusions", "Widgets:Gears")
    _submit(driver, "the new flag type")
    # Reopening a verified bug needs a comment.
    open_page(driver, site.url + "/editworkflow.cgi?action=edit_comment")
    press_space_on(driver, 'input[aria-label="A comment is required from VERIFIED to '
                           'CONFIRMED"]')
    _submit(driver, "the saved comments")
    # New bugs get High, whatever their reporter asks.
    open_page(driver, site.url + "/editparams.cgi?section=bugfields")
    choose(driver, "#param-defaultpriority", "High")
    _submit(driver, "the bug field parameters")
    open_page(driver, site.url + "/editparams.cgi?section=bugchange")
    press_space_on(driver, "#param-letsubmitterchoosepriority-off")
    _submit(driver, "the bug change parameters")

    # Over REST afterwards, as a script would.
    def filed(**fields):
        body = {"product": "Widgets", "component": "Gears", "version": "1.0",
                "summary": "A gear slips", "op_sys": "Linux", "platform": "PC"}
        body.update(fields)
        return site.server.call("POST", "/rest/bug", {"Bugzilla_api_key": site.key}, body)
    status, answer, _ = filed()
    assert (status, answer["code"]) == (400, 32000) and "cf_part" in answer["message"], answer
    status, answer, _ = filed(cf_part="Cog", priority="Highest",
                              flags=[{"name": "gear-review", "status": "?"}])
    assert status < 300, answer
    gear = bug_of(site, answer["id"])
    assert (gear["cf_part"], gear["priority"]) == ("Cog", "High")
    assert [(f["name"], f["status"]) for f in gear["flags"]] == [("gear-review", "?")]
    status, answer, _ = filed(component="Springs", cf_part="Coil",
                              flags=[{"name": "gear-review", "status": "?"}])
    assert (status, answer["code"]) == (404, 51), answer
    status, answer, _ = filed(component="Springs", cf_part="Coil")
    assert status < 300, answer
    # The drop-down is Widgets' alone: other products file without it.
    other = bug_of(site, file_bug(site, "Elsewhere"))
    assert other["priority"] == "High"
    field = site.rest("GET", "/field/bug/cf_part")["fields"][0]
    assert (field["visibility_field"], field["visibility_values"]) == ("product", ["Widgets"])
    # Reopening the verified gear bug needs a comment.
    bug_id = gear["id"]
    site.rest("PUT", f"/bug/{bug_id}", {"status": "RESOLVED", "resolution": "FIXED"})
    site.rest("PUT", f"/bug/{bug_id}", {"status": "VERIFIED"})
    status, answer, _ = site.server.call("PUT", f"/rest/bug/{bug_id}",
                                         {"Bugzilla_api_key": site.key},
                                         {"status": "CONFIRMED"})
    assert (status, answer["code"]) == (400, 32000), answer
    site.rest("PUT", f"/bug/{bug_id}", {"status": "CONFIRMED",
                                        "comment": {"body": "It slips again."}})
    assert bug_of(site, bug_id)["status"] == "CONFIRMED"
    # The questions before deleting say how many bugs would go, and pass axe-core.
    found = {}
    for path, count in (("/editproducts.cgi?action=del&product=Widgets", "2 bugs"),
                        ("/editcomponents.cgi?action=del&product=Widgets&component=Gears",
                         "1 bug")):
        open_page(driver, site.url + path, shows=count)
        found[path] = axe_violations(driver)
    failures = {page: violations for page, violations in found.items() if violations}
    assert not failures, json.dumps(failures, indent=1)
