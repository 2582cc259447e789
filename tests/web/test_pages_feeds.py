"""A bug as Bugzilla's XML (show_bug.cgi?ctype=xml) and a bug list as an
Atom feed (buglist.cgi?ctype=atom, and ctype=rss as the reference answers
it): each shows what its caller may see, no more."""

import base64
import xml.etree.ElementTree as ET

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import set_param
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World


ATOM = "{http://www.w3.org/2005/Atom}"


@pytest.fixture
def world(services):
    return World(services)


def as_(app, who):
    browser = Browser(app)
    if who is not None:
        browser.login(who, ADMIN_PASSWORD if who == ADMIN else PASSWORDS[who])
    return browser


def xml_of(browser, query):
    result = browser.get(f"/show_bug.cgi?ctype=xml&{query}")
    assert result.status_code == 200
    assert result.headers["Content-Type"] == "application/xml; charset=UTF-8"
    return ET.fromstring(result.content)


def texts(bug, name):
    return [element.text or "" for element in bug.findall(name)]


@pytest.mark.parametrize("who", [None, PLAIN, INSIDER, ADMIN])
def test_a_bugs_xml_shows_what_its_caller_may_see(app, world, who):
    root = xml_of(as_(app, who), f"id={world.bug}&id={world.secret}&id=999999&id=no-such")
    assert root.tag == "bugzilla" and root.get("version") == "5.2"
    assert root.get("exporter") == who
    bugs = root.findall("bug")
    assert [bug.findtext("bug_id") for bug in bugs] == [
        str(world.bug), str(world.secret), "999999", "no-such"]
    public, secret, missing, bad = bugs
    assert public.get("error") is None
    assert public.findtext("short_desc") == "Public crash on start"
    assert public.findtext("product") == "TestProduct"
    assert public.find("reporter").text == ADMIN
    assert public.findtext("creation_ts").endswith(" +0000")
    comments = texts(public, "long_desc/thetext")
    files = texts(public, "attachment/filename")
    insider = who in (INSIDER, ADMIN)
    assert comments[:2] == ["It crashes when it starts.", "A public note"]
    authors = public.findall("long_desc/who")
    assert (authors[0].text, authors[0].get("name")) == (ADMIN, "Administrator")
    assert public.find("attachment/attacher").get("name") == "Administrator"
    assert ("The customer is ACME" in comments) == insider
    assert ("Created attachment 2\nFile contract.txt" in comments) == insider
    assert files == ["trace.txt"] + (["contract.txt"] if insider else [])
    assert (public.find("token") is not None) == (who is not None)
    if who == ADMIN:
        assert secret.get("error") is None
        assert secret.findtext("short_desc") == "Secret hole in the login"
        assert texts(secret, "group") == ["secret"]
        # As Bugzilla's: the group's id, and the real names of who wrote and attached.
        assert secret.find("group").get("id") == str(world.secret_group)
    else:
        assert secret.get("error") == "NotPermitted"
        assert [child.tag for child in secret] == ["bug_id"]
    # As the API: a missing bug and a hidden one answer alike to anyone
    # who does not see every bug.
    assert missing.get("error") == ("NotFound" if who == ADMIN else "NotPermitted")
    assert bad.get("error") == "InvalidBugId"


def test_every_viewer_of_a_bug_in_a_group_is_told_the_groups_id(app, world, services):
    """As Bugzilla 5.2's bug XML: each group of the bug with its id, to
    whoever sees the bug, here a plain user on its CC list who is no member
    of the group and may not edit bugs of the product (its editors are the
    members of staff)."""
    from bug_support import NA, control
    from bugsvc.services import bug as bug_service
    with services.db.transaction() as conn:
        staff = conn.execute("SELECT id FROM groups WHERE name = 'staff'").fetchone()[0]
    control(services, staff, NA, NA, canedit=1)
    services.call(bug_service.update, {"ids": [world.secret], "cc": {"add": [PLAIN]}},
                  as_user=ADMIN)
    for who in (PLAIN, ADMIN):
        [secret] = xml_of(as_(app, who), f"id={world.secret}").findall("bug")
        assert secret.get("error") is None
        assert [(g.get("id"), g.text) for g in secret.findall("group")] == [
            (str(world.secret_group), "secret")], who
    # Anyone else is still told nothing of the bug, its groups included.
    [hidden] = xml_of(as_(app, INSIDER), f"id={world.secret}").findall("bug")
    assert hidden.get("error") == "NotPermitted" and hidden.find("group") is None


def test_the_xml_carries_attachment_data_unless_left_out(app, world):
    browser = as_(app, INSIDER)
    root = xml_of(browser, f"id={world.bug}")
    data = {a.findtext("filename"): a.findtext("data") for a in root.iter("attachment")}
    assert base64.b64decode(data["contract.txt"]) == b"ACME contract terms"
    private = [a for a in root.iter("attachment") if a.findtext("filename") == "contract.txt"]
    assert private[0].get("isprivate") == "1"
    lean = xml_of(browser, f"id={world.bug}&excludefield=attachmentdata")
    assert [a.find("data") for a in lean.iter("attachment")] == [None, None]
    only = xml_of(browser, f"id={world.bug}&field=short_desc&field=bug_id")
    assert [child.tag for child in only.find("bug")] == ["bug_id", "short_desc"]


def test_control_characters_never_break_the_xml(app, world, services):
    from bugsvc.services import comment
    services.call(comment.add, {"id": world.bug, "comment": "tab\there <b>&amp; more"},
                  as_user=ADMIN)
    root = xml_of(as_(app, None), f"id={world.bug}")
    assert texts(root.find("bug"), "long_desc/thetext")[-1] == "tab\there <b>&amp; more"


def feed_of(browser, query, ctype="atom"):
    result = browser.get(f"/buglist.cgi?ctype={ctype}&{query}")
    assert result.status_code == 200
    assert result.headers["Content-Type"] == "application/atom+xml; charset=UTF-8"
    return ET.fromstring(result.content)


@pytest.mark.parametrize("who", [None, PLAIN, INSIDER, ADMIN])
def test_the_atom_feed_lists_the_bugs_its_caller_may_see(app, world, who):
    feed = feed_of(as_(app, who), "bug_status=__all__&order=bug_id")
    titles = [entry.findtext(f"{ATOM}title") for entry in feed.iter(f"{ATOM}entry")]
    expected = [f"[Bug {world.bug}] Public crash on start"]
    if who == ADMIN:
        expected.append(f"[Bug {world.secret}] Secret hole in the login")
    assert titles == expected
    entry = feed.find(f"{ATOM}entry")
    assert entry.find(f"{ATOM}link").get("href").endswith(f"show_bug.cgi?id={world.bug}")
    summary = entry.findtext(f"{ATOM}summary")
    assert "<td>Product</td><td>TestProduct</td>" in summary


def test_rss_is_answered_with_the_atom_feed_and_credentials_stay_out(app, world, services):
    set_param(services, "urlbase", "https://bugs.example.com/")
    key = services.api_key(ADMIN)
    feed = feed_of(as_(app, None), f"short_desc=crash&title=Crashes&Bugzilla_api_key={key}",
                   ctype="rss")
    assert feed.findtext(f"{ATOM}title") == "Crashes"
    links = {link.get("rel"): link.get("href") for link in feed.findall(f"{ATOM}link")}
    assert links["self"] == ("https://bugs.example.com/buglist.cgi?ctype=atom"
                             "&short_desc=crash&title=Crashes")
    assert key not in ET.tostring(feed, encoding="unicode")
    # The key in the address is not used: the secret bug stays out.
    assert len(list(feed.iter(f"{ATOM}entry"))) == 1
