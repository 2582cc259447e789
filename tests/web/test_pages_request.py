"""The request queue (request.cgi, Bug.request_queue): flags requested of
me, by me, or of anyone, filtered by flag type, product, component,
requester, requestee and status, grouped as Bugzilla groups them; a flag
on a bug or attachment the visitor may not see is never listed."""

import re

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import add_flag_type, file_bug, update_bug
from bugsvc.services import attachment as attachment_service, bug as bug_service
from page_support import INSIDER, PASSWORDS, PLAIN, Browser, World, text_of


@pytest.fixture
def queue(services):
    """review? of PLAIN by ADMIN on the public bug; review? of INSIDER by
    PLAIN on another bug; qa+ by ADMIN; review? of ADMIN on the secret bug;
    approval? of ADMIN on the private attachment."""
    world = World(services)
    review = add_flag_type(services, "review")
    qa = add_flag_type(services, "qa", is_requesteeble=False)
    approval = add_flag_type(services, "approval", target="a")
    other = file_bug(services, summary="Another bug")
    update_bug(services, world.bug, flags=[{"type_id": review, "status": "?",
                                            "requestee": PLAIN}])
    update_bug(services, other, as_user=PLAIN, flags=[{"type_id": review, "status": "?",
                                                       "requestee": INSIDER}])
    update_bug(services, other, flags=[{"type_id": qa, "status": "+"}])
    update_bug(services, world.secret, flags=[{"type_id": review, "status": "?",
                                               "requestee": ADMIN}])
    services.call(attachment_service.update, {
        "ids": [world.private_file], "flags": [{"type_id": approval, "status": "?",
                                                "requestee": ADMIN}]}, as_user=INSIDER)
    return dict(world=world, other=other)


def as_(app, who):
    browser = Browser(app)
    browser.login(who, ADMIN_PASSWORD if who == ADMIN else PASSWORDS[who])
    return browser


def bugs_listed(page):
    return sorted(int(n) for n in re.findall(r'<td><a href="/show_bug\.cgi\?id=(\d+)">', page.text))


def test_requests_of_me_by_me_and_of_anyone(app, queue):
    world, other = queue["world"], queue["other"]
    browser = as_(app, PLAIN)
    mine = browser.get(f"/request.cgi?action=queue&requester={PLAIN}&requestee={PLAIN}"
                       "&do_union=1&group=type")
    assert bugs_listed(mine) == sorted([world.bug, other])
    of_me = browser.get(f"/request.cgi?action=queue&requestee={PLAIN}")
    assert bugs_listed(of_me) == [world.bug]
    by_me = browser.get(f"/request.cgi?action=queue&requester={PLAIN}")
    assert bugs_listed(by_me) == [other]
    anyone = browser.get("/request.cgi?action=queue")
    assert bugs_listed(anyone) == sorted([world.bug, other])
    granted = browser.get("/request.cgi?action=queue&status=%2B")
    assert bugs_listed(granted) == [other] and "qa+" in granted.text


def test_hidden_bugs_and_private_attachments_stay_out(app, queue, services):
    world = queue["world"]
    other = queue["other"]
    for who in (PLAIN, INSIDER, ADMIN):
        anyone = as_(app, who).get("/request.cgi?action=queue")
        expected = [world.bug, other] + ([world.bug] if who != PLAIN else []) + (
            [world.secret] if who == ADMIN else [])
        assert bugs_listed(anyone) == sorted(expected), who
        assert ("File contract.txt" in anyone.text) == (who != PLAIN)
        assert ("Secret hole" in anyone.text) == (who == ADMIN)
    answer = services.call(bug_service.request_queue, {"requestee": PLAIN}, as_user=PLAIN)
    assert [request["bug_id"] for request in answer["requests"]] == [world.bug]


def test_filters_and_grouping(app, queue):
    world, other = queue["world"], queue["other"]
    browser = as_(app, ADMIN)
    by_type = browser.get("/request.cgi?action=queue&type=review&status=all&group=type")
    assert "Flag: review" in text_of(by_type.text) and "Flag: qa" not in text_of(by_type.text)
    by_requestee = browser.get("/request.cgi?action=queue&group=requestee")
    headings = re.findall(r"<h2 id=\"g-\d+\">([^<]+)</h2>", by_requestee.text)
    assert headings == [f"Requestee: {ADMIN}", f"Requestee: {INSIDER}", f"Requestee: {PLAIN}"]
    by_product = browser.get("/request.cgi?action=queue&group=category&product=TestProduct"
                             "&component=TestComponent")
    assert "Product: Component: TestProduct: TestComponent" in text_of(by_product.text)
    nothing = browser.get("/request.cgi?action=queue&product=NoSuchProduct")
    assert "No requests." in text_of(nothing.text)
    both = browser.get(f"/request.cgi?action=queue&requester={PLAIN}&requestee={INSIDER}")
    assert bugs_listed(both) == [other]
    assert world.bug not in bugs_listed(both)


def test_the_queue_needs_a_sign_in_and_a_known_status(app, queue, services):
    assert Browser(app).get("/request.cgi?action=queue").status_code == 401
    page = as_(app, PLAIN).get("/request.cgi?action=queue&status=x")
    assert page.status_code == 400 and "Unknown flag status" in text_of(page.text)
    form = as_(app, PLAIN).get("/request.cgi")
    assert form.status_code == 200 and 'name="requestee"' in form.text
    assert bugs_listed(form) == []


def test_the_queue_over_rest(client, queue, services):
    key = services.api_key(PLAIN)
    answer = client.simulate_get("/rest/request_queue",
                                 params={"requestee": PLAIN, "Bugzilla_api_key": key})
    assert [r["bug_id"] for r in answer.json["requests"]] == [queue["world"].bug]
    assert client.simulate_get("/rest/request_queue").json["code"] == 410


def test_the_flag_type_menu_and_requests_asked_of_nobody(app, queue, services):
    world, other = queue["world"], queue["other"]
    add_flag_type(services, "unused")                  # no flag has it: not offered
    nobody = file_bug(services, summary="Anyone may review")
    review = services.query("SELECT id FROM flag_types WHERE name = 'review'")[0][0]
    for bug_id in (nobody, world.secret):
        update_bug(services, bug_id, flags=[{"type_id": review, "status": "?"}])
    browser = as_(app, PLAIN)
    form = browser.get("/request.cgi")
    menu = re.search(r'<select id="type" name="type">(.*?)</select>', form.text).group(1)
    assert re.findall(r"<option[^>]*>([^<]+)</option>", menu) == [
        "(all)", "approval", "qa", "review"]
    # requestee=- : the flags asked of nobody in particular (Bugzilla's request.cgi).
    asked_of_nobody = browser.get("/request.cgi?action=queue&requestee=-")
    assert bugs_listed(asked_of_nobody) == [nobody]
    with_granted = browser.get("/request.cgi?action=queue&requestee=-&status=all")
    assert bugs_listed(with_granted) == sorted([nobody, other])
    fulfilled = browser.get("/request.cgi?action=queue&status=%2B-&type=qa")
    assert bugs_listed(fulfilled) == [other]
    chosen = browser.get("/request.cgi?action=queue&type=review")
    assert "<option selected>review</option>" in chosen.text
    # The restricted bug's request stays out for someone who may not see it.
    assert bugs_listed(as_(app, ADMIN).get("/request.cgi?action=queue&requestee=-")) == sorted(
        [nobody, world.secret])
