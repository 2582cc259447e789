"""Comments in a real headless Chromium, with JavaScript on and off:
writing a Markdown comment (hostile parts shown as text, nothing run),
previewing it (in place with script, by a round trip without), @mentions
linked, and editing one's own comment with its earlier text for insiders;
axe-core finds no violation on any of these pages, at 1280 and 390 pixels,
light and dark (browser_site.check_every_state)."""

import pytest

from browser_site import (
    INSIDER,
    PLAIN,
    all_of,
    by,
    check_every_state,
    click_and_wait,
    file_bug,
    sign_in,
    sign_out,
)
from browser_support import navigate, new_driver, open_page, wait_for


pytestmark = pytest.mark.slow

HOSTILE = ('**Bold** and `code` for @insider@example.com, see bug 1.\n\n'
           '<img src=x onerror="document.title=\'pwned\'"> [run](javascript:document.title=1)\n\n'
           '> quoted <script>document.title="pwned"</script>')


@pytest.fixture(scope="module")
def driver_without_js(site, tmp_path_factory):
    browser = new_driver(tmp_path_factory.mktemp("downloads-nojs"), javascript=False)
    yield browser
    browser.quit()


@pytest.fixture(params=["javascript on", "javascript off"])
def browser(request, driver, driver_without_js):
    return driver if request.param == "javascript on" else driver_without_js


def test_a_markdown_comment_is_previewed_then_saved_and_runs_nothing(site, browser, driver):
    bug_id = file_bug(site, "Markdown sample")
    sign_in(browser, site, PLAIN)
    open_page(browser, f"{site.url}/show_bug.cgi?id={bug_id}", "Add a comment")
    assert by(browser, "#comment_is_markdown").is_selected()       # the default preference
    by(browser, "#comment").send_keys(HOSTILE)
    page = by(browser, "html")
    if browser is driver:
        by(browser, "button[name=preview]").click()
        wait_for(browser, lambda d: "<strong>Bold</strong>" in by(d, "#comment-preview")
                 .get_attribute("innerHTML"), "the preview shown in place")
        assert page.is_enabled()                      # still the same page: no round trip
    else:
        navigate(browser, by(browser, "button[name=preview]").click, "the preview page",
                 "Preview")
    preview = by(browser, "#comment-preview").get_attribute("innerHTML")
    assert "<strong>Bold</strong>" in preview and "<code>code</code>" in preview
    assert "&lt;img src=x onerror=" in preview and "<img" not in preview
    assert browser.execute_script(
        "return document.querySelectorAll('#comment-preview script, #comment-preview img,"
        " #comment-preview a[href^=\"javascript\"]').length") == 0
    assert by(browser, "#comment").get_attribute("value") == HOSTILE
    found = {}
    check_every_state(browser, found, "preview")
    navigate(browser, by(browser, "#bottom button:not([name])").click,
             "the bug after saving", "Markdown sample")
    assert browser.title != "pwned" and "pwned" not in browser.execute_script(
        "return document.title")
    last = all_of(browser, ".comment .markdown")[-1].get_attribute("innerHTML")
    assert "<strong>Bold</strong>" in last and "<blockquote>" in last
    assert browser.execute_script(
        "return document.querySelectorAll('.comment script, .comment img, .comment iframe,"
        " .comment [onerror], .comment [onclick], a[href^=\"javascript\"]').length") == 0
    assert 'class="mention"' in last and "bug 1</a>" in last
    check_every_state(browser, found, "bug with a Markdown comment")
    assert {name: v for name, v in found.items() if v} == {}
    comments = site.rest("GET", f"/bug/{bug_id}/comment")["bugs"][str(bug_id)]["comments"]
    assert comments[-1]["is_markdown"] is True and comments[-1]["text"] == HOSTILE


def test_a_new_bugs_description_is_previewed_and_nothing_is_filed(site, browser, driver):
    sign_in(browser, site, PLAIN)
    before = len(site.rest("GET", "/bug", product="TestProduct")["bugs"])
    open_page(browser, f"{site.url}/enter_bug.cgi?product=TestProduct", "File a bug")
    by(browser, "#summary").send_keys("Half typed")
    by(browser, "#description").send_keys("- one\n- two")
    if browser is driver:
        by(browser, "button[name=preview]").click()
        wait_for(browser, lambda d: "<li>one</li>" in by(d, "#comment-preview")
                 .get_attribute("innerHTML"), "the preview shown in place")
    else:
        navigate(browser, by(browser, "button[name=preview]").click, "the preview page",
                 "Preview")
    assert "<li>one</li>" in by(browser, "#comment-preview").get_attribute("innerHTML")
    assert by(browser, "#summary").get_attribute("value") == "Half typed"
    found = {}
    check_every_state(browser, found, "new bug preview")
    assert {name: v for name, v in found.items() if v} == {}
    assert len(site.rest("GET", "/bug", product="TestProduct")["bugs"]) == before


def test_a_member_edits_their_comment_and_an_insider_reads_the_old_text(site, browser):
    site.rest("PUT", "/parameters", {"edit_comments_group": "staff"})
    try:
        bug_id = file_bug(site, "Editing sample")
        sign_in(browser, site, INSIDER)
        open_page(browser, f"{site.url}/show_bug.cgi?id={bug_id}", "Add a comment")
        by(browser, "#comment").send_keys("Teh typo")
        navigate(browser, by(browser, "#bottom button:not([name])").click,
                 "the bug after saving", "Teh typo")
        click_and_wait(browser, 'a[href^="/editcomment.cgi"]', "the edit form", "Edit comment")
        found = {}
        check_every_state(browser, found, "edit form")
        text = by(browser, "#comment")
        text.clear()
        text.send_keys("The typo, fixed")
        navigate(browser, by(browser, "#edit-comment button:not([name])").click,
                 "the bug after editing", "The typo, fixed")
        assert all_of(browser, ".comment .edited a")       # an insider: linked to the old text
        check_every_state(browser, found, "bug with an edited comment")
        click_and_wait(browser, ".comment .edited a", "the earlier texts", "Teh typo")
        check_every_state(browser, found, "earlier texts")
        sign_out(browser, site)
        open_page(browser, f"{site.url}/show_bug.cgi?id={bug_id}", "The typo, fixed")
        assert [mark.text for mark in all_of(browser, ".comment .edited")] == ["Edited"]
        assert not all_of(browser, ".comment .edited a") and "Teh typo" not in \
            browser.page_source
        assert {name: v for name, v in found.items() if v} == {}
    finally:
        site.rest("PUT", "/parameters", {"edit_comments_group": ""})
