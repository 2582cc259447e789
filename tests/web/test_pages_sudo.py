"""Acting as another user (relogin.cgi's sudo): a member of bz_sudoers acts
as a plain user with the plain user's rights on every page, under a banner,
until it ends (end-sudo, sign-out, or six hours); plain users and anonymous
visitors are refused, members of bz_sudo_protect are never acted as; the
account acted as is mailed and the audit log records the beginning and the
end; the API keeps answering as whoever its credentials name."""

from datetime import datetime, timedelta, timezone

import pytest
from freezegun import freeze_time

from accounts import ADMIN, ADMIN_PASSWORD
from bugsvc.accounts import sudo
from conftest import world_fixture
from notify_support import deliver, smtp, use_smtp  # noqa: F401 (smtp is a fixture)
from page_support import PASSWORDS, PLAIN, Browser, World, text_of


PREPARE = "/relogin.cgi?action=prepare-sudo"
BEGIN = "/relogin.cgi?action=begin-sudo"
END = "/relogin.cgi?action=end-sudo"
BANNER = f"You are acting as {PLAIN}"
PROTECTED = "boss@example.com"


@world_fixture
def world(services):
    built = World(services)
    services.add_user(PROTECTED, password="boss-password-1", groups=["bz_sudo_protect"])
    return built


@pytest.fixture
def admin(app, world):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    return browser


def begin(browser, target=PLAIN, reason="Checking what Pat sees", password=ADMIN_PASSWORD):
    browser.get(PREPARE)
    return browser.post(BEGIN, {"target_login": target, "reason": reason,
                                "current_password": password})


def sudo_rows(services):
    return services.query(
        "SELECT sudo_target_id FROM login_tokens WHERE sudo_target_id IS NOT NULL")


def sudo_audit(services):
    return services.query("SELECT u.login, a.class, a.object_name, a.removed, a.added"
                          " FROM audit_log a JOIN users u ON u.id = a.user_id"
                          " WHERE a.field = 'sudo_session' ORDER BY a.id")


def sudo_mail(services):
    return services.query("SELECT user_id, data FROM outbox_messages WHERE kind = 'sudo_begun'")


def test_a_sudoer_acts_as_a_plain_user_with_its_rights_until_it_ends(app, admin, world,
                                                                     services):
    plain = Browser(app)
    plain.login(PLAIN, PASSWORDS[PLAIN])
    plain_answer = plain.get(f"/show_bug.cgi?id={world.secret}")
    assert plain_answer.status_code == 401
    assert admin.get(f"/show_bug.cgi?id={world.secret}").status_code == 200
    form = admin.get(PREPARE)
    assert form.status_code == 200 and 'name="current_password"' in form.text
    started = begin(admin)
    assert started.status_code == 200 and BANNER in text_of(started.text)
    assert "You are now acting as another user" in started.text
    assert f'<span class="who">{PLAIN}</span>' in started.text
    # Every page acts as the plain user: the bug of a group only the
    # administrator is in is hidden, and the administration is not offered.
    hidden = admin.get(f"/show_bug.cgi?id={world.secret}")
    assert hidden.status_code == plain_answer.status_code and BANNER in text_of(hidden.text)
    assert "Secret hole" not in hidden.text
    listed = admin.get("/buglist.cgi?bug_status=__all__")
    assert "Secret hole" not in listed.text and "Public crash" in listed.text
    assert BANNER in text_of(listed.text) and 'href="/admin.cgi"' not in listed.text
    assert admin.get("/editusers.cgi").status_code == 401
    # The banner's button ends it: the administrator's own rights again.
    ended = admin.post(END, {})
    assert ended.status_code == 200 and BANNER not in text_of(ended.text)
    assert "You are no longer acting as another user" in ended.text
    assert f'<span class="who">{ADMIN}</span>' in ended.text
    assert admin.get(f"/show_bug.cgi?id={world.secret}").status_code == 200
    assert sudo_rows(services) == []


def test_begin_and_end_are_in_the_audit_log_and_the_target_gets_a_mail(admin, world, services):
    begin(admin, reason="Checking what Pat sees")
    plain_id = services.user_id(PLAIN)
    [(user_id, data)] = sudo_mail(services)
    assert user_id == plain_id and "Checking what Pat sees" in data and ADMIN in data
    admin.post(END, {})
    assert sudo_audit(services) == [
        (ADMIN, "Bugzilla::User", PLAIN, None, "began: Checking what Pat sees"),
        (ADMIN, "Bugzilla::User", PLAIN, "began", "ended")]


def test_the_mail_reaches_the_target_with_who_and_why(admin, world, services,
                                                      smtp):  # noqa: F811
    begin(admin, reason="Checking what Pat sees")
    use_smtp(services, smtp)
    deliver(services)
    [mail] = smtp.to(PLAIN)
    assert f"{ADMIN} is acting as your account" in mail["Subject"]
    body = mail.get_payload(decode=True).decode()
    assert "Checking what Pat sees" in body and "at most 6 hours" in body


def test_the_audit_log_page_shows_the_sudo_entries(admin, world):
    begin(admin)
    admin.post(END, {})
    page = text_of(admin.get("/auditlog.cgi").text)
    assert "sudo_session" in page and "began: Checking what Pat sees" in page


def test_a_plain_user_is_refused_and_nothing_is_stored(app, world, services):
    plain = Browser(app)
    plain.login(PLAIN, PASSWORDS[PLAIN])
    refused = plain.get(PREPARE)
    assert refused.status_code == 401 and "bz_sudoers" in refused.text
    plain.get("/")
    posted = plain.post(BEGIN, {"target_login": ADMIN, "reason": "x",
                                "current_password": PASSWORDS[PLAIN]})
    assert posted.status_code == 401 and "bz_sudoers" in posted.text
    assert f'<span class="who">{PLAIN}</span>' in plain.get("/").text
    assert sudo_rows(services) == [] and sudo_audit(services) == [] and sudo_mail(services) == []


def test_an_anonymous_visitor_is_sent_to_sign_in(app, world, services):
    visitor = Browser(app)
    page = visitor.get(PREPARE)
    assert page.status_code == 401 and 'name="Bugzilla_password"' in page.text
    visitor.get("/login")
    posted = visitor.post(BEGIN, {"target_login": PLAIN, "reason": "x",
                                  "current_password": ADMIN_PASSWORD})
    assert posted.status_code == 401 and 'name="Bugzilla_password"' in posted.text
    assert sudo_rows(services) == [] and sudo_audit(services) == []


def test_a_protected_user_is_never_acted_as(admin, world, services):
    refused = begin(admin, target=PROTECTED, reason="Just looking")
    assert refused.status_code == 400
    assert f"The user {PROTECTED} may not be impersonated" in refused.text
    # The form comes back as typed, without the password.
    assert f'value="{PROTECTED}"' in refused.text and 'value="Just looking"' in refused.text
    assert ADMIN_PASSWORD not in refused.text
    assert "acting as" not in text_of(admin.get("/").text)
    assert sudo_rows(services) == [] and sudo_audit(services) == [] and sudo_mail(services) == []


@pytest.mark.parametrize("password, status, message", [
    ("", 400, "enter your own password again"),
    ("wrong password", 401, "current password you entered is not valid"),
])
def test_the_password_is_asked_again(admin, world, services, password, status, message):
    refused = begin(admin, password=password)
    assert refused.status_code == status and message in refused.text
    assert sudo_rows(services) == [] and sudo_mail(services) == []


def test_an_unknown_user_is_refused_on_the_form(admin, world, services):
    refused = begin(admin, target="nobody@example.com")
    assert refused.status_code == 404 and "There is no user named" in refused.text
    assert sudo_rows(services) == []


def test_a_form_without_its_token_is_refused(admin, world, services):
    admin.get(PREPARE)
    refused = admin.post(BEGIN, {"target_login": PLAIN, "reason": "x",
                                 "current_password": ADMIN_PASSWORD}, token=False)
    assert refused.status_code == 403
    assert sudo_rows(services) == [] and sudo_audit(services) == [] and sudo_mail(services) == []
    begin(admin)
    kept = admin.post(END, {}, token=False)
    assert kept.status_code == 403 and len(sudo_rows(services)) == 1


def test_a_second_session_is_refused_while_one_is_in_progress(admin, world, services):
    begin(admin)
    again = admin.get(PREPARE)
    assert again.status_code == 400 and "already acting" in again.text


def test_signing_out_ends_it(admin, world, services):
    begin(admin)
    admin.post("/logout", {})
    admin.login(ADMIN, ADMIN_PASSWORD)
    assert BANNER not in text_of(admin.get("/").text)
    assert admin.get(f"/show_bug.cgi?id={world.secret}").status_code == 200


def test_it_ends_after_six_hours(admin, world, services):
    start = datetime.now(timezone.utc)
    with freeze_time(start) as clock:
        begin(admin)
        clock.move_to(start + sudo.MAX_AGE - timedelta(minutes=1))
        assert BANNER in text_of(admin.get("/").text)
        clock.move_to(start + sudo.MAX_AGE)
        page = admin.get("/")
        assert BANNER not in text_of(page.text) and f'<span class="who">{ADMIN}</span>' in page.text
        # A new one may begin.
        assert BANNER in text_of(begin(admin).text)


def test_it_stops_when_the_sudoer_leaves_bz_sudoers(admin, world, services):
    begin(admin)
    admin_id = services.user_id(ADMIN)
    with services.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM user_groups WHERE user_id = ? AND group_id ="
                     " (SELECT id FROM groups WHERE name = 'bz_sudoers')", (admin_id,))
    assert f'<span class="who">{ADMIN}</span>' in admin.get("/").text


def test_the_api_answers_as_the_credentials_owner_while_the_page_acts(admin, world, services,
                                                                      client):
    begin(admin)
    token = admin.cookies["bugsvc_session"]
    by_token = client.simulate_get("/rest/whoami", headers={"X-BUGZILLA-TOKEN": token})
    assert by_token.json["name"] == ADMIN
    key = services.api_key(ADMIN)
    bug = client.simulate_get(f"/rest/bug/{world.secret}", headers={"X-BUGZILLA-API-KEY": key})
    assert bug.status_code == 200 and bug.json["bugs"][0]["id"] == world.secret


def test_relogin_without_an_action_still_signs_out(admin, world):
    page = admin.get("/relogin.cgi")
    assert page.status_code == 200 and "Sign out" in page.text
    assert admin.get("/relogin.cgi?action=nonsense").status_code == 400


def test_the_administration_and_the_user_page_link_to_the_form(admin, world, services):
    assert 'href="/relogin.cgi?action=prepare-sudo"' in admin.get("/admin.cgi").text
    user_page = admin.get(f"/editusers.cgi?action=edit&userid={services.user_id(PLAIN)}")
    link = "/relogin.cgi?action=prepare-sudo&amp;target_login=plain%40example.com"
    assert link in user_page.text
    form = admin.get(link.replace("&amp;", "&"))
    assert f'id="target_login" name="target_login" type="text" required value="{PLAIN}"' \
        in form.text


def test_what_would_outlast_the_acting_is_refused(admin, world, services):
    begin(admin)
    admin.get("/userprefs.cgi?tab=apikey")
    refused = admin.post("/userprefs.cgi", {"tab": "apikey", "action": "create",
                                            "description": "for later"})
    assert "While you act as another user you cannot change" in refused.text
    admin.get("/userprefs.cgi?tab=mfa")
    assert "While you act as another user" in admin.post(
        "/userprefs.cgi", {"tab": "mfa", "action": "begin"}).text
    assert services.query("SELECT COUNT(*) FROM api_keys") == [(0,)]
    assert services.query("SELECT COUNT(*) FROM second_factors") == [(0,)]
    # Once it ends, the sudoer's own keys are theirs to make.
    admin.post(END, {})
    admin.get("/userprefs.cgi?tab=apikey")
    admin.post("/userprefs.cgi", {"tab": "apikey", "action": "create", "description": "mine"})
    assert services.query("SELECT u.login FROM api_keys k JOIN users u ON u.id = k.user_id"
                          ) == [(ADMIN,)]


def test_a_sudoer_with_a_second_factor_gives_its_code_too(admin, world, services):
    """As bugzilla.mozilla.org: a sudoer whose account has a second factor
    gives its current code after its password before the session begins;
    a missing or wrong code begins nothing (the wrong one is counted like
    a wrong password)."""
    from bugsvc.accounts import second_factor
    admin_id = services.user_id(ADMIN)
    now = datetime.now(timezone.utc)
    with services.db.transaction(write=True) as conn:
        secret = second_factor.begin_enrolment(conn, admin_id, now - timedelta(minutes=5))
        second_factor.confirm_enrolment(conn, admin_id, second_factor.current_code(
            secret, now - timedelta(minutes=5)), now - timedelta(minutes=5))
    form = admin.get(PREPARE)
    assert form.status_code == 200 and 'name="code"' in form.text
    missing = begin(admin)
    assert missing.status_code == 401 and "(code 330)" in missing.text
    right = second_factor.current_code(secret, datetime.now(timezone.utc))
    admin.get(PREPARE)
    wrong = admin.post(BEGIN, {"target_login": PLAIN, "reason": "Checking",
                               "current_password": ADMIN_PASSWORD,
                               "code": f"{(int(right) + 1) % 1000000:06d}"})
    assert wrong.status_code == 401 and "(code 331)" in wrong.text
    assert sudo_rows(services) == [] and sudo_mail(services) == []
    admin.get(PREPARE)
    began = admin.post(BEGIN, {"target_login": PLAIN, "reason": "Checking",
                               "current_password": ADMIN_PASSWORD, "code": right})
    assert began.status_code == 200 and BANNER in text_of(began.text)
    assert len(sudo_rows(services)) == 1


def test_a_sudoer_without_a_second_factor_is_not_asked_for_a_code(admin, world):
    assert 'name="code"' not in admin.get(PREPARE).text
