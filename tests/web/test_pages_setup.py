"""The first start: an administrator's home page lists what a fresh
installation still needs (urlbase, mail, an insider group, flag types),
each a link to its page, until it is done; nobody else sees the list."""

import re

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from page_support import Browser, text_of


TWEAKER, PLAIN, PASSWORD = "tweaker@example.com", "plain@example.com", "some-password-1"


def setup_links(page):
    if 'id="h-setup"' not in page.text:
        return None
    section = page.text.split('id="h-setup"', 1)[1].split("</section>", 1)[0]
    return [link.replace("&amp;", "&") for link in
            re.findall(r'<a href="([^"]+)"', section)]


def test_a_fresh_installation_tells_the_administrator_what_to_set_up(app, services):
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    page = admin.get("/")
    assert "Set up this installation" in text_of(page.text)
    assert setup_links(page) == [
        "/editparams.cgi?section=core", "/editparams.cgi?section=mta",
        "/editgroups.cgi?action=add", "/editparams.cgi?section=groupsecurity",
        "/editflagtypes.cgi?action=enter&target_type=bug"]
    for link in setup_links(page):
        assert admin.get(link).status_code == 200
    set_param(services, "urlbase", "https://bugs.example.com/")
    set_param(services, "mail_delivery_method", "SMTP")
    assert setup_links(admin.get("/")) == [
        "/editgroups.cgi?action=add", "/editparams.cgi?section=groupsecurity",
        "/editflagtypes.cgi?action=enter&target_type=bug"]
    set_param(services, "insidergroup", "admin")
    admin.get("/editflagtypes.cgi?action=enter&target_type=bug")
    admin.post("/editflagtypes.cgi", {"action": "insert", "target_type": "bug",
                                      "name": "review", "description": "Review",
                                      "inclusions": ["__Any__:__Any__"], "is_active": "1"})
    assert setup_links(admin.get("/")) is None


def test_only_what_ones_groups_may_change_and_nobody_else(app, services):
    services.add_user(TWEAKER, password=PASSWORD, groups=("tweakparams",))
    services.add_user(PLAIN, password=PASSWORD)
    tweaker = Browser(app)
    tweaker.login(TWEAKER, PASSWORD)
    assert setup_links(tweaker.get("/")) == [
        "/editparams.cgi?section=core", "/editparams.cgi?section=mta",
        "/editparams.cgi?section=groupsecurity"]
    plain = Browser(app)
    plain.login(PLAIN, PASSWORD)
    assert setup_links(plain.get("/")) is None
    assert setup_links(Browser(app).get("/")) is None
