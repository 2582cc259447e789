"""The sanity check (sanitycheck.cgi, SanityCheck.run/repair): the checks
only read; members of editcomponents run them, members of admin repair what
they find (one transaction each, audited); a plain user and a visitor are
refused."""

import pytest

from accounts import ADMIN, ADMIN_PASSWORD
from bug_support import add_to_group, file_bug
from bugsvc.errors import ServiceError
from bugsvc.services import sanity_check
from page_support import Browser, text_of


PLAIN, PLAIN_PASSWORD = "plain@example.com", "plain-password-1"


def findings(services, as_user=ADMIN):
    answer = services.call(sanity_check.run, {}, as_user=as_user, write=False)
    return {check["name"]: check for check in answer["checks"]}


def break_things(services):
    """A group whose members by regexp are stale (made behind bugsvc's back,
    as an import or a hand edit would) and a bug whose priority is not a
    value of the field; returns the bug's id."""
    file_bug(services)
    other = file_bug(services)
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO groups (name, description, user_regexp) VALUES"
                     " ('everyone', 'All', '.*')")
        conn.execute("UPDATE bugs SET priority = 'P9' WHERE id = ?", (other,))
    return other


def test_the_checks_find_and_the_repairs_fix_only_what_was_found(services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    assert all(check["count"] == 0 for check in findings(services).values())
    other = break_things(services)
    before = services.query("SELECT COUNT(*) FROM audit_log")
    found = findings(services)
    assert found["regexp_groups"]["count"] == 1 and found["regexp_groups"]["repairable"]
    assert found["unknown_values"]["samples"] == [other]
    assert not found["unknown_values"]["repairable"]
    assert services.query("SELECT COUNT(*) FROM audit_log") == before     # reading changes nothing
    answer = services.call(sanity_check.repair, {"check": "regexp_groups"}, as_user=ADMIN)
    assert answer == {"check": "regexp_groups", "repaired": 1}
    found = findings(services)
    assert found["regexp_groups"]["count"] == 0 and found["unknown_values"]["count"] == 1
    assert services.query("SELECT COUNT(*) FROM user_groups ug JOIN groups g"
                          " ON g.id = ug.group_id WHERE g.name = 'everyone'") == [(2,)]
    assert services.query("SELECT class, field, added FROM audit_log ORDER BY id DESC"
                          " LIMIT 1") == [("Bugzilla::SanityCheck", "regexp_groups", "1")]


def test_parked_mail_is_queued_again(services):
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO outbox_messages (channel, kind, address, data, state,"
                     " next_attempt_at, created_at) VALUES ('mail', 'bug', 'x@example.com',"
                     " '{}', 'parked', '2026-01-01 00:00:00.000000', '2026-01-01 00:00:00')")
    assert findings(services)["parked_mail"]["count"] == 1
    services.call(sanity_check.repair, {"check": "parked_mail"}, as_user=ADMIN)
    assert services.query("SELECT state FROM outbox_messages") == [("pending",)]


def test_who_may_run_and_repair(services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    for function, params, who, code in [
            (sanity_check.run, {}, None, 410), (sanity_check.run, {}, PLAIN, 304),
            (sanity_check.repair, {"check": "regexp_groups"}, PLAIN, 304),
            (sanity_check.repair, {"check": "unknown_values"}, ADMIN, 51),
            (sanity_check.repair, {"check": "nope"}, ADMIN, 51)]:
        with pytest.raises(ServiceError) as caught:
            services.call(function, params, as_user=who)
        assert caught.value.code == code
    add_to_group(services, PLAIN, "editcomponents")
    assert findings(services, as_user=PLAIN)["regexp_groups"]["count"] == 0


def test_the_page_runs_the_checks_and_repairs_for_admins(app, services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    break_things(services)
    admin = Browser(app)
    admin.login(ADMIN, ADMIN_PASSWORD)
    page = admin.get("/sanitycheck.cgi")
    assert page.status_code == 200
    assert 'aria-label="Repair: Groups whose members by regular expression are out of ' \
           'date"' in page.text
    assert admin.post("/sanitycheck.cgi", {"action": "repair", "check": "regexp_groups"},
                      token=False).status_code == 403
    assert findings(services)["regexp_groups"]["count"] == 1
    # A member of editcomponents reads the checks but gets no repair button.
    add_to_group(services, PLAIN, "editcomponents")
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get("/sanitycheck.cgi")
    assert page.status_code == 200 and "Repair" not in page.text.replace("may repair", "")
    assert plain.post("/sanitycheck.cgi", {"action": "repair",
                                           "check": "regexp_groups"}).status_code == 401
    assert findings(services)["regexp_groups"]["count"] == 1
    admin.get("/sanitycheck.cgi")
    page = admin.post("/sanitycheck.cgi", {"action": "repair", "check": "regexp_groups"})
    assert "Repaired 1 for the check regexp_groups" in text_of(page.text)
    assert findings(services)["regexp_groups"]["count"] == 0


def test_plain_users_and_visitors_are_refused(app, services):
    services.add_user(PLAIN, password=PLAIN_PASSWORD)
    assert Browser(app).get("/sanitycheck.cgi").status_code == 401
    plain = Browser(app)
    plain.login(PLAIN, PLAIN_PASSWORD)
    page = plain.get("/sanitycheck.cgi")
    assert page.status_code == 401 and "Sorry" in page.text
