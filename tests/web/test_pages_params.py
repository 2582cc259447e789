"""The parameters page (editparams.cgi): Bugzilla's sections, each
parameter with its description and the control that fits it, the password
never shown; saved all or nothing with PUT /rest/parameters' checks, a
refusal shown on the form as typed; for tweakparams members only."""

import re
from html import unescape

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from bugsvc.catalogue import settings
from bugsvc.catalogue.setting_docs import SECTIONS
from page_support import Browser, text_of


TWEAKER, TWEAKER_PASSWORD = "tweaker@example.com", "tweaker-password-1"
PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"


@pytest.fixture
def people(services):
    services.add_user(TWEAKER, password=TWEAKER_PASSWORD, groups=("tweakparams",))
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    return services


@pytest.fixture
def tweaker(app, people):
    browser = Browser(app)
    browser.login(TWEAKER, TWEAKER_PASSWORD)
    return browser


def form_values(html):
    """{field: value} as the browser would post the parameters form."""
    values = {}
    for name, value in re.findall(r'<input id="[^"]*" name="(param-[^"]+)" type="(?:text|number)"'
                                  r'[^>]*? value="([^"]*)"', html):
        values[name] = unescape(value)
    for name, value in re.findall(r'name="(param-[^"]+)" value="([^"]*)" checked', html):
        values[name] = unescape(value)
    for name, body in re.findall(r'<select id="[^"]*" name="(param-[^"]+)"[^>]*>(.*?)</select>',
                                 html, re.S):
        chosen = re.search(r'<option value="([^"]*)" selected>', body)
        values[name] = unescape(chosen.group(1)) if chosen else ""
    for name, value in re.findall(r'<textarea id="[^"]*" name="(param-[^"]+)"[^>]*>(.*?)'
                                  r'</textarea>', html, re.S):
        values[name] = unescape(value)
    return values


def stored(services):
    return dict(services.query("SELECT name, value FROM params"))


def test_every_parameter_is_in_one_section_with_a_description():
    names = [name for section in SECTIONS for name in section[3]]
    assert sorted(names) == sorted(settings.DEFINITIONS)
    assert [section[1] for section in SECTIONS][:3] == ["Required settings", "General",
                                                        "Administrative policies"]


def test_the_sections_descriptions_and_controls(tweaker, services):
    page = tweaker.get("/editparams.cgi")
    assert page.status_code == 200
    text = text_of(page.text)
    titles = [section[1] for section in SECTIONS]
    positions = [text.index(f"{title}") for title in titles]
    assert positions == sorted(positions)
    assert "The closed status a bug marked as a duplicate moves to." in text
    # On/off, a group, a choice, a closed status, a number, a password box.
    assert 'type="radio" id="param-requirelogin-on" name="param-requirelogin" value="1"' \
        in page.text
    group = re.search(r'<select id="param-insidergroup".*?</select>', page.text, re.S).group(0)
    assert '<option value="" selected>(none)</option>' in group
    assert '<option value="tweakparams">' in group and '<option value="admin">' in group
    status = re.search(r'<select id="param-duplicate_or_move_bug_status".*?</select>',
                       page.text, re.S).group(0)
    assert '"RESOLVED" selected' in status and '"NEW"' not in status
    assert re.search(r'id="param-login_token_max_age" name="param-login_token_max_age" '
                     r'type="number" min="1" max="3650" value="30"', page.text)
    assert 'id="param-smtp_password" name="param-smtp_password" type="password" size="30" ' \
           'value=""' in page.text
    choice = re.search(r'<select id="param-mail_delivery_method".*?</select>', page.text,
                       re.S).group(0)
    assert re.findall(r'<option value="([^"]*)"', choice) == ["SMTP", "Test", "None"]


def test_changes_are_saved_and_audited(tweaker, services):
    page = tweaker.get("/editparams.cgi")
    fields = form_values(page.text)
    assert fields["param-requirelogin"] == "0" and fields["param-defaultseverity"]
    fields.update({"param-usestatuswhiteboard": "1", "param-insidergroup": "tweakparams",
                   "param-mail_delivery_method": "Test", "param-maxusermatches": "50",
                   "param-emailregexpdesc": "Any address."})
    saved = tweaker.post("/editparams.cgi", fields)
    assert saved.status_code == 200 and 'role="status"' in saved.text
    values = stored(services)
    assert (values["usestatuswhiteboard"], values["insidergroup"],
            values["mail_delivery_method"], values["maxusermatches"],
            values["emailregexpdesc"]) == ("1", "tweakparams", "Test", "50", "Any address.")
    audited = services.query("SELECT u.login, a.field FROM audit_log a JOIN users u"
                             " ON u.id = a.user_id WHERE a.class = 'Bugzilla::Param'")
    assert sorted(audited) == sorted((TWEAKER, name) for name in (
        "usestatuswhiteboard", "insidergroup", "mail_delivery_method", "maxusermatches",
        "emailregexpdesc"))
    assert form_values(saved.text)["param-insidergroup"] == "tweakparams"


def test_a_refused_value_is_shown_as_typed_with_the_reason_and_nothing_is_saved(
        tweaker, services):
    fields = form_values(tweaker.get("/editparams.cgi").text)
    before = stored(services)
    fields.update({"param-usetargetmilestone": "1", "param-urlbase": "ftp://nope"})
    page = tweaker.post("/editparams.cgi", fields)
    assert page.status_code == 400
    assert re.search(r'role="alert"[^>]*>[^<]*urlbase[^<]*http', page.text)
    assert re.search(r'id="param-urlbase" name="param-urlbase" type="text" size="50" '
                     r'value="ftp://nope" aria-describedby="desc-urlbase params-error" '
                     r'aria-invalid="true"', page.text)
    assert form_values(page.text)["param-usetargetmilestone"] == "1"      # as typed
    assert stored(services) == before


def test_the_password_is_never_shown_kept_when_left_empty_and_removed_on_request(
        tweaker, services):
    fields = form_values(tweaker.get("/editparams.cgi").text)
    tweaker.post("/editparams.cgi", dict(fields, **{"param-smtp_password": "s3cret pass"}))
    assert stored(services)["smtp_password"] == "s3cret pass"
    page = tweaker.get("/editparams.cgi")
    assert "s3cret" not in page.text and "(set)" in page.text
    tweaker.post("/editparams.cgi", dict(form_values(page.text),
                                         **{"param-maxusermatches": "7"}))
    assert stored(services)["smtp_password"] == "s3cret pass"
    assert stored(services)["maxusermatches"] == "7"
    page = tweaker.get("/editparams.cgi")
    tweaker.post("/editparams.cgi", dict(form_values(page.text),
                                         **{"clear-smtp_password": "1"}))
    assert stored(services)["smtp_password"] == ""
    assert "s3cret" not in str(services.query("SELECT * FROM audit_log"))


def test_one_section_alone(tweaker, services):
    page = tweaker.get("/editparams.cgi?section=mta")
    assert 'name="param-smtpserver"' in page.text and 'name="param-urlbase"' not in page.text
    assert 'aria-current="page"' in page.text
    fields = form_values(page.text)
    saved = tweaker.post("/editparams.cgi", dict(fields, section="mta",
                                                 **{"param-smtpserver": "mail.example.com"}))
    assert stored(services)["smtpserver"] == "mail.example.com"
    assert 'name="param-urlbase"' not in saved.text      # back on the same section


def test_plain_users_and_visitors_are_refused(app, people, client, services):
    set_param(services, "usestatuswhiteboard", "0")
    visitor = Browser(app)
    page = visitor.get("/editparams.cgi")
    assert page.status_code == 401 and "Sign in" in page.text and "param-" not in page.text
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get("/editparams.cgi")
    assert page.status_code == 401 and "Sorry" in page.text and "param-" not in page.text
    before = stored(services)
    refused = plain.post("/editparams.cgi", {"param-usestatuswhiteboard": "1"})
    assert refused.status_code == 401 and stored(services) == before


def test_the_definitions_call_is_for_tweakparams_members(client, people, services):
    tweaker_key, plain_key = services.api_key(TWEAKER), services.api_key(PLAIN)
    answer = client.simulate_get("/rest/parameter_definitions",
                                 params={"Bugzilla_api_key": tweaker_key}).json
    assert [s["name"] for s in answer["sections"]] == [s[0] for s in SECTIONS]
    smtp = {p["name"]: p for s in answer["sections"] for p in s["parameters"]}
    assert smtp["smtp_password"]["control"] == "secret"
    assert client.simulate_get("/rest/parameter_definitions",
                               params={"Bugzilla_api_key": plain_key}).json["code"] == 304
    assert client.simulate_get("/rest/parameter_definitions").json["code"] == 410


def test_the_administrator_uses_it_too(app, services):
    browser = Browser(app)
    browser.login(ADMIN, ADMIN_PASSWORD)
    assert browser.get("/editparams.cgi").status_code == 200
