"""The preferences tabs over the notification operations: Email (the
reference's role and event matrix, flag mail, watching, ignored bugs) and
Webhooks (bugzilla.mozilla.org's list; registering, disabling, a new
secret, removing). What each visitor may do is the operations' decision:
the pages show their refusals and change nothing then."""

import re
from html import unescape

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import editbugs_only_for_members, set_param
from conftest import world_fixture
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World, text_of


@world_fixture
def world(services):
    return World(services)


def signed_in(app, login, password):
    browser = Browser(app)
    browser.login(login, password)
    return browser


@pytest.fixture
def plain(app, world):
    return signed_in(app, PLAIN, PASSWORDS[PLAIN])


@pytest.fixture
def admin(app, world):
    return signed_in(app, ADMIN, ADMIN_PASSWORD)


def settings_rows(services, login=PLAIN):
    return services.query("SELECT s.relationship, s.event, s.enabled FROM email_settings s"
                          " JOIN users u ON u.id = s.user_id WHERE u.login = ?"
                          " ORDER BY s.relationship, s.event", (login,))


def boxes(page):
    """{checkbox name: checked} of a page."""
    found = {}
    for tag in re.findall(r"<input [^>]*type=\"checkbox\"[^>]*>", page.text):
        found[re.search(r'name="([^"]+)"', tag).group(1)] = " checked" in tag
    return found


def email_form(page, **changes):
    """The Email tab's fields as a browser sends them: ticked boxes only."""
    ticked = {name for name, on in boxes(page).items() if on}
    for name, on in changes.items():
        (ticked.add if on else ticked.discard)(name)
    fields = {"tab": "email", **{name: "1" for name in ticked}}
    fields["watching"] = unescape(re.search(r'id="watching"[^>]*value="([^"]*)"',
                                            page.text).group(1))
    fields["ignored_bugs"] = re.search(r'id="ignored_bugs"[^>]*value="([^"]*)"',
                                       page.text).group(1)
    return fields


# Email ---------------------------------------------------------------------------------

def test_the_email_tab_needs_a_sign_in(app, world):
    page = Browser(app).get("/userprefs.cgi?tab=email")
    assert page.status_code == 401 and 'name="Bugzilla_password"' in page.text


def test_the_email_tab_shows_the_references_defaults(plain):
    page = plain.get("/userprefs.cgi?tab=email")
    assert page.status_code == 200 and 'aria-current="page">Email' in page.text
    found = boxes(page)
    assert found["flag-flag_requested"] and found["flag-requested_flag"]
    assert found["rel-assignee-comment"] and not found["rel-assignee-changed_by_me"]
    assert "rel-reporter-added_removed" not in found           # no such choice
    assert not any(name.startswith("rel-qa_contact-") for name in found)
    for name in found:
        assert re.search(rf'<label[^>]*for="{name}"', page.text), name


def test_email_choices_are_saved_and_shown_again(plain, services):
    services.add_user("dev@example.com")
    page = plain.get("/userprefs.cgi?tab=email")
    fields = email_form(page, **{"rel-cc-comment": False, "rel-cc-changed_by_me": True,
                                 "flag-requested_flag": False})
    fields["watching"] = "dev@example.com"
    bug_id = services.query("SELECT MIN(id) FROM bugs")[0][0]
    fields["ignored_bugs"] = str(bug_id)
    saved = plain.post("/userprefs.cgi", fields)
    assert "Your preferences have been saved." in saved.text
    # Only the choices that differ from the defaults are stored (cc/comment,
    # cc/changed_by_me, requested_flag), as over REST.
    assert settings_rows(services) == [(3, 2, 0), (3, 51, 1), (100, 101, 0)]
    found = boxes(saved)
    assert not found["rel-cc-comment"] and found["rel-cc-changed_by_me"]
    assert not found["flag-requested_flag"]
    assert ('id="watching" name="watching" type="text" size="60" value="dev@example.com"'
            in saved.text)
    assert f'value="{bug_id}"' in saved.text
    again = plain.post("/userprefs.cgi", email_form(saved))     # saving as shown changes nothing
    assert settings_rows(services) == [(3, 2, 0), (3, 51, 1), (100, 101, 0)]
    cleared = plain.post("/userprefs.cgi", dict(email_form(again), watching="",
                                                ignored_bugs=""))
    assert "dev@example.com</textarea>" not in cleared.text
    assert services.query("SELECT COUNT(*) FROM user_watch") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM email_bug_ignore") == [(0,)]


def test_a_refused_email_change_stores_nothing(plain, services, world):
    page = plain.get("/userprefs.cgi?tab=email")
    hidden = plain.post("/userprefs.cgi", dict(email_form(page, **{"rel-cc-comment": False}),
                                               ignored_bugs=str(world.secret)))
    assert hidden.status_code in (401, 404) and "Error code" not in hidden.text
    assert 'role="alert"' in hidden.text
    page = plain.get("/userprefs.cgi?tab=email")
    missing = plain.post("/userprefs.cgi", dict(email_form(page, **{"rel-cc-comment": False}),
                                                ignored_bugs="999999"))
    assert missing.status_code == hidden.status_code             # hidden and missing alike
    assert text_of(missing.text).replace("999999", "N") == text_of(hidden.text).replace(
        str(world.secret), "N")
    page = plain.get("/userprefs.cgi?tab=email")
    self_watch = plain.post("/userprefs.cgi", dict(email_form(page), watching=PLAIN))
    assert self_watch.status_code == 400
    page = plain.get("/userprefs.cgi?tab=email")
    forged = plain.post("/userprefs.cgi", email_form(page, **{"rel-cc-comment": False}),
                        token=False)
    assert forged.status_code == 403
    assert settings_rows(services) == []
    assert services.query("SELECT COUNT(*) FROM email_bug_ignore") == [(0,)]


def test_the_qa_contact_column_follows_useqacontact(plain, services):
    set_param(services, "useqacontact", "1")
    assert "rel-qa_contact-comment" in boxes(plain.get("/userprefs.cgi?tab=email"))


def test_disabled_mail_and_global_watching_are_told(plain, services):
    set_param(services, "globalwatchers", PLAIN)
    with services.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET email_enabled = 0 WHERE login = ?", (PLAIN,))
    page = text_of(plain.get("/userprefs.cgi?tab=email").text)
    assert "turned off mail to your account" in page and "globalwatchers names you" in page


# Webhooks ------------------------------------------------------------------------------

def hook_fields(**changes):
    return {"tab": "webhooks", "action": "create", "name": "ci", "url":
            "https://hooks.example.com/bugs", "events": ["create", "comment"],
            "product": "TestProduct", "component": "", **changes}


def test_webhooks_are_registered_listed_and_their_secret_shown_once(plain, services):
    set_param(services, "webhooks_enabled", "1")
    page = plain.get("/userprefs.cgi?tab=webhooks")
    assert "You have no webhooks." in page.text
    made = plain.post("/userprefs.cgi", hook_fields())
    secret = re.search(r'<code class="api-key">(whsec_[^<]+)</code>', made.text).group(1)
    assert services.query("SELECT name, url, events FROM webhooks") == [
        ("ci", "https://hooks.example.com/bugs", "create,comment")]
    listed = plain.get("/userprefs.cgi?tab=webhooks")
    assert "https://hooks.example.com/bugs" in listed.text and secret not in listed.text
    assert "create,comment" in listed.text and "enabled" in listed.text


def test_a_webhook_is_disabled_enabled_given_a_new_secret_and_removed(plain, services):
    set_param(services, "webhooks_enabled", "1")
    plain.get("/userprefs.cgi?tab=webhooks")
    plain.post("/userprefs.cgi", hook_fields())
    hook_id = services.query("SELECT id FROM webhooks")[0][0]

    def act(action):
        plain.get("/userprefs.cgi?tab=webhooks")
        return plain.post("/userprefs.cgi", {"tab": "webhooks", "action": action,
                                             "webhook_id": str(hook_id)})
    act("disable")
    assert services.query("SELECT enabled FROM webhooks") == [(0,)]
    act("enable")
    assert services.query("SELECT enabled FROM webhooks") == [(1,)]
    before = services.query("SELECT secret FROM webhooks")
    rotated = act("rotate")
    assert "shown only this once" in rotated.text
    assert services.query("SELECT secret FROM webhooks") != before
    act("delete")
    assert services.query("SELECT COUNT(*) FROM webhooks") == [(0,)]


def test_refused_webhooks_change_nothing_and_keep_the_form(app, plain, services):
    off = plain.get("/userprefs.cgi?tab=webhooks")
    off = plain.post("/userprefs.cgi", hook_fields())
    assert off.status_code == 400 and "webhooks_enabled" in off.text     # turned off
    assert 'value="https://hooks.example.com/bugs"' in off.text
    set_param(services, "webhooks_enabled", "1")
    any_product = plain.post("/userprefs.cgi", hook_fields(product="Any"))
    assert any_product.status_code == 401 and "Any" in any_product.text  # admin only
    hidden = plain.post("/userprefs.cgi", hook_fields(product="NoSuchProduct"))
    assert hidden.status_code == 401
    assert "does not exist, or you don't have access" in text_of(hidden.text)
    private = plain.post("/userprefs.cgi", hook_fields(url="http://127.0.0.1:9/"))
    assert private.status_code == 400
    forged = plain.post("/userprefs.cgi", hook_fields(), token=False)
    assert forged.status_code == 403
    editbugs_only_for_members(services)
    plain.get("/userprefs.cgi?tab=webhooks")
    not_member = plain.post("/userprefs.cgi", hook_fields())
    assert not_member.status_code == 401 and "editbugs" in not_member.text
    assert services.query("SELECT COUNT(*) FROM webhooks") == [(0,)]


def test_another_accounts_webhook_is_neither_shown_nor_changed(app, admin, services):
    set_param(services, "webhooks_enabled", "1")
    admin.get("/userprefs.cgi?tab=webhooks")
    admin.post("/userprefs.cgi", hook_fields(name="admin's", product="Any"))
    hook_id = services.query("SELECT id FROM webhooks")[0][0]
    insider = signed_in(app, INSIDER, PASSWORDS[INSIDER])
    page = insider.get("/userprefs.cgi?tab=webhooks")
    assert "admin&#39;s" not in page.text and "You have no webhooks." in page.text
    for action in ("disable", "delete", "rotate"):
        insider.get("/userprefs.cgi?tab=webhooks")
        refused = insider.post("/userprefs.cgi", {"tab": "webhooks", "action": action,
                                                  "webhook_id": str(hook_id)})
        assert refused.status_code == 404 and "There is no webhook" in refused.text
    assert services.query("SELECT name, enabled FROM webhooks") == [("admin's", 1)]
    assert Browser(app).get("/userprefs.cgi?tab=webhooks").status_code == 401
