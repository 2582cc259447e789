"""The pages' enhancements in a real headless Chromium against a real
server, with JavaScript on and off, at 1280 and 390 pixels, light and dark:
every page fits a phone without sideways scrolling (and a wide screen at
200%), people pickers suggest accounts and are driven by the keyboard,
images show in their comment (through attachment_base too) to those who
may see them, an image dropped or pasted into the comment box is attached,
the keyboard shortcuts, the colour scheme an account chooses; axe-core
finds no violation in any of these states (the pages that show an
enhancement at work, with its list, dialog or images open, are checked at
both widths in both schemes by browser_site.check_every_state)."""

import base64
import json

import pytest

from browser_site import (
    ADMIN,
    INSIDER,
    PLAIN,
    bug_of,
    by,
    check_every_state,
    click_and_wait,
    every_page,
    file_bug,
    keys,
    sign_in,
    sign_out,
)
from browser_support import (
    axe_violations,
    emulate,
    new_driver,
    open_page,
    overflow,
    wait_for,
)


pytestmark = pytest.mark.slow

PNG = ("iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP8z8DAwMDAxMDAwMAAAA0OAQE"
       "u3h3CAAAAAElFTkSuQmCC")
DARK_PAGE = "rgb(18, 20, 23)"
LIGHT_PAGE = "rgb(255, 255, 255)"


@pytest.fixture(scope="module")
def quiet_driver(site):
    """A browser with JavaScript turned off."""
    browser = new_driver(javascript=False)
    yield browser
    browser.quit()


@pytest.fixture
def screen(driver):
    """The JavaScript browser, put back to a light 1280-pixel screen after
    the test."""
    yield driver
    emulate(driver)


def background(driver):
    return driver.execute_script("return getComputedStyle(document.body).backgroundColor")


def focused(driver):
    return driver.execute_script("var e = document.activeElement;"
                                 " return e ? (e.id || e.textContent.trim()) : null")


def fits(driver, where, found, width=390):
    """Note in `found` when the page shown is wider than the window (on a
    phone, its layout viewport would grow past the screen's `width`)."""
    shown = driver.execute_script("return window.innerWidth")
    if shown != width:
        found.setdefault(where, []).append(("viewport", f"{shown}px, not {width}px"))
    extra, worst = overflow(driver)
    if extra > 0:
        found.setdefault(where, []).append(("sideways", f"{extra}px", worst))


def test_every_page_fits_a_phone_in_dark_and_passes_axe(site, screen):
    driver = screen
    bug_id, anonymous, signed_in = every_page(site)
    found = {}
    emulate(driver, 390, 844, "dark")
    sign_out(driver, site)
    for path in anonymous:
        open_page(driver, site.url + path)
        fits(driver, "anonymous " + path, found)
        found.setdefault("anonymous " + path, []).extend(axe_violations(driver))
    sign_in(driver, site, ADMIN)
    assert background(driver) == DARK_PAGE
    for path in signed_in:
        open_page(driver, site.url + path)
        fits(driver, "admin " + path, found)
        found.setdefault("admin " + path, []).extend(axe_violations(driver))
    # A 1280-pixel screen at 200%: 640 CSS pixels, nothing sideways.
    emulate(driver, 640, 500, "light", zoom=2)
    for path in (f"/show_bug.cgi?id={bug_id}", "/buglist.cgi?product=TestProduct",
                 "/query.cgi", "/userprefs.cgi?tab=email", "/editproducts.cgi"):
        open_page(driver, site.url + path)
        fits(driver, "admin at 200% " + path, found, width=640)
    failures = {page: problems for page, problems in found.items() if problems}
    assert not failures, json.dumps(failures, indent=1)


def pick_person(driver, box, typed, login):
    """Type `typed` into people field `box`, wait for `login` among the
    suggestions and take it with the arrows and Enter."""
    from selenium.webdriver.common.keys import Keys
    field = by(driver, box)
    field.clear()
    field.send_keys(typed)
    wait_for(driver, lambda d: d.execute_script(
        "var list = document.getElementById(arguments[0].getAttribute('aria-controls'));"
        "return !list.hidden && list.textContent.indexOf(arguments[1]) >= 0;", field, login),
        f"{login} suggested")
    assert field.get_attribute("aria-expanded") == "true"
    options = driver.execute_script(
        "return Array.prototype.map.call(document.getElementById("
        "arguments[0].getAttribute('aria-controls')).children, function (o) {"
        " return o.textContent; });", field)
    for _ in range([login in option for option in options].index(True) + 1):
        field.send_keys(Keys.ARROW_DOWN)
    active = field.get_attribute("aria-activedescendant")
    assert login in by(driver, f"#{active}").text
    field.send_keys(Keys.ENTER)                 # takes the suggestion, submits nothing
    return field


def test_people_pickers_suggest_accounts_with_the_keyboard_in_dark(site, screen):
    driver = screen
    bug_id = file_bug(site, "Picked people")
    sign_in(driver, site, ADMIN)
    emulate(driver, 1280, 1000, "dark")
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    field = pick_person(driver, "#assigned_to", "pat", PLAIN)
    assert field.get_attribute("value") == PLAIN and field.get_attribute("aria-expanded") == "false"
    cc = pick_person(driver, "#cc_add", "ida", INSIDER)
    assert cc.get_attribute("value") == f"{INSIDER}, "
    # The list open: axe finds nothing in the combobox and its options.
    cc.send_keys("pat")
    suggestions = "#" + cc.get_attribute("aria-controls")
    wait_for(driver, lambda d: by(d, suggestions).is_displayed(), "the CC suggestions")
    found = {}
    check_every_state(driver, found, "suggestions open")
    failures = {state: v for state, v in found.items() if v}
    assert not failures, json.dumps(failures, indent=1)
    assert by(driver, suggestions).is_displayed()
    from selenium.webdriver.common.keys import Keys
    cc.send_keys(Keys.ESCAPE)
    assert not by(driver, suggestions).is_displayed()
    cc.send_keys(Keys.BACKSPACE * 3)
    click_and_wait(driver, "#bottom button[type=submit]", "the saved bug",
                   "Your changes have been saved.")
    bug = bug_of(site, bug_id)
    assert bug["assigned_to"] == PLAIN and bug["cc"] == [INSIDER]


def loaded_images(driver):
    """[(attachment link, loaded)] of the images shown in comments, each
    scrolled into view (they load lazily) and waited for."""
    return driver.execute_async_script(
        "var done = arguments[arguments.length - 1];"
        "var images = Array.prototype.slice.call(document.querySelectorAll('.comment img'));"
        "Promise.all(images.map(function (i) { i.scrollIntoView();"
        " return i.decode().then(function () { return [i.getAttribute('src'), true]; },"
        " function () { return [i.getAttribute('src'), false]; }); })).then(done);")


def comment_images(driver):
    """The links of the images shown in comments."""
    return driver.execute_script(
        "return Array.prototype.map.call(document.querySelectorAll('.comment img'),"
        " function (i) { return i.getAttribute('src'); });")


def test_images_show_in_their_comment_to_those_who_may_see_them(site, screen):
    driver = screen
    bug_id = file_bug(site, "Pictures of the crash")
    public = site.rest("POST", f"/bug/{bug_id}/attachment", {
        "ids": [bug_id], "data": PNG, "file_name": "crash.png", "summary": "The crash",
        "content_type": "image/png"})["ids"][0]
    private = site.rest("POST", f"/bug/{bug_id}/attachment", {
        "ids": [bug_id], "data": PNG, "file_name": "customer.png", "summary": "At the customer",
        "content_type": "image/png", "is_private": True})["ids"][0]
    video = site.rest("POST", f"/bug/{bug_id}/attachment", {
        "ids": [bug_id], "data": base64.b64encode(b"\x1aE\xdf\xa3 a clip").decode(),
        "file_name": "clip.webm", "summary": "How it crashes", "content_type": "video/webm"})
    src = "/attachment.cgi?id={}".format
    found = {}
    try:
        for base in ("", site.url.replace("127.0.0.1", "localhost") + "/"):
            site.rest("PUT", "/parameters", {"attachment_base": base})
            for who, expected in ((None, [src(public)]), (PLAIN, [src(public)]),
                                  (INSIDER, [src(public), src(private)])):
                emulate(driver, 390, 844, "dark")
                if who:
                    sign_in(driver, site, who)
                else:
                    sign_out(driver, site)

                def shown(d, base=base, expected=expected):
                    # Each server process reads attachment_base again within
                    # seconds: the page is loaded again until the one shown
                    # follows it and its images load.
                    open_page(d, f"{site.url}/show_bug.cgi?id={bug_id}")
                    return loaded_images(d) == [[image, True] for image in expected]
                wait_for(driver, shown, f"the images {who} may see, loaded "
                                        f"(attachment_base {base!r})")
                assert by(driver, "video").get_attribute("src").endswith(src(video["ids"][0]))
                if who == INSIDER and not base:
                    check_every_state(driver, found, "images shown to an insider")
                else:
                    found[f"images shown to {who}, attachment_base {base!r}"] = \
                        axe_violations(driver)
    finally:
        site.rest("PUT", "/parameters", {"attachment_base": ""})
    failures = {state: v for state, v in found.items() if v}
    assert not failures, json.dumps(failures, indent=1)


DROP = """
var box = arguments[0], how = arguments[1];
var bytes = Uint8Array.from(atob(arguments[2]), function (c) { return c.charCodeAt(0); });
var file = new File([bytes], arguments[3], {type: "image/png"});
var data = new DataTransfer();
data.items.add(file);
if (how === "paste") {
  box.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true,
                                                 cancelable: true}));
} else {
  box.dispatchEvent(new DragEvent("drop", {dataTransfer: data, bubbles: true, cancelable: true}));
}
"""


def test_an_image_dropped_or_pasted_into_the_comment_box_is_attached(site, screen):
    driver = screen
    bug_id = file_bug(site, "Screenshots welcome")
    sign_in(driver, site, PLAIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    box = by(driver, "#comment")
    box.send_keys("Here is what I see.")
    assert "Paste or drop an image" in by(driver, "#attach-hint").text
    for how, name in (("drop", "dropped.png"), ("paste", "pasted.png")):
        driver.execute_script(DROP, box, how, PNG, name)
        wait_for(driver, lambda d, name=name: f"{name} is attached" in by(d, "#attach-status").text,
                 f"the {how} to be attached")
    attachments = site.rest("GET", f"/bug/{bug_id}/attachment")["bugs"][str(bug_id)]
    assert [(a["file_name"], a["content_type"], a["creator"]) for a in attachments] == [
        ("dropped.png", "image/png", PLAIN), ("pasted.png", "image/png", PLAIN)]
    assert base64.b64decode(attachments[0]["data"]) == base64.b64decode(PNG)
    # Both show in their new comments; the typed text stayed and saves
    # without a mid-air collision (the bug changed only by these files).
    assert comment_images(driver) == [
        f"/attachment.cgi?id={a['id']}" for a in attachments]
    assert by(driver, "#comment").get_attribute("value") == "Here is what I see."
    click_and_wait(driver, "#bottom button[type=submit]", "the saved bug",
                   "Your changes have been saved.")
    comments = site.rest("GET", f"/bug/{bug_id}/comment")["bugs"][str(bug_id)]["comments"]
    assert comments[-1]["text"] == "Here is what I see."


def test_a_change_by_someone_else_still_shows_the_mid_air_page_after_a_paste(site, screen):
    driver = screen
    bug_id = file_bug(site, "Changed meanwhile")
    sign_in(driver, site, PLAIN)
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    site.rest("PUT", f"/bug/{bug_id}", {"priority": "Low"})
    box = by(driver, "#comment")
    box.send_keys("After the change")
    driver.execute_script(DROP, box, "drop", PNG, "late.png")
    wait_for(driver, lambda d: "late.png is attached" in by(d, "#attach-status").text,
             "the drop to be attached")
    click_and_wait(driver, "#bottom button[type=submit]", "the collision page",
                   "Mid-air collision")


def test_keyboard_shortcuts_on_lists_and_bugs_never_while_typing(site, screen):
    from selenium.webdriver.common.keys import Keys
    driver = screen
    first, second = file_bug(site, "Shortcut one"), file_bug(site, "Shortcut two")
    emulate(driver, 390, 844, "light")
    sign_in(driver, site, ADMIN)
    open_page(driver, f"{site.url}/buglist.cgi?bug_id={first},{second}&order=bug_id")
    by(driver, "h1").click()
    keys(driver, "j")
    assert focused(driver) == str(first)
    keys(driver, "j")
    assert focused(driver) == str(second)
    keys(driver, "k")
    assert focused(driver) == str(first)
    from selenium.webdriver.common.action_chains import ActionChains
    for modifier in (Keys.CONTROL, Keys.ALT):               # with a modifier: the browser's
        ActionChains(driver).key_down(modifier).send_keys("j").key_up(modifier).perform()
        assert focused(driver) == str(first)
    keys(driver, "/")
    assert focused(driver) == "quicksearch"
    keys(driver, "jk?")                                     # typed, not shortcuts
    assert by(driver, "#quicksearch").get_attribute("value") == "jk?"
    assert focused(driver) == "quicksearch" and not all_dialogs(driver)
    by(driver, "h1").click()
    keys(driver, "?")
    wait_for(driver, lambda d: all_dialogs(d), "the list of shortcuts")
    assert "Keyboard shortcuts" in by(driver, ".shortcuts").text
    assert focused(driver) == "Close"
    found = {}
    check_every_state(driver, found, "the list of shortcuts")
    failures = {state: v for state, v in found.items() if v}
    assert not failures, json.dumps(failures, indent=1)
    emulate(driver, 390, 844, "light")
    assert all_dialogs(driver) and focused(driver) == "Close"
    keys(driver, Keys.ESCAPE)
    assert not all_dialogs(driver)
    open_page(driver, f"{site.url}/show_bug.cgi?id={first}")
    by(driver, "h1").click()
    keys(driver, "c")
    assert focused(driver) == "comment"
    keys(driver, "e")                                       # typed into the comment box
    assert by(driver, "#comment").get_attribute("value") == "e"
    by(driver, "h1").click()
    keys(driver, "e")
    assert focused(driver) == "summary"
    by(driver, "h1").click()
    keys(driver, "j")
    assert focused(driver) == "Description"


def all_dialogs(driver):
    return driver.execute_script(
        "return Array.prototype.some.call(document.querySelectorAll('.shortcuts'),"
        " function (d) { return !d.hidden; })")


def test_the_colour_scheme_follows_the_device_unless_the_account_chose(site, screen):
    driver = screen
    sign_in(driver, site, PLAIN)
    found = {}
    for device, choice, expected in (("dark", "system", DARK_PAGE), ("light", "dark", DARK_PAGE),
                                     ("dark", "light", LIGHT_PAGE),
                                     ("light", "system", LIGHT_PAGE)):
        emulate(driver, 1280, 1000, device)
        open_page(driver, site.url + "/userprefs.cgi")
        by(driver, f"#color_scheme-{choice}").click()
        click_and_wait(driver, "#appearance button", "the saved appearance",
                       "Your preferences have been saved.")
        assert by(driver, f"#color_scheme-{choice}").is_selected()
        assert background(driver) == expected, (device, choice)
        found[f"{device} device, {choice} chosen"] = axe_violations(driver)
    failures = {state: v for state, v in found.items() if v}
    assert not failures, json.dumps(failures, indent=1)


def test_without_javascript_the_pages_work_as_plain_forms(site, quiet_driver):
    driver = quiet_driver
    bug_id = file_bug(site, "No script here")
    picture = site.rest("POST", f"/bug/{bug_id}/attachment", {
        "ids": [bug_id], "data": PNG, "file_name": "still.png", "summary": "A still",
        "content_type": "image/png"})["ids"][0]
    emulate(driver, 390, 844, "light")
    sign_in(driver, site, ADMIN)
    found = {}
    for path in (f"/show_bug.cgi?id={bug_id}", "/buglist.cgi?product=TestProduct&tweak=1",
                 "/enter_bug.cgi?product=TestProduct", "/query.cgi", "/userprefs.cgi",
                 "/request.cgi"):
        open_page(driver, site.url + path)
        fits(driver, "390 " + path, found)
        found.setdefault("390 " + path, []).extend(axe_violations(driver))
    open_page(driver, f"{site.url}/show_bug.cgi?id={bug_id}")
    # The image shows in its comment without script too; the bug's page
    # (people fields as plain boxes, the comment box) in every state.
    assert loaded_images(driver) == [[f"/attachment.cgi?id={picture}", True]]
    check_every_state(driver, found, "bug page")
    emulate(driver, 390, 844, "light")
    field = by(driver, "#assigned_to")
    assert field.get_attribute("role") is None and field.get_attribute("data-people") == "one"
    assert not driver.find_elements("css selector", "#attach-hint")
    keys(driver, "?")
    assert not all_dialogs(driver)
    field.clear()
    field.send_keys(PLAIN)
    by(driver, "#comment").send_keys("Typed without scripts")
    click_and_wait(driver, "#bottom button[type=submit]", "the saved bug",
                   "Your changes have been saved.")
    assert bug_of(site, bug_id)["assigned_to"] == PLAIN
    emulate(driver, 1280, 1000, "dark")
    for path in (f"/show_bug.cgi?id={bug_id}", "/buglist.cgi?product=TestProduct"):
        open_page(driver, site.url + path)
        assert background(driver) == DARK_PAGE
        found.setdefault("1280 dark " + path, []).extend(axe_violations(driver))
    failures = {page: v for page, v in found.items() if v}
    assert not failures, json.dumps(failures, indent=1)
