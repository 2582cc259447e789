"""The pages' people pickers (user_match.cgi and the fields that use it,
usemenuforusers' menus), images and videos shown in their comment (only to
those who may see them, attachment_base respected, SVG never), the colour
scheme each account chooses, and the access keys of the main actions.
The scripts themselves run in a real browser in test_browser_enhancements.py."""

import base64
import re
from importlib import resources

import pytest

from accounts import ADMIN
from bug_support import (
    add_bug_group,
    add_to_group,
    editbugs_only_for_members,
    file_bug,
    grant_visibility,
    set_param,
)
from bugsvc.errors import ServiceError
from bugsvc.services import attachment as attachment_service, user as user_service
from page_support import DEV, INSIDER, PLAIN, Browser, World, csp, menu, signed_in


def matches(browser, text):
    answer = browser.get("/user_match.cgi", match=text)
    assert answer.status_code == 200 and answer.headers["Content-Type"] == "application/json"
    assert answer.headers["Cache-Control"] == "no-store"
    return [person["name"] for person in answer.json["users"]]


# user_match.cgi --------------------------------------------------------------------------------

def test_user_match_suggests_enabled_accounts_to_a_signed_in_visitor(app, people):
    browser = signed_in(app, PLAIN)
    assert matches(browser, "dana") == [DEV]
    answer = browser.get("/user_match.cgi", match="pat plain").json
    assert answer == {"users": [{"name": PLAIN, "real_name": "Pat Plain"}]}
    assert matches(browser, "gone") == []                      # disabled accounts never
    # A few characters are needed; too long a text is nobody's.
    assert matches(browser, "da") == [] and matches(browser, "  d ") == []
    assert matches(browser, "x" * 128) == []


def test_user_match_suggests_nobody_to_an_anonymous_visitor(app, people):
    assert matches(Browser(app), "dana") == []
    # Nor to a session that ended (its cookie is dropped).
    browser = signed_in(app, PLAIN)
    browser.post("/logout", {})
    browser.cookies["bugsvc_session"] = "ended-session-token"
    assert matches(browser, "dana") == []


def test_user_match_shows_at_most_a_page_and_at_most_maxusermatches(app, people):
    for number in range(14):
        people.add_user(f"tester{number:02d}@example.com", real_name=f"Tester {number}")
    browser = signed_in(app, PLAIN)
    assert len(matches(browser, "tester")) == 10
    set_param(people, "maxusermatches", "3")
    assert len(matches(browser, "tester")) == 3


def test_user_match_suggests_only_the_accounts_the_visitor_may_see(app, people):
    editbugs_only_for_members(people)
    add_bug_group(people, "team", members=[PLAIN, DEV])
    people.add_user("stranger@example.com", real_name="Stranger Danger")
    set_param(people, "usevisibilitygroups", "1")
    assert matches(signed_in(app, PLAIN), "dana") == []      # no grant yet
    grant_visibility(people, "team", "team")
    assert matches(signed_in(app, PLAIN), "stranger") == []
    assert matches(signed_in(app, PLAIN), "dana") == [DEV]
    # An account in no group is hidden from the administrator too, until it
    # joins a group the admin group sees (as every group made since).
    assert matches(signed_in(app, ADMIN), "stranger") == []
    add_bug_group(people, "outsiders", with_admin=False)
    add_to_group(people, "stranger@example.com", "outsiders")
    assert matches(signed_in(app, ADMIN), "stranger") == ["stranger@example.com"]
    assert matches(Browser(app), "stranger") == []


def test_people_fields_are_text_boxes_the_script_enhances(app, people):
    bug_id = file_bug(people, summary="People fields")
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/show_bug.cgi?id={bug_id}").text
    assert re.search(r'<input id="assigned_to" name="assigned_to" type="text"[^>]*'
                     r' data-people="one" autocomplete="off"', page)
    assert re.search(r'<input id="cc_add" name="cc_add"[^>]* data-people="many"', page)
    query = browser.get("/query.cgi").text
    assert re.search(r'<input id="email1" name="email1"[^>]* data-people="one"', query)
    listing = browser.get("/buglist.cgi?product=TestProduct&tweak=1").text
    assert re.search(r'<input id="bulk-assigned_to" name="assigned_to"[^>]* data-people="one"',
                     listing)
    assert re.search(r'<input id="masscc" name="masscc"[^>]* data-people="many"', listing)
    queue = browser.get("/request.cgi").text
    assert re.search(r'<input id="requestee" name="requestee"[^>]* data-people="one"', queue)


def test_usemenuforusers_makes_menus_of_the_bulk_change_and_the_request_queue(app, people):
    file_bug(people, summary="Listed for a bulk change")
    set_param(people, "usemenuforusers", "1")
    browser = signed_in(app, ADMIN)
    listing = browser.get("/buglist.cgi?product=TestProduct&tweak=1").text
    found = re.search(r'<select id="bulk-assigned_to" name="assigned_to">(.*?)</select>',
                      listing, re.S)
    assert found and f'<option value="{DEV}">' in found.group(1)
    assert '<option value="">leave empty to keep</option>' in found.group(1)
    assert [value for value, _, _ in menu(listing, "masscc")] == [ADMIN, DEV, PLAIN]
    queue = browser.get("/request.cgi").text
    assert [value for value, _, _ in menu(queue, "requestee")] == ["", "-", ADMIN, DEV, PLAIN]
    # The person search of the query page keeps its text box: it matches
    # parts of names and regular expressions, which no menu can.
    assert menu(browser.get("/query.cgi").text, "email1") is None


# Images and videos in their comment ---------------------------------------------------------

PNG = base64.b64decode(
    "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMAAAA0OAQE"
    "u3h3CAAAAAElFTkSuQmCC")
SVG = b'<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>'


@pytest.fixture
def media(services):
    world = World(services)

    def attach(name, content_type, data, private=False, who=ADMIN, **more):
        return services.call(attachment_service.create, dict({
            "ids": [world.bug], "data": base64.b64encode(data).decode(), "file_name": name,
            "summary": f"Picture {name}", "content_type": content_type,
            "is_private": private, "comment": f"Adding {name}"}, **more),
            as_user=INSIDER if private else who)["ids"][0]
    world.png = attach("shot.png", "image/png", PNG)
    world.secret_png = attach("secret.png", "image/png", PNG, private=True)
    world.svg = attach("drawing.svg", "image/svg+xml", SVG)
    world.video = attach("clip.webm", "video/webm", b"\x1aE\xdf\xa3 not really a video")
    world.patch = attach("fix.png", "image/png", PNG, is_patch=True)
    return world


def inline_sources(page):
    return [int(n) for n in re.findall(r'<(?:img|video) src="/attachment\.cgi\?id=(\d+)"', page)]


def comment_holding(page, attachment_id):
    """The text of the comment <li> holding attachment `attachment_id`'s element."""
    for item in re.findall(r'<li id="c\d+" class="comment[^"]*">.*?</li>', page, re.S):
        if f'src="/attachment.cgi?id={attachment_id}"' in item:
            return item
    return None


@pytest.mark.parametrize("who", [None, PLAIN, INSIDER, ADMIN])
def test_images_and_videos_show_in_the_comment_that_added_them(app, media, who):
    browser = signed_in(app, who) if who else Browser(app)
    page = browser.get(f"/show_bug.cgi?id={media.bug}").text
    shown = inline_sources(page)
    # A private image shows to those who may see it (the insiders: the
    # administrator is one here), to nobody else; SVG and patches never inline.
    insider = who in (INSIDER, ADMIN)
    expected = [media.png] + ([media.secret_png] if insider else []) + [media.video]
    assert shown == expected
    assert media.svg not in shown and media.patch not in shown
    assert f'href="/attachment.cgi?id={media.svg}"' in page           # still a link
    item = comment_holding(page, media.png)
    assert "Adding shot.png" in item
    assert re.search(rf'<img src="/attachment.cgi\?id={media.png}" alt="Picture shot.png"'
                     r' loading="lazy" decoding="async" width="\d+" height="\d+">', item)
    assert re.search(rf'<video src="/attachment.cgi\?id={media.video}" controls preload="none"',
                     page)
    if not insider:
        assert "secret.png" not in page


def test_an_obsolete_image_is_left_a_link(app, media, services):
    services.call(attachment_service.update, {"ids": [media.png], "is_obsolete": True},
                  as_user=ADMIN)
    page = Browser(app).get(f"/show_bug.cgi?id={media.bug}").text
    assert media.png not in inline_sources(page)


def test_inline_videos_are_served_to_play_and_svg_still_downloads(app, media):
    browser = Browser(app)
    video = browser.get(f"/attachment.cgi?id={media.video}")
    assert video.headers["Content-Type"] == "video/webm"
    assert video.headers["Content-Disposition"].startswith("inline")
    svg = browser.get(f"/attachment.cgi?id={media.svg}")
    assert svg.headers["Content-Type"] == "application/octet-stream"
    assert svg.headers["Content-Disposition"].startswith("attachment")


def test_with_attachment_base_the_page_may_show_that_origins_images(app, media, services):
    set_param(services, "attachment_base", "http://bug%bugid%.files.example.test/")
    browser = signed_in(app, INSIDER)
    page = browser.get(f"/show_bug.cgi?id={media.bug}")
    policy = csp(page)
    assert policy["img-src"] == "'self' data: http://*.files.example.test"
    assert policy["media-src"] == "'self' http://*.files.example.test"
    assert policy["connect-src"] == "'self'" and policy["script-src"] == "'self'"
    assert media.secret_png in inline_sources(page.text)
    # The image's address leads, for this visitor only, to the other origin,
    # which lets this site's pages embed what it serves.
    location = browser.get(f"/attachment.cgi?id={media.secret_png}", follow=False
                           ).headers["Location"]
    host = f"bug{media.bug}.files.example.test"
    assert location.startswith(f"http://{host}/attachment.cgi?id={media.secret_png}&t=")
    served = browser.client.simulate_get(location.split(host, 1)[1], headers={"Host": host})
    assert served.status_code == 200 and served.content == PNG
    assert served.headers["Cross-Origin-Resource-Policy"] == "cross-origin"
    # Anonymous visitors get no link to the private image at all.
    assert Browser(app).get(f"/attachment.cgi?id={media.secret_png}",
                            follow=False).status_code == 401
    # On this site's own origin, content stays same-origin.
    set_param(services, "attachment_base", "")


def test_without_attachment_base_pages_show_only_their_own_images(app, media):
    page = Browser(app).get(f"/show_bug.cgi?id={media.bug}")
    assert csp(page)["img-src"] == "'self' data:" and csp(page)["media-src"] == "'self'"
    served = Browser(app).get(f"/attachment.cgi?id={media.png}")
    assert served.headers["Cross-Origin-Resource-Policy"] == "same-origin"


# The colour scheme ------------------------------------------------------------------------

def test_each_account_chooses_its_colour_scheme(app, services):
    World(services)
    browser = signed_in(app, PLAIN)
    page = browser.get("/userprefs.cgi").text
    assert '<html lang="en">' in page                          # as the device prefers
    assert re.search(r'id="color_scheme-system" name="color_scheme" value="system" checked', page)
    browser.post("/userprefs.cgi", {"tab": "appearance", "color_scheme": "dark"})
    assert '<html lang="en" data-theme="dark">' in browser.get("/").text
    whoami = services.call(user_service.whoami, {}, as_user=PLAIN, write=False)
    assert whoami["settings"] == {"color_scheme": "dark"}
    # Someone else's pages, and anonymous ones, keep following the device.
    assert '<html lang="en">' in signed_in(app, INSIDER).get("/").text
    assert '<html lang="en">' in Browser(app).get("/").text
    browser.post("/userprefs.cgi", {"tab": "appearance", "color_scheme": "system"})
    assert '<html lang="en">' in browser.get("/").text
    assert services.query("SELECT COUNT(*) FROM user_settings") == [(0,)]


def _palette(css, selector):
    """{custom property: value} of the first rule for `selector` in `css`."""
    body = css[css.index(selector + " {") + len(selector) + 2:]
    body = body[:body.index("}")]
    return dict(re.findall(r"(--[\w-]+|color-scheme):\s*([^;]+);", body))


def test_the_dark_palette_is_the_same_for_the_device_and_the_accounts_choice():
    """The style sheet names the dark colours twice (a media query cannot
    share a rule with a selector): for a device that prefers dark, and for
    an account that chose dark. Both give the same colours, and every
    colour the light palette names."""
    css = resources.files("bugsvc.web.pages").joinpath("static/bugsvc.css").read_text("utf-8")
    light = _palette(css, ":root")
    device = _palette(css, ":root:not([data-theme=light])")
    chosen = _palette(css, ":root[data-theme=dark]")
    assert device == chosen and device["color-scheme"] == "dark"
    assert set(device) == set(light) and len(light) > 20


@pytest.mark.parametrize("settings", [{"color_scheme": "purple"}, {"skin": "Dusk"}, "dark",
                                      {"color_scheme": ["dark"]}])
def test_an_unknown_setting_or_value_is_refused_and_nothing_changes(services, settings):
    World(services)
    services.call(user_service.update_self, {"settings": {"color_scheme": "light"}},
                  as_user=PLAIN)
    with pytest.raises(ServiceError) as refused:
        services.call(user_service.update_self, {"settings": settings, "full_name": "Other"},
                      as_user=PLAIN)
    assert refused.value.code == 53
    whoami = services.call(user_service.whoami, {}, as_user=PLAIN, write=False)
    assert whoami["settings"] == {"color_scheme": "light"} and whoami["real_name"] == "Pat Plain"


def test_a_refused_colour_scheme_shows_on_the_preferences(app, services):
    World(services)
    browser = signed_in(app, PLAIN)
    browser.get("/userprefs.cgi")
    answer = browser.post("/userprefs.cgi", {"tab": "appearance", "color_scheme": "neon"})
    assert answer.status_code == 400 and "color_scheme" in answer.text


# Access keys ----------------------------------------------------------------------------------

def test_the_main_actions_have_access_keys_each_once(app, services):
    world = World(services)
    browser = signed_in(app, ADMIN)
    for path in (f"/show_bug.cgi?id={world.bug}", "/enter_bug.cgi?product=TestProduct",
                 f"/attachment.cgi?id={world.public_file}&action=edit",
                 f"/attachment.cgi?bugid={world.bug}&action=enter"):
        keys = re.findall(r'accesskey="(\w)"', browser.get(path).text)
        assert "s" in keys and len(keys) == len(set(keys)), (path, keys)
    page = browser.get(f"/show_bug.cgi?id={world.bug}").text
    assert re.search(r'<textarea id="comment" name="comment"[^>]* accesskey="c"', page)
    assert re.search(r'<button type="submit" accesskey="s">Save changes</button>', page)


def test_the_colour_scheme_over_rest(client, services):
    World(services)
    key = services.api_key(PLAIN)
    answer = client.simulate_put("/rest/whoami", params={"Bugzilla_api_key": key},
                                 json={"settings": {"color_scheme": "dark"}})
    assert answer.status_code == 200, answer.json
    assert answer.json["changes"] == {"color_scheme": {"removed": "system", "added": "dark"}}
    whoami = client.simulate_get("/rest/whoami", params={"Bugzilla_api_key": key}).json
    assert whoami["settings"] == {"color_scheme": "dark"}
    refused = client.simulate_put("/rest/whoami", params={"Bugzilla_api_key": key},
                                  json={"settings": {"color_scheme": "sepia"}})
    assert refused.status_code == 400 and refused.json["code"] == 53
    # Anonymous callers have no settings to change.
    assert client.simulate_put("/rest/whoami", json={"settings": {"color_scheme": "dark"}}
                               ).json["code"] == 410
