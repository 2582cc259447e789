"""Working on bugs in the pages: filing one with an attachment, the bug
form (fields, status, comment, CC, flags, privacy of comments), mid-air
collisions, attachments; each change is the operation's, with its rules."""

import re

from accounts import ADMIN
from bug_support import add_flag_type, editbugs_only_for_members, file_bug, get_bug, update_bug
from conftest import world_fixture
from page_support import (
    INSIDER,
    PLAIN,
    Browser,
    World,
    form_fields,
    signed_in,
    submit,
    text_of,
)


@world_fixture
def world(services):
    return World(services)


# Filing ---------------------------------------------------------------------------------

def test_a_bug_is_filed_with_an_attachment(app, world, services):
    browser = signed_in(app, PLAIN)
    page = browser.get("/enter_bug.cgi")
    assert page.status_code == 200 and "File a bug in TestProduct" in page.text  # one product
    result = browser.post("/post_bug.cgi", {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Printing <b>fails</b>", "description": "Steps: print.",
        "severity": "major", "platform": "PC", "op_sys": "Linux",
        "attachment_description": "The log"},
        files={"data": ("print.log", "text/plain", b"error: no paper")})
    assert "The bug has been filed." in result.text
    bug_id = int(re.search(r"Bug (\d+)</span>", result.text).group(1))
    bug = get_bug(services, bug_id)
    assert (bug["summary"], bug["severity"], bug["creator"]) == (
        "Printing <b>fails</b>", "major", PLAIN)
    assert "Printing &lt;b&gt;fails&lt;/b&gt;" in result.text and "<b>fails</b>" not in result.text
    assert services.query("SELECT file_name, summary, content_type FROM attachments"
                          " WHERE bug_id = ?", (bug_id,)) == [("print.log", "The log",
                                                               "text/plain")]


def test_the_form_guesses_os_and_hardware_from_the_browser(app, world):
    browser = signed_in(app, PLAIN)
    page = browser.get("/enter_bug.cgi?product=TestProduct", headers={
        "User-Agent": "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/150"})
    assert re.search(r'<option selected>Windows</option>', page.text)
    assert re.search(r'<option selected>PC</option>', page.text)


def test_a_refused_bug_keeps_what_was_typed(app, world, services):
    browser = signed_in(app, PLAIN)
    browser.get("/enter_bug.cgi?product=TestProduct")
    before = services.query("SELECT COUNT(*) FROM bugs")
    result = browser.post("/post_bug.cgi", {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "", "description": "My long description", "platform": "PC",
        "op_sys": "Linux"})
    assert result.status_code == 400 and "summary" in text_of(result.text).lower()
    assert "My long description" in result.text
    assert services.query("SELECT COUNT(*) FROM bugs") == before


def test_a_product_nobody_may_file_in_is_refused(app, world):
    page = signed_in(app, PLAIN).get("/enter_bug.cgi?product=NoSuchProduct")
    assert page.status_code == 401 and "NoSuchProduct" in page.text


def test_the_new_bug_form_is_filled_in_from_bugzillas_parameters(app, world, services):
    from bug_support import add_keyword
    add_keyword(services, "crash")
    browser = signed_in(app, PLAIN)
    page = browser.get(
        "/enter_bug.cgi?product=TestProduct&component=TestComponent&short_desc=Prints%20twice"
        "&comment=Steps%3A%20print%20once&bug_severity=critical&priority=Highest"
        f"&rep_platform=PC&op_sys=Linux&keywords=crash&cc={INSIDER}&dependson={world.bug}"
        "&bug_file_loc=https%3A%2F%2Fexample.com%2Fprint&version=unspecified")
    assert page.status_code == 200
    fields = dict(form_fields(page.text, "enter-bug"))
    assert (fields["summary"], fields["description"], fields["severity"], fields["priority"],
            fields["keywords"], fields["cc"], fields["depends_on"], fields["url"]) == (
        "Prints twice", "Steps: print once", "critical", "Highest", "crash", INSIDER,
        str(world.bug), "https://example.com/print")
    filed = submit(browser, "/post_bug.cgi", form_fields(page.text, "enter-bug"))
    bug_id = int(re.search(r"Bug (\d+)</span>", filed.text).group(1))
    bug = get_bug(services, bug_id)
    assert (bug["summary"], bug["severity"], bug["priority"], bug["keywords"], bug["cc"],
            bug["depends_on"], bug["url"]) == (
        "Prints twice", "critical", "Highest", ["crash"], [INSIDER], [world.bug],
        "https://example.com/print")


def offered_groups(page):
    """{group name: ticked} of the new-bug form's group boxes."""
    return {value: bool(checked) for value, checked in re.findall(
        r'<input type="checkbox" id="group-\d+" name="groups" value="([^"]+)"( checked)?>',
        page.text)}


def new_bug_id(result):
    assert "The bug has been filed." in result.text, text_of(result.text)
    return int(re.search(r"Bug (\d+)</span>", result.text).group(1))


def test_the_new_bug_form_offers_the_products_groups_as_bugzilla(app, world, services):
    """As Bugzilla 5.2's enter_bug.cgi: the product's active bug groups that
    are Shown or Default for the visitor (the member control for a member,
    else the other control), Default ones ticked; what the form posts is
    filed with Bug.create's rules, a forged group refused."""
    from bug_support import DEFAULT, NA, SHOWN, add_bug_group, control
    team = add_bug_group(services, "team", members=[INSIDER])
    control(services, team, DEFAULT, NA)
    partners = add_bug_group(services, "partners")
    control(services, partners, SHOWN, DEFAULT)
    offered = {who: offered_groups(signed_in(app, who).get("/enter_bug.cgi?product=TestProduct"))
               for who in (PLAIN, INSIDER, ADMIN)}
    assert offered == {PLAIN: {"partners": True},
                       INSIDER: {"partners": True, "team": True},
                       ADMIN: {"partners": False, "secret": False, "team": True}}
    # The address ticks more (enter_bug.cgi?groups=...), as the reference's.
    filled = signed_in(app, ADMIN).get("/enter_bug.cgi?product=TestProduct&groups=secret")
    assert offered_groups(filled) == {"partners": False, "secret": True, "team": True}
    # Filed as the form stands, then with every box unticked: a public bug.
    insider = signed_in(app, INSIDER)
    fields = form_fields(insider.get("/enter_bug.cgi?product=TestProduct").text, "enter-bug")
    assert dict(fields)["defined_groups"] == "1"
    ticked = new_bug_id(submit(insider, "/post_bug.cgi", fields, summary="Ticked"))
    public = new_bug_id(submit(insider, "/post_bug.cgi", fields, summary="Unticked",
                               groups=None))
    assert (get_bug(services, ticked)["groups"], get_bug(services, public)["groups"]) == (
        ["partners", "team"], [])
    # A plain user may not restrict a bug to a group the product keeps from
    # him: refused with Bugzilla's error, nothing filed, the form kept.
    plain = signed_in(app, PLAIN)
    fields = form_fields(plain.get("/enter_bug.cgi?product=TestProduct").text, "enter-bug")
    before = services.query("SELECT COUNT(*) FROM bugs")
    for forged in ("secret", "team", "no-such-group"):
        refused = submit(plain, "/post_bug.cgi", fields, summary="Forged", groups=forged)
        assert refused.status_code == 401, forged
        assert f"the group '{forged}', but that is not allowed" in text_of(refused.text)
        assert offered_groups(refused) == {"partners": False}
    assert services.query("SELECT COUNT(*) FROM bugs") == before


def test_a_new_bug_posted_without_its_groups_gets_the_products_defaults(app, world, services):
    """A post that does not say which groups (an old form, a script) is
    filed in the product's Default groups and its Mandatory ones, as
    POST /rest/bug without `groups`; the form names the Mandatory ones."""
    from bug_support import DEFAULT, MANDATORY, NA, add_bug_group, control
    from bugsvc.services import bug as bug_service
    team = add_bug_group(services, "team", members=[PLAIN])
    control(services, team, DEFAULT, NA)
    legal = add_bug_group(services, "legal")
    control(services, legal, MANDATORY, MANDATORY)
    plain = signed_in(app, PLAIN)
    page = plain.get("/enter_bug.cgi?product=TestProduct")
    assert offered_groups(page) == {"team": True}
    assert "Every new bug of TestProduct is also restricted to: legal (legal group)." in \
        text_of(page.text)
    fields = [(name, value) for name, value in form_fields(page.text, "enter-bug")
              if name not in ("groups", "defined_groups")]
    by_page = new_bug_id(submit(plain, "/post_bug.cgi", fields, summary="No groups said"))
    by_rest = services.call(bug_service.create, {
        "product": "TestProduct", "component": "TestComponent", "version": "unspecified",
        "summary": "Over REST", "op_sys": "Linux", "platform": "PC"}, as_user=PLAIN)["id"]
    # Every box unticked still leaves the Mandatory group.
    unticked = new_bug_id(submit(plain, "/post_bug.cgi", fields + [("defined_groups", "1")],
                                 summary="Unticked"))
    assert [get_bug(services, n)["groups"] for n in (by_page, by_rest, unticked)] == [
        ["legal", "team"], ["legal", "team"], ["legal"]]


def test_clone_this_bug_fills_the_form_from_the_bug(app, world, services):
    update_bug(services, world.bug, priority="High", cc={"add": [INSIDER]})
    browser = signed_in(app, PLAIN)
    shown = browser.get(f"/show_bug.cgi?id={world.bug}")
    assert f'href="/enter_bug.cgi?cloned_bug_id={world.bug}">Clone this bug</a>' in shown.text
    page = browser.get(f"/enter_bug.cgi?cloned_bug_id={world.bug}")
    fields = form_fields(page.text, "enter-bug")
    values = dict(fields)
    assert (values["product"], values["summary"], values["priority"], values["depends_on"],
            values["cloned_bug_id"]) == (
        "TestProduct", "Public crash on start", "High", str(world.bug), str(world.bug))
    assert values["description"] == (f"+++ This bug was initially created as a clone of Bug "
                                     f"#{world.bug} +++\n\nIt crashes when it starts.")
    assert values["cc"] == f"{ADMIN}, {INSIDER}"      # the reporter, then its CC list
    filed = submit(browser, "/post_bug.cgi", fields)
    clone = int(re.search(r"Bug (\d+)</span>", filed.text).group(1))
    assert get_bug(services, clone)["depends_on"] == [world.bug]
    assert get_bug(services, world.bug)["blocks"] == [clone]


def test_a_clone_keeps_the_groups_and_asks_the_requests_again(app, world, services):
    review = add_flag_type(services, "review")
    qa = add_flag_type(services, "qa")
    update_bug(services, world.secret, flags=[{"type_id": review, "status": "?",
                                               "requestee": ADMIN},
                                              {"type_id": qa, "status": "+"}])
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/enter_bug.cgi?cloned_bug_id={world.secret}")
    fields = form_fields(page.text, "enter-bug")
    values = dict(fields)
    # Its group ticked, its request (not the granted qa+) offered again of the same person.
    assert ("groups", "secret") in fields and values["defined_groups"] == "1"
    assert values[f"flag_type-{review}"] == "?" and values[f"requestee_type-{review}"] == ADMIN
    assert f"flag_type-{qa}" not in values
    filed = submit(browser, "/post_bug.cgi", fields)
    clone = int(re.search(r"Bug (\d+)</span>", filed.text).group(1))
    bug = get_bug(services, clone)
    assert bug["groups"] == ["secret"]
    assert [(f["name"], f["status"], f.get("requestee")) for f in bug["flags"]] == [
        ("review", "?", ADMIN)]
    # Unticking the group and declining the request files it open and without flags.
    filed = submit(browser, "/post_bug.cgi", fields, groups=None,
                   **{f"flag_type-{review}": "X"})
    clone = int(re.search(r"Bug (\d+)</span>", filed.text).group(1))
    assert (get_bug(services, clone)["groups"], get_bug(services, clone)["flags"]) == ([], [])
    # Someone who may not set the group is not offered it, and a forged one is refused.
    plain = signed_in(app, PLAIN)
    page = plain.get(f"/enter_bug.cgi?cloned_bug_id={world.bug}")
    assert 'name="groups"' not in page.text
    fields = form_fields(page.text, "enter-bug")
    refused = submit(plain, "/post_bug.cgi", fields, groups="secret", groups_shown="1")
    assert refused.status_code == 401 and "secret" in text_of(refused.text)
    assert services.query("SELECT COUNT(*) FROM bugs WHERE summary = ?",
                          ("Public crash on start",)) == [(1,)]


def test_a_clone_carries_a_private_description_to_insiders_only(app, world, services):
    private_first = file_bug(services, summary="Private start", description="Customer ACME",
                             comment_is_private=True)
    insider = signed_in(app, INSIDER).get(f"/enter_bug.cgi?cloned_bug_id={private_first}")
    assert "Customer ACME" in insider.text
    assert re.search(r'name="comment_is_private" value="1" checked', insider.text)
    plain = signed_in(app, PLAIN).get(f"/enter_bug.cgi?cloned_bug_id={private_first}")
    assert plain.status_code == 200 and "Customer ACME" not in plain.text


def test_a_bug_one_may_not_see_cannot_be_cloned(app, world, services):
    for who in (PLAIN, INSIDER):
        page = signed_in(app, who).get(f"/enter_bug.cgi?cloned_bug_id={world.secret}")
        assert page.status_code == 401
        assert "Secret hole" not in page.text
    admin = signed_in(app, ADMIN).get(f"/enter_bug.cgi?cloned_bug_id={world.secret}")
    assert "Secret hole in the login" in admin.text
    anonymous = Browser(app).get(f"/enter_bug.cgi?cloned_bug_id={world.bug}")
    assert anonymous.status_code == 401 and "Public crash" not in anonymous.text


# The bug form -------------------------------------------------------------------------------

def test_a_comment_and_a_status_change_through_the_form(app, world, services):
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    fields = form_fields(page.text)
    result = submit(browser, "/process_bug.cgi", fields, bug_status="RESOLVED",
                    resolution="FIXED", comment="Fixed in <script>1.2</script>")
    assert "Your changes have been saved." in result.text
    bug = get_bug(services, world.bug)
    assert (bug["status"], bug["resolution"]) == ("RESOLVED", "FIXED")
    assert "Fixed in &lt;script&gt;1.2&lt;/script&gt;" in result.text
    # Nothing else changed: unchanged fields are not sent.
    changed = services.query("SELECT field FROM bug_activity WHERE bug_id = ? ORDER BY id",
                             (world.bug,))
    assert changed == [("status",), ("resolution",)]


def test_only_the_legal_status_transitions_are_offered(app, world, services):
    editbugs_only_for_members(services)
    page = signed_in(app, PLAIN).get(f"/show_bug.cgi?id={world.bug}")
    statuses = re.search(r'<select id="bug_status"[^>]*>(.*?)</select>', page.text, re.S)
    assert statuses is not None
    assert re.findall(r"<option[^>]*>([^<]+)</option>", statuses.group(1)) == ["CONFIRMED"]
    assert 'name="summary"' not in page.text      # only comments for this visitor
    admin_page = signed_in(app, ADMIN).get(f"/show_bug.cgi?id={world.bug}")
    offered = re.search(r'<select id="bug_status"[^>]*>(.*?)</select>', admin_page.text, re.S)
    assert re.findall(r"<option[^>]*>([^<]+)</option>", offered.group(1)) == [
        "CONFIRMED", "IN_PROGRESS", "RESOLVED"]


def test_a_refused_change_is_shown_and_keeps_the_comment(app, world, services):
    browser = signed_in(app, ADMIN)
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    result = submit(browser, "/process_bug.cgi", fields, bug_status="RESOLVED",
                    resolution="DUPLICATE", comment="My words")
    assert result.status_code == 400 and "duplicate" in text_of(result.text).lower()
    assert "My words</textarea>" in result.text
    assert get_bug(services, world.bug)["status"] == "CONFIRMED"


def test_fields_cc_and_keywords_change_through_the_form(app, world, services):
    from bug_support import add_keyword
    add_keyword(services, "regression")
    browser = signed_in(app, ADMIN)
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    submit(browser, "/process_bug.cgi", fields, summary="A better summary", priority="High",
           keywords="regression", cc_add=f"{PLAIN}, {INSIDER}", addselfcc="1")
    bug = get_bug(services, world.bug)
    assert (bug["summary"], bug["priority"], bug["keywords"]) == (
        "A better summary", "High", ["regression"])
    assert sorted(bug["cc"]) == sorted([ADMIN, PLAIN, INSIDER])
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    submit(browser, "/process_bug.cgi", fields, cc_remove=[PLAIN], keywords="")
    bug = get_bug(services, world.bug)
    assert sorted(bug["cc"]) == sorted([ADMIN, INSIDER]) and bug["keywords"] == []


def test_flags_are_requested_and_granted(app, world, services):
    add_flag_type(services, "review")
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    type_id = re.search(r'name="flag_type-(\d+)"', page.text).group(1)
    submit(browser, "/process_bug.cgi", form_fields(page.text),
           **{f"flag_type-{type_id}": "?", f"requestee_type-{type_id}": PLAIN})
    flag = get_bug(services, world.bug)["flags"][0]
    assert (flag["name"], flag["status"], flag["requestee"]) == ("review", "?", PLAIN)
    plain = signed_in(app, PLAIN)
    home = plain.get("/")
    assert "Flags requested of me" in home.text and "Public crash on start" in home.text
    page = plain.get(f"/show_bug.cgi?id={world.bug}")
    submit(plain, "/process_bug.cgi", form_fields(page.text), **{f"flag-{flag['id']}": "+"})
    assert get_bug(services, world.bug)["flags"][0]["status"] == "+"


def test_an_insider_makes_a_comment_private_and_public(app, world, services):
    browser = signed_in(app, INSIDER)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    public_id = services.query("SELECT id FROM comments WHERE body = 'A public note'")[0][0]
    fields = form_fields(page.text)
    checked = [value for name, value in fields if name == "comment_private"]
    submit(browser, "/process_bug.cgi", fields,
           comment_private=checked + [str(public_id)])
    assert services.query("SELECT is_private FROM comments WHERE id = ?", (public_id,)) == [(1,)]
    plain = signed_in(app, PLAIN).get(f"/show_bug.cgi?id={world.bug}")
    assert "A public note" not in plain.text
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    submit(browser, "/process_bug.cgi", fields,
           comment_private=[v for n, v in fields if n == "comment_private"
                            and v != str(public_id)])
    assert services.query("SELECT is_private FROM comments WHERE id = ?", (public_id,)) == [(0,)]


def test_a_private_comment_by_an_insider_stays_hidden_from_others(app, world, services):
    browser = signed_in(app, INSIDER)
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    submit(browser, "/process_bug.cgi", fields, comment="Internal only", comment_is_private="1")
    assert services.query("SELECT is_private FROM comments WHERE body = 'Internal only'") == [
        (1,)]
    assert "Internal only" not in signed_in(app, PLAIN).get(f"/show_bug.cgi?id={world.bug}").text
    assert "Internal only" not in Browser(app).get(f"/show_bug.cgi?id={world.bug}").text


def test_a_plain_user_cannot_make_a_comment_private_by_forging_the_form(app, world, services):
    browser = signed_in(app, PLAIN)
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    public_id = services.query("SELECT id FROM comments WHERE body = 'A public note'")[0][0]
    submit(browser, "/process_bug.cgi", fields, comment="mine", comment_is_private="1",
           comment_private_shown=str(public_id), comment_private=str(public_id))
    assert services.query("SELECT is_private FROM comments WHERE body = 'mine'") == [(0,)]
    assert services.query("SELECT is_private FROM comments WHERE id = ?", (public_id,)) == [(0,)]


def test_a_bug_is_restricted_to_a_group_from_its_page(app, world, services):
    from bug_support import add_to_group
    add_to_group(services, PLAIN, "secret")
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    assert 'name="groups" value="secret"' in page.text
    submit(browser, "/process_bug.cgi", form_fields(page.text), groups=["secret"])
    assert get_bug(services, world.bug)["groups"] == ["secret"]
    assert signed_in(app, INSIDER).get(f"/show_bug.cgi?id={world.bug}").status_code == 401


# Mid-air collisions -------------------------------------------------------------------------

def test_a_change_based_on_a_stale_page_is_shown_not_applied(app, world, services):
    browser = signed_in(app, PLAIN)
    fields = form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text)
    # Someone else changes the bug and comments while the page is open.
    update_bug(services, world.bug, priority="Highest", comment={"body": "Meanwhile, a note"})
    result = submit(browser, "/process_bug.cgi", fields, summary="My summary",
                    comment="My comment")
    assert result.status_code == 409
    text = text_of(result.text)
    assert "Mid-air collision" in text and "Your changes have not been saved" in text
    assert "Highest" in text and "Meanwhile, a note" in text
    assert "My summary" in text and "My comment" in result.text
    bug = get_bug(services, world.bug)
    assert bug["summary"] == "Public crash on start" and bug["priority"] == "Highest"
    assert services.query("SELECT COUNT(*) FROM comments WHERE body = 'My comment'") == [(0,)]
    # The visitor chooses to submit anyway: its own changes only, not the old priority.
    forced = form_fields(result.text, form_id="midair")
    done = submit(browser, "/process_bug.cgi", forced)
    assert "Your changes have been saved." in done.text
    bug = get_bug(services, world.bug)
    assert (bug["summary"], bug["priority"]) == ("My summary", "Highest")
    assert services.query("SELECT COUNT(*) FROM comments WHERE body = 'My comment'") == [(1,)]


def test_a_form_without_changes_changes_nothing(app, world, services):
    browser = signed_in(app, ADMIN)
    before = services.table("bugs")
    submit(browser, "/process_bug.cgi",
           form_fields(browser.get(f"/show_bug.cgi?id={world.bug}").text))
    assert services.table("bugs") == before


# Attachments ------------------------------------------------------------------------------

def test_a_file_is_attached_and_its_details_changed(app, world, services):
    browser = signed_in(app, ADMIN)
    browser.get(f"/attachment.cgi?bugid={world.bug}&action=enter")
    result = browser.post("/attachment.cgi", {"action": "insert", "bugid": world.bug,
                                              "attachment_description": "A fix",
                                              "ispatch": "1", "obsolete": world.public_file},
                          files={"data": ("fix.diff", "application/octet-stream",
                                          b"--- a\n+++ b\n")})
    assert "The file has been attached." in result.text
    new_id, is_patch, content_type = services.query(
        "SELECT id, is_patch, content_type FROM attachments WHERE summary = 'A fix'")[0]
    assert (is_patch, content_type) == (1, "text/plain")
    assert services.query("SELECT is_obsolete FROM attachments WHERE id = ?",
                          (world.public_file,)) == [(1,)]
    page = browser.get(f"/attachment.cgi?id={new_id}&action=edit")
    fields = form_fields(page.text, form_id="attachment-form")
    submit(browser, "/attachment.cgi", fields, summary="A better fix", comment="Reviewed")
    assert services.query("SELECT summary FROM attachments WHERE id = ?", (new_id,)) == [
        ("A better fix",)]


def test_attachment_flags_are_requested_and_granted_on_its_page(app, world, services):
    add_flag_type(services, "review", target="a")
    admin = signed_in(app, ADMIN)
    page = admin.get(f"/attachment.cgi?id={world.public_file}&action=edit")
    type_id = re.search(r'name="flag_type-(\d+)"', page.text).group(1)
    submit(admin, "/attachment.cgi", form_fields(page.text, form_id="attachment-form"),
           **{f"flag_type-{type_id}": "?", f"requestee_type-{type_id}": PLAIN})
    ((flag_id, status, requestee),) = services.query(
        "SELECT f.id, f.status, u.login FROM flags f JOIN users u ON u.id = f.requestee_id"
        " WHERE f.attachment_id = ?", (world.public_file,))
    assert (status, requestee) == ("?", PLAIN)
    plain = signed_in(app, PLAIN)
    page = plain.get(f"/attachment.cgi?id={world.public_file}&action=edit")
    submit(plain, "/attachment.cgi", form_fields(page.text, form_id="attachment-form"),
           **{f"flag-{flag_id}": "+"})
    assert services.query("SELECT status FROM flags WHERE id = ?", (flag_id,)) == [("+",)]


def test_attaching_without_a_file_is_refused(app, world):
    browser = signed_in(app, ADMIN)
    browser.get(f"/attachment.cgi?bugid={world.bug}&action=enter")
    result = browser.post("/attachment.cgi", {"action": "insert", "bugid": world.bug})
    assert result.status_code == 400 and "Choose a file" in result.text


def test_flags_without_a_requestee_show_on_every_page(app, world, services):
    import base64

    from bugsvc.services import attachment
    add_flag_type(services, "approved", is_requesteeble=False)
    add_flag_type(services, "reviewed", target="a")
    update_bug(services, world.bug, flags=[{"name": "approved", "status": "+"}])
    services.call(attachment.create, {
        "ids": [world.bug], "data": base64.b64encode(b"x").decode(), "file_name": "p.diff",
        "summary": "Patch", "is_patch": True, "flags": [{"name": "reviewed", "status": "-"}]},
        as_user=ADMIN)
    browser = signed_in(app, ADMIN)
    for path in (f"/show_bug.cgi?id={world.bug}", "/",
                 "/buglist.cgi?product=TestProduct&columnlist=flagtypes.name"):
        page = browser.get(path)
        assert page.status_code == 200
    assert "approved+" in text_of(browser.get(
        "/buglist.cgi?product=TestProduct&columnlist=flagtypes.name").text)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    assert "reviewed-" in text_of(page.text)


def test_custom_fields_are_shown_and_offered_as_their_type_says(app, services):
    from bug_support import add_custom_field
    for name, kind, values in (("cf_pick", 2, ("red", "blue")), ("cf_many", 3, ("a", "b")),
                               ("cf_notes", 4, ()), ("cf_other", 6, ()), ("cf_links", 7, ())):
        add_custom_field(services, name, kind, values)
    other = file_bug(services, summary="The other bug")
    bug_id = file_bug(services, cf_pick="red", cf_many=["a", "b"], cf_notes="some notes",
                      cf_other=other, cf_links=["https://bugs.example.org/show_bug.cgi?id=9"])
    seen = Browser(app).get(f"/show_bug.cgi?id={bug_id}").text
    assert f'<a href="/show_bug.cgi?id={other}">bug {other}</a>' in seen
    assert "https://bugs.example.org/show_bug.cgi?id=9" in text_of(seen)
    assert "show_bug.cgi?id=https" not in seen and "a, b" in text_of(seen)
    editing = signed_in(app, ADMIN).get(f"/show_bug.cgi?id={bug_id}").text
    assert re.search(r'<select id="cf_pick" name="cf_pick">', editing)
    assert re.search(r'<select id="cf_many" name="cf_many" multiple', editing)
    assert '<textarea id="cf_notes" name="cf_notes"' in editing
    assert re.search(r'<input id="cf_other" name="cf_other" type="text"[^>]*value="'
                     f'{other}"', editing)


# Moving a bug to another product ------------------------------------------------------------

def _other_product(services, **kwargs):
    from catalog_support import add_product
    return add_product(services, "Gadgets", components=("Casing", "Firmware"),
                       versions=("2.0", "unspecified"), **kwargs)


def test_moving_a_bug_asks_for_the_new_products_component_and_keeps_the_rest(
        app, world, services):
    _other_product(services)
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    verify = submit(browser, "/process_bug.cgi", form_fields(page.text), product="Gadgets",
                    priority="Highest", comment="Belongs to the gadgets")
    assert verify.status_code == 200
    assert "Verify new product details" in verify.text
    assert get_bug(services, world.bug)["product"] == "TestProduct"     # nothing yet
    fields = form_fields(verify.text, "verify-product")
    assert ("version", "unspecified") in fields        # the bug's version exists there
    assert ("component", "") in fields                 # its component does not: choose
    moved = submit(browser, "/process_bug.cgi", fields, component="Firmware")
    assert moved.status_code == 200
    bug = get_bug(services, world.bug)
    assert (bug["product"], bug["component"], bug["version"], bug["priority"]) == (
        "Gadgets", "Firmware", "unspecified", "Highest")
    from bug_support import comments_of
    assert comments_of(services, world.bug)[-1][2] == "Belongs to the gadgets"


def test_a_move_without_a_component_is_refused_and_changes_nothing(app, world, services):
    _other_product(services)
    browser = signed_in(app, ADMIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    verify = submit(browser, "/process_bug.cgi", form_fields(page.text), product="Gadgets",
                    priority="Highest")
    refused = submit(browser, "/process_bug.cgi", form_fields(verify.text, "verify-product"))
    assert refused.status_code == 404           # the update's 105, on the bug's page
    assert "component" in text_of(refused.text).split("Details")[0].lower()
    bug = get_bug(services, world.bug)
    assert (bug["product"], bug["priority"]) == ("TestProduct", "---")


def test_the_new_products_groups_are_offered_and_its_mandatory_ones_kept(app, world, services):
    from bug_support import MANDATORY, NA, SHOWN, add_bug_group, control
    _other_product(services)
    hidden = add_bug_group(services, "hardware-team", members=[PLAIN])
    control(services, hidden, MANDATORY, MANDATORY, product="Gadgets")
    optional = add_bug_group(services, "embargo", members=[PLAIN])
    control(services, optional, SHOWN, NA, product="Gadgets")
    control(services, world.secret_group, NA, NA, product="Gadgets")
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    verify = submit(browser, "/process_bug.cgi", form_fields(page.text), product="Gadgets")
    assert re.search(r'name="groups" value="hardware-team" checked disabled', verify.text)
    assert re.search(r'name="groups" value="embargo">', verify.text)
    assert 'value="secret"' not in verify.text
    submit(browser, "/process_bug.cgi", form_fields(verify.text, "verify-product"),
           component="Casing", groups=["embargo"])
    assert sorted(get_bug(services, world.bug)["groups"]) == ["embargo", "hardware-team"]


def test_a_move_to_a_product_the_visitor_may_not_file_in_is_refused(app, world, services):
    from bug_support import MANDATORY, add_bug_group
    gadgets = _other_product(services)
    closed = add_bug_group(services, "gadget-makers", members=[])
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 1, ?, ?, 0)",
                     (closed, gadgets["id"], MANDATORY, MANDATORY))
    browser = signed_in(app, PLAIN)
    page = browser.get(f"/show_bug.cgi?id={world.bug}")
    refused = submit(browser, "/process_bug.cgi", form_fields(page.text), product="Gadgets")
    assert refused.status_code == 401            # the API's 106
    assert "access rights to enter bugs in it" in text_of(refused.text)
    assert "Verify new product" not in refused.text
    assert get_bug(services, world.bug)["product"] == "TestProduct"
    # An anonymous visitor's post never reaches the page.
    anonymous = Browser(app)
    assert anonymous.post("/process_bug.cgi", {"id": world.bug, "product": "Gadgets"},
                          token=False).status_code == 403
