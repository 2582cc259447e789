"""Changing several bugs at once (buglist.cgi?...&tweak=1 and process_bug.cgi
with id_N boxes, Bugzilla's control names): each bug checked by the rules
of its own page; those that may change do, one page lists what changed and
what was refused and why, one mail event per changed bug."""

import pytest

from accounts import ADMIN
from bug_support import add_bug_group, add_keyword, editbugs_only_for_members, file_bug, get_bug
from page_support import INSIDER, PLAIN, Browser, World, signed_in, text_of


@pytest.fixture
def world(services):
    return World(services)


def events(services, bug_id):
    return services.query("SELECT COUNT(*) FROM outbox_events WHERE bug_id = ?", (bug_id,))[0][0]


def test_the_tweak_list_offers_a_box_per_bug_and_bugzillas_controls(app, world, services):
    browser = signed_in(app, PLAIN)
    page = browser.get("/buglist.cgi?product=TestProduct&order=bug_id")
    assert "Change several bugs at once" in page.text
    tweak = browser.get("/buglist.cgi?product=TestProduct&order=bug_id&tweak=1")
    assert f'name="id_{world.bug}"' in tweak.text
    assert f'name="id_{world.secret}"' not in tweak.text        # never listed to them
    for name in ("dontchange", "bug_status", "resolution", "assigned_to", "masscc", "ccaction",
                 "priority", "bug_severity", "keywords", "keywordaction", "comment"):
        assert f'name="{name}"' in tweak.text, name
    assert Browser(app).get("/buglist.cgi?product=TestProduct&tweak=1").status_code == 401


def test_several_bugs_change_and_the_refused_ones_are_listed_with_the_reason(
        app, world, services):
    add_keyword(services, "regression")
    other = file_bug(services, summary="Another public bug")
    locked_group = add_bug_group(services, "lockers", members=[])
    # A product only members of lockers may edit bugs of.
    from catalog_support import add_product
    locked = add_product(services, "Locked", components=("Doors",),
                         versions=("unspecified",))
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 0, 1, 1, 1)",
                     (locked_group, locked["id"]))
    stuck = file_bug(services, product="Locked", component="Doors", summary="Door stuck")
    before = {bug_id: events(services, bug_id) for bug_id in (world.bug, other, stuck)}
    browser = signed_in(app, PLAIN)
    browser.get("/buglist.cgi?bug_status=__open__&tweak=1")
    result = browser.post("/process_bug.cgi", {
        f"id_{world.bug}": "1", f"id_{other}": "1", f"id_{stuck}": "1",
        f"id_{world.secret}": "1", "dontchange": "--do_not_change--",
        "bug_status": "--do_not_change--", "resolution": "--do_not_change--",
        "priority": "High", "bug_severity": "--do_not_change--", "assigned_to": "",
        "masscc": INSIDER, "ccaction": "add", "keywords": "regression",
        "keywordaction": "add", "comment": "Triaged in bulk"})
    assert result.status_code == 200
    text = text_of(result.text)
    assert "2 bugs changed, 2 refused." in text
    for bug_id in (world.bug, other):
        bug = get_bug(services, bug_id)
        assert (bug["priority"], bug["keywords"], INSIDER in bug["cc"]) == (
            "High", ["regression"], True)
        assert events(services, bug_id) == before[bug_id] + 1          # one mail each
    assert get_bug(services, stuck)["priority"] == "---"
    assert events(services, stuck) == before[stuck]
    refused = result.text.split('id="h-refused"', 1)[1]
    assert str(stuck) in refused and str(world.secret) in refused
    assert "Secret hole" not in result.text                        # never its summary


def test_closing_several_bugs_follows_each_bugs_workflow(app, world, services):
    other = file_bug(services, summary="Second")
    browser = signed_in(app, ADMIN)
    browser.get("/buglist.cgi?bug_status=__open__&tweak=1")
    result = browser.post("/process_bug.cgi", {
        f"id_{world.bug}": "1", f"id_{other}": "1", "dontchange": "--do_not_change--",
        "bug_status": "RESOLVED", "resolution": "FIXED"})
    assert "2 bugs changed, 0 refused." in text_of(result.text)
    assert [get_bug(services, n)["resolution"] for n in (world.bug, other)] == ["FIXED", "FIXED"]
    # Closing without a resolution is refused for each bug, and changes none.
    third = file_bug(services, summary="Third")
    refused = browser.post("/process_bug.cgi", {
        f"id_{third}": "1", "dontchange": "--do_not_change--", "bug_status": "RESOLVED",
        "resolution": "--do_not_change--"})
    assert refused.status_code == 400 and "0 bugs changed, 1 refused." in text_of(refused.text)
    assert get_bug(services, third)["status"] == "CONFIRMED"


def test_a_plain_user_without_editbugs_changes_only_what_the_bugs_page_allows(
        app, world, services):
    editbugs_only_for_members(services)
    mine = file_bug(services, as_user=PLAIN, summary="Filed by Pat")
    browser = signed_in(app, PLAIN)
    browser.get("/buglist.cgi?bug_status=__open__&tweak=1")
    result = browser.post("/process_bug.cgi", {
        f"id_{world.bug}": "1", f"id_{mine}": "1", "dontchange": "--do_not_change--",
        "priority": "Highest"})
    text = text_of(result.text)
    assert "1 bug changed, 1 refused." in text
    assert get_bug(services, mine)["priority"] == "Highest"
    assert get_bug(services, world.bug)["priority"] == "---"


def test_the_post_needs_a_sign_in_a_token_a_bug_and_a_change(app, world, services):
    anonymous = Browser(app)
    assert anonymous.post("/process_bug.cgi", {f"id_{world.bug}": "1", "priority": "High"},
                          token=False).status_code == 403
    browser = signed_in(app, INSIDER)
    assert browser.post("/process_bug.cgi", {f"id_{world.bug}": "1", "priority": "High"},
                        token=False).status_code == 403
    browser.get("/buglist.cgi?bug_status=__open__&tweak=1")
    nothing = browser.post("/process_bug.cgi", {f"id_{world.bug}": "1",
                                                "dontchange": "--do_not_change--",
                                                "priority": "--do_not_change--"})
    assert nothing.status_code == 400 and "no change" in text_of(nothing.text)
    too_many = {f"id_{n}": "1" for n in range(1, 502)}
    browser.get("/buglist.cgi?bug_status=__open__&tweak=1")
    refused = browser.post("/process_bug.cgi", dict(too_many, priority="High"))
    assert refused.status_code == 400 and "At most 500 bugs" in text_of(refused.text)
    assert get_bug(services, world.bug)["priority"] == "---"


def test_groups_are_added_and_removed_with_bugzillas_bit_controls(app, world, services):
    other = file_bug(services, summary="Another public bug")
    secret = world.secret_group
    admin = signed_in(app, ADMIN)
    tweak = admin.get("/buglist.cgi?product=TestProduct&order=bug_id&tweak=1")
    assert f'name="bit-{secret}"' in tweak.text
    # A plain user may set no group: none is offered, and a forged control changes nothing.
    plain = signed_in(app, PLAIN)
    tweak = plain.get("/buglist.cgi?product=TestProduct&order=bug_id&tweak=1")
    assert 'name="bit-' not in tweak.text
    refused = plain.post("/process_bug.cgi", {f"id_{world.bug}": "1", f"bit-{secret}": "1",
                                              "comment": "sneaking in"})
    assert refused.status_code == 400
    assert "may not change the group" in text_of(refused.text)
    assert get_bug(services, world.bug)["groups"] == []
    # The administrator adds both bugs to the group, then takes one out again.
    admin.get("/buglist.cgi?product=TestProduct&order=bug_id&tweak=1")
    result = admin.post("/process_bug.cgi", {f"id_{world.bug}": "1", f"id_{other}": "1",
                                             f"bit-{secret}": "1"})
    assert result.status_code == 200 and "2 bugs changed, 0 refused." in text_of(result.text)
    assert [get_bug(services, n)["groups"] for n in (world.bug, other)] == [["secret"]] * 2
    admin.get("/buglist.cgi?product=TestProduct&order=bug_id&tweak=1")
    admin.post("/process_bug.cgi", {f"id_{other}": "1", f"bit-{secret}": "0"})
    assert [get_bug(services, n)["groups"] for n in (world.bug, other)] == [["secret"], []]
    # -1 leaves the groups as they are.
    admin.get("/buglist.cgi?product=TestProduct&order=bug_id&tweak=1")
    admin.post("/process_bug.cgi", {f"id_{world.bug}": "1", f"id_{other}": "1",
                                    f"bit-{secret}": "-1", "priority": "High"})
    assert [get_bug(services, n)["groups"] for n in (world.bug, other)] == [["secret"], []]
    assert [get_bug(services, n)["priority"] for n in (world.bug, other)] == ["High"] * 2
