"""How pages and attachments are served: the one style sheet and the one
script (cached for good under names that carry a hash of their content),
attachment content that cannot act as a page of this site, and the
attachment_base origin."""

import base64
import re
import time

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from bugsvc.services import attachment as attachment_service
from conftest import world_fixture
from page_support import INSIDER, PASSWORDS, Browser, World, csp


@world_fixture
def world(services):
    return World(services)


def test_pages_link_one_style_sheet_and_one_script_kept_for_good(app, world):
    browser = Browser(app)
    page = browser.get("/")
    sheets = re.findall(r'<link rel="stylesheet" href="([^"]+)">', page.text)
    scripts = re.findall(r'<script src="([^"]+)" defer></script>', page.text)
    assert len(sheets) == 1 and len(scripts) == 1
    assert page.text.count("<script") == 1 and "<style" not in page.text
    for path, kind in ((sheets[0], "text/css"), (scripts[0], "text/javascript")):
        first = browser.get(path)
        assert first.status_code == 200 and first.headers["Content-Type"].startswith(kind)
        assert "immutable" in first.headers["Cache-Control"]
        again = browser.client.simulate_get(path, headers={"If-None-Match": first.headers["ETag"]})
        assert again.status_code == 304 and again.content == b""
    assert browser.get("/static/bugsvc.0000.css").status_code == 404


def test_every_page_works_without_its_script(app, world):
    # The script only hides the resolution until a closed status is chosen.
    script = Browser(app).get(re.search(r'<script src="([^"]+)"',
                                        Browser(app).get("/").text).group(1)).text
    assert len(script) < 2048 and "fetch(" not in script and "XMLHttpRequest" not in script


def attach(services, world, name, content_type, data):
    return services.call(attachment_service.create, {
        "ids": [world.bug], "data": base64.b64encode(data).decode(), "file_name": name,
        "summary": name, "content_type": content_type}, as_user=ADMIN)["ids"][0]


@pytest.mark.parametrize("name, stated, served, inline", [
    ("notes.txt", "text/plain", "text/plain; charset=UTF-8", True),
    ("build.log", "text/x-log", "text/plain; charset=UTF-8", True),
    ("shot.png", "image/png", "image/png", True),
    ("page.html", "text/html", "application/octet-stream", False),
    ("drawing.svg", "image/svg+xml", "application/octet-stream", False),
    ("data.bin", "application/x-unknown", "application/octet-stream", False),
    ("doc.xhtml", "application/xhtml+xml", "application/octet-stream", False),
])
def test_attachments_are_served_so_they_cannot_act_as_our_pages(app, world, services, name,
                                                                stated, served, inline):
    data = b"<script>alert(document.cookie)</script>"
    attachment_id = attach(services, world, name, stated, data)
    result = Browser(app).get(f"/attachment.cgi?id={attachment_id}")
    assert result.status_code == 200 and result.content == data
    assert result.headers["Content-Type"] == served
    assert result.headers["X-Content-Type-Options"] == "nosniff"
    disposition = result.headers["Content-Disposition"]
    assert disposition.startswith("inline" if inline else "attachment")
    assert f"filename=\"{name}\"" in disposition
    policy = csp(result)
    assert "sandbox" in policy and policy["default-src"] == "'none'"
    assert "script-src" not in policy


def test_a_hostile_file_name_cannot_break_the_header(app, world, services):
    attachment_id = attach(services, world, 'a"; x=1\r\n.txt', "text/plain", b"x")
    result = Browser(app).get(f"/attachment.cgi?id={attachment_id}")
    assert "\r" not in result.headers["Content-Disposition"]
    assert result.headers["Content-Disposition"].count('"') == 2


def test_attachment_base_serves_content_from_the_other_origin(app, world, services):
    set_param(services, "attachment_base", "http://files.example.test/")
    browser = Browser(app)
    browser.login(INSIDER, PASSWORDS[INSIDER])
    redirect = browser.get(f"/attachment.cgi?id={world.private_file}", follow=False)
    assert redirect.status_code == 302
    location = redirect.headers["Location"]
    assert location.startswith(f"http://files.example.test/attachment.cgi?id="
                               f"{world.private_file}&t=")
    path = location.split("files.example.test", 1)[1]
    other = browser.client.simulate_get(path, headers={"Host": "files.example.test"})
    assert other.status_code == 200 and other.text == "ACME contract terms"
    assert "sandbox" in other.headers["Content-Security-Policy"]
    # The link is the insider's: for another attachment, or changed, it serves nothing.
    forged = path.replace(f"id={world.private_file}", f"id={world.public_file}")
    assert browser.client.simulate_get(forged, headers={"Host": "files.example.test"}
                                       ).status_code == 404
    # Nothing else is served on the attachment origin: no pages, no API, no session.
    for elsewhere in ("/", "/show_bug.cgi?id=1", "/rest/version", "/attachment.cgi?id=1"):
        answer = browser.client.simulate_get(elsewhere, headers={"Host": "files.example.test"})
        assert answer.status_code == 404


def test_an_anonymous_link_to_a_private_attachment_serves_nothing(app, world, services):
    set_param(services, "attachment_base", "http://files.example.test/")
    anonymous = Browser(app)
    refused = anonymous.get(f"/attachment.cgi?id={world.private_file}", follow=False)
    assert refused.status_code == 401
    public = anonymous.get(f"/attachment.cgi?id={world.public_file}", follow=False)
    path = public.headers["Location"].split("files.example.test", 1)[1]
    assert anonymous.client.simulate_get(path, headers={"Host": "files.example.test"}
                                         ).text == "Traceback: boom"


def test_a_signed_link_expires(app, world, services, monkeypatch):
    set_param(services, "attachment_base", "http://files.example.test/")
    browser = Browser(app)
    path = browser.get(f"/attachment.cgi?id={world.public_file}", follow=False).headers[
        "Location"].split("files.example.test", 1)[1]
    later = time.time() + 301
    monkeypatch.setattr(time, "time", lambda: later)
    assert browser.client.simulate_get(path, headers={"Host": "files.example.test"}
                                       ).status_code == 404


def test_attachment_base_with_the_bug_number_in_the_host(app, world, services):
    set_param(services, "attachment_base", "http://bug%bugid%.files.example.test/")
    browser = Browser(app)
    location = browser.get(f"/attachment.cgi?id={world.public_file}", follow=False).headers[
        "Location"]
    assert location.startswith(f"http://bug{world.bug}.files.example.test/attachment.cgi")
    path = location.split(".test", 1)[1]
    served = browser.client.simulate_get(path, headers={"Host": f"bug{world.bug}.files.example"
                                                                ".test"})
    assert served.text == "Traceback: boom"
    browser.login(ADMIN, ADMIN_PASSWORD)
