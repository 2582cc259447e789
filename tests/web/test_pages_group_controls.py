"""A product's group controls page (editproducts.cgi?action=editgroupcontrols):
members of editcomponents set, for each bug group, the controls for members
and others and whether filing or editing needs membership, over
Product.update's group_controls; an illegal combination comes back on the
form as typed, with the reason; others are refused."""

import re

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import add_bug_group
from bugsvc.services import product
from page_support import Browser, text_of


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"
PAGE = "/editproducts.cgi?action=editgroupcontrols&product=TestProduct"


@pytest.fixture
def admin(app, services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    add_bug_group(services, "secret")
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


def controls(services):
    found = services.call(product.get, {"names": ["TestProduct"],
                                        "include_fields": "group_controls"},
                          as_user=ADMIN, write=False)
    return found["products"][0]["group_controls"]


def selected(page, name):
    select = re.search(rf'<select name="{name}"[^>]*>(.*?)</select>', page.text, re.S).group(1)
    return re.search(r"<option selected>([^<]*)</option>", select).group(1)


def test_the_controls_are_set_and_removed_in_the_page(admin, services):
    page = admin.get(PAGE)
    assert page.status_code == 200 and 'aria-label="secret for members"' in page.text
    assert "/editproducts.cgi?action=editgroupcontrols" in admin.get(
        "/editproducts.cgi?product=TestProduct").text
    admin.get(PAGE)
    admin.post("/editproducts.cgi", {"action": "updategroupcontrols", "product": "TestProduct",
                                     "group": ["secret"], "membercontrol_secret": "Default",
                                     "othercontrol_secret": "NA", "entry_secret": "1"})
    assert controls(services) == {"secret": {"membercontrol": "Default", "othercontrol": "NA",
                                             "entry": True, "canedit": False,
                                             "editcomponents": False, "editbugs": False,
                                             "canconfirm": False}}
    page = admin.get(PAGE)
    assert selected(page, "membercontrol_secret") == "Default"
    assert services.query("SELECT object_name FROM audit_log WHERE class = 'Bugzilla::Product'"
                          " AND field LIKE 'group_controls%'") == [("TestProduct",)]
    admin.post("/editproducts.cgi", {"action": "updategroupcontrols", "product": "TestProduct",
                                     "group": ["secret"], "membercontrol_secret": "NA",
                                     "othercontrol_secret": "NA"})
    assert controls(services) == {}


def test_an_illegal_combination_comes_back_as_typed(admin, services):
    admin.get(PAGE)
    page = admin.post("/editproducts.cgi", {"action": "updategroupcontrols",
                                            "product": "TestProduct", "group": ["secret"],
                                            "membercontrol_secret": "NA",
                                            "othercontrol_secret": "Shown",
                                            "canedit_secret": "1"})
    assert page.status_code == 400 and 'role="alert"' in page.text
    assert selected(page, "othercontrol_secret") == "Shown"
    assert 'name="canedit_secret" value="1" aria-label="secret membership needed to edit ' \
           'bugs" checked' in page.text
    assert controls(services) == {}


def test_plain_users_visitors_and_forged_posts_are_refused(app, admin, services):
    visitor = Browser(app)
    page = visitor.get(PAGE)
    assert page.status_code == 401 and "Sign in" in page.text and "secret" not in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get(PAGE)
    assert page.status_code == 401 and "Sorry" in page.text and "secret" not in page.text
    plain.get("/")
    fields = {"action": "updategroupcontrols", "product": "TestProduct", "group": ["secret"],
              "membercontrol_secret": "Shown", "othercontrol_secret": "Shown"}
    assert plain.post("/editproducts.cgi", fields).status_code == 401
    admin.get(PAGE)
    assert admin.post("/editproducts.cgi", fields, token=False).status_code == 403
    assert controls(services) == {}
    assert "secret" not in text_of(visitor.get(PAGE).text)
