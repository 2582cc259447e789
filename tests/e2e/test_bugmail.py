"""Bug mail over a real SMTP server (aiosmtpd on loopback): who gets it (the
reference's recipients and preferences), what it says (headers for mail
filters, threading, the changes and comments), and that nothing reaches
someone who may not see it."""

import pytest

from bug_support import (
    MANDATORY,
    NA,
    SHOWN,
    add_bug_group,
    add_to_group,
    control,
    file_bug,
    set_param,
    update_bug,
)
from bugsvc.services import comment as comment_service, notification
from notify_support import deliver, use_smtp


ADMIN = "admin@example.com"


@pytest.fixture
def people(services, smtp):
    use_smtp(services, smtp)
    set_param(services, "urlbase", "http://bugs.example.com/")
    for login, name in (("dev@example.com", "Dana Dev"), ("qa@example.com", "Quinn QA"),
                        ("other@example.com", ""), ("watcher@example.com", "Wes Watcher")):
        services.add_user(login, real_name=name)
    return services


def settings(services, login, **params):
    return services.call(notification.update_email_settings, params, as_user=login)


def test_a_new_bug_mails_its_assignee_and_cc_not_the_reporter(people, smtp):
    bug_id = file_bug(people, assigned_to="dev@example.com", cc=["qa@example.com"],
                      summary="It breaks")
    deliver(people)
    [to_dev] = smtp.to("dev@example.com")
    [to_qa] = smtp.to("qa@example.com")
    assert smtp.to(ADMIN) == []           # its own change: not wanted by default
    assert to_dev["Subject"] == f"[Bug {bug_id}] New: It breaks"
    assert to_dev["From"] == "bugzilla-daemon"
    assert to_dev["X-Bugzilla-Reason"] == "AssignedTo"
    assert to_qa["X-Bugzilla-Reason"] == "CC"
    assert to_dev["X-Bugzilla-Type"] == "new"
    assert to_dev["X-Bugzilla-Watch-Reason"] == "None"
    assert to_dev["X-Bugzilla-Product"] == "TestProduct"
    assert to_dev["X-Bugzilla-Component"] == "TestComponent"
    assert to_dev["X-Bugzilla-Status"] == "CONFIRMED"
    assert to_dev["X-Bugzilla-Priority"] == "---"
    assert to_dev["X-Bugzilla-Assigned-To"] == "dev@example.com"
    assert to_dev["X-Bugzilla-Who"] == ADMIN
    assert "bug_status" in to_dev["X-Bugzilla-Changed-Fields"].split()
    assert to_dev["Message-ID"] == f"<bug-{bug_id}-2@http.bugs.example.com/>"
    assert to_dev["In-Reply-To"] is None
    body = to_dev.get_content()
    assert f"http://bugs.example.com/show_bug.cgi?id={bug_id}" in body
    assert "Summary: It breaks" in body and "Assignee: dev@example.com" in body
    assert "You are assigned to the bug." in body


def test_a_change_is_a_reply_in_the_bug_thread_with_its_changes_and_comment(people, smtp):
    bug_id = file_bug(people, assigned_to="dev@example.com")
    update_bug(people, bug_id, status="IN_PROGRESS", priority="High",
               comment={"body": "Looking into it now."})
    deliver(people)
    first, second = smtp.to("dev@example.com")
    assert second["Subject"] == f"[Bug {bug_id}] Something is broken"
    assert second["X-Bugzilla-Type"] == "changed"
    assert second["In-Reply-To"] == second["References"] == first["Message-ID"]
    assert second["Message-ID"] != first["Message-ID"]
    assert set(second["X-Bugzilla-Changed-Fields"].split()) == {"bug_status", "priority"}
    body = second.get_content()
    assert "Administrator <admin@example.com> changed:" in body
    assert "Status|CONFIRMED" in body and "|IN_PROGRESS" in body
    assert "--- Comment #1 from Administrator <admin@example.com> ---" in body
    assert "Looking into it now." in body


@pytest.mark.parametrize("usestatuswhiteboard", ["0", "1"])
def test_the_whiteboard_is_in_new_bug_mail_while_its_parameter_is_on(people, smtp,
                                                                     usestatuswhiteboard):
    # As Bugzilla's new-bug mail: the field shows only while it is in use;
    # a change of it is mailed like any change.
    set_param(people, "usestatuswhiteboard", usestatuswhiteboard)
    bug_id = file_bug(people, assigned_to="dev@example.com", whiteboard="[needs-triage]")
    deliver(people)
    update_bug(people, bug_id, whiteboard="[triaged]")
    deliver(people)
    new, changed = smtp.to("dev@example.com")
    assert ("[needs-triage]" in new.get_content()) == (usestatuswhiteboard == "1")
    assert "[triaged]" in changed.get_content() and "[needs-triage]" in changed.get_content()


def test_people_taken_out_of_a_role_hear_of_it(people, smtp):
    bug_id = file_bug(people, assigned_to="dev@example.com", cc=["qa@example.com"])
    update_bug(people, bug_id, assigned_to="other@example.com",
               cc={"remove": ["qa@example.com"]})
    deliver(people)
    reasons = [mail["X-Bugzilla-Reason"] for mail in smtp.to("dev@example.com")]
    assert reasons == ["AssignedTo", "AssignedTo"]
    assert smtp.to("qa@example.com")[-1]["X-Bugzilla-Reason"] == "CC"
    assert smtp.to("other@example.com")[-1]["X-Bugzilla-Reason"] == "AssignedTo"


def test_watchers_get_the_mail_of_whom_they_watch(people, smtp):
    settings(people, "watcher@example.com", watching=["dev@example.com"])
    file_bug(people, assigned_to="dev@example.com")
    deliver(people)
    [mail] = smtp.to("watcher@example.com")
    assert mail["X-Bugzilla-Reason"] == "None"
    assert mail["X-Bugzilla-Watch-Reason"] == "AssignedTo dev@example.com"
    assert "You watch the bug's assignee." in mail.get_content()


def test_global_watchers_get_every_bug_mail(people, smtp):
    set_param(people, "globalwatchers", "other@example.com, nobody@example.com")
    file_bug(people)
    deliver(people)
    [mail] = smtp.to("other@example.com")
    assert mail["X-Bugzilla-Reason"] == "GlobalWatcher"


def test_the_qa_contact_while_useqacontact_is_on(people, smtp):
    set_param(people, "useqacontact", "1")
    file_bug(people, qa_contact="qa@example.com")
    deliver(people)
    assert smtp.to("qa@example.com")[0]["X-Bugzilla-Reason"] == "QAcontact"


# Preferences --------------------------------------------------------------------------

def test_own_changes_are_mailed_only_to_who_wants_them(people, smtp):
    bug_id = file_bug(people, assigned_to="dev@example.com")
    update_bug(people, bug_id, as_user="dev@example.com", priority="High")
    deliver(people)
    assert len(smtp.to("dev@example.com")) == 1           # the new bug, not its own change
    assert smtp.to(ADMIN)[-1]["X-Bugzilla-Reason"] == "Reporter"
    settings(people, "dev@example.com",
             relationships={"assignee": {"changed_by_me": True}})
    update_bug(people, bug_id, as_user="dev@example.com", priority="Low")
    deliver(people)
    assert len(smtp.to("dev@example.com")) == 2


def test_a_recipient_who_wants_no_comment_mail_gets_none_for_a_comment(people, smtp):
    bug_id = file_bug(people, cc=["qa@example.com"])
    settings(people, "qa@example.com", relationships={"cc": {"comment": False}})
    people.call(comment_service.add, {"id": bug_id, "comment": "Just a note"}, as_user=ADMIN)
    update_bug(people, bug_id, priority="High")
    deliver(people)
    kinds = [m["X-Bugzilla-Type"] for m in smtp.to("qa@example.com")]
    assert kinds == ["new", "changed"]
    assert "Just a note" not in smtp.to("qa@example.com")[1].get_content()


def test_cc_changes_reach_the_reporter_but_not_the_cc_list_by_default(people, smtp):
    bug_id = file_bug(people, cc=["qa@example.com"])
    update_bug(people, bug_id, as_user="dev@example.com", cc={"add": ["other@example.com"]})
    deliver(people)
    assert [m["X-Bugzilla-Type"] for m in smtp.to("qa@example.com")] == ["new"]
    # The account added to the CC list is told (added to a role).
    assert smtp.to("other@example.com")[0]["X-Bugzilla-Reason"] == "CC"
    assert smtp.to(ADMIN)[-1]["X-Bugzilla-Changed-Fields"] == "cc"


def test_unconfirmed_bugs_are_not_mailed_to_who_does_not_want_them(people, smtp):
    settings(people, "dev@example.com", relationships={"assignee": {"unconfirmed": False}})
    file_bug(people, assigned_to="dev@example.com", status="UNCONFIRMED")
    deliver(people)
    assert smtp.to("dev@example.com") == []


def test_an_ignored_bug_and_a_turned_off_account_get_nothing(people, smtp):
    bug_id = file_bug(people, assigned_to="dev@example.com", cc=["qa@example.com"])
    settings(people, "dev@example.com", ignored_bugs=[bug_id])
    with people.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET email_enabled = 0 WHERE login = 'qa@example.com'")
    update_bug(people, bug_id, priority="High")
    deliver(people)
    assert len(smtp.to("dev@example.com")) == 0 and smtp.to("qa@example.com") == []
    reasons = {row[0] for row in people.query(
        "SELECT last_error FROM outbox_messages WHERE state = 'dropped'")}
    assert {"the recipient ignores the bug", "bug mail is turned off for the account"} <= reasons


# Who may see what ---------------------------------------------------------------------

@pytest.fixture
def matrix(people):
    """A restricted product, an insider group and a time-tracking group:
    outsider (plain, on the CC list), insider (staff), timer (timers),
    member (in the restricted product's group), leaver (in it until the
    change was made, then removed)."""
    for login in ("outsider@example.com", "insider@example.com", "timer@example.com",
                  "member@example.com", "leaver@example.com"):
        people.add_user(login)
    add_bug_group(people, "staff", ["insider@example.com"])
    add_bug_group(people, "timers", ["timer@example.com"])
    set_param(people, "insidergroup", "staff")
    set_param(people, "timetrackinggroup", "timers")
    secret = add_bug_group(people, "secret", ["member@example.com", "leaver@example.com",
                                              "insider@example.com", "timer@example.com"])
    control(people, secret, MANDATORY, MANDATORY)
    return people


WATCHERS = ("outsider@example.com", "insider@example.com", "timer@example.com",
            "member@example.com", "leaver@example.com")


def test_private_comments_reach_only_insiders(matrix, smtp):
    bug_id = file_bug(matrix, cc=list(WATCHERS))
    control(matrix, matrix.query("SELECT id FROM groups WHERE name = 'secret'")[0][0], NA, NA)
    deliver(matrix)
    smtp.mails.clear()
    matrix.call(comment_service.add, {"id": bug_id, "comment": "The customer is ACME.",
                                      "is_private": True}, as_user=ADMIN)
    update_bug(matrix, bug_id, comment={"body": "A public word."})
    deliver(matrix)
    for login in WATCHERS:
        texts = [m.get_content() for m in smtp.to(login)]
        seen = any("ACME" in text for text in texts)
        assert seen == (login == "insider@example.com"), login
        assert any("A public word." in text for text in texts), login


def test_time_tracking_changes_reach_only_the_time_tracking_group(matrix, smtp):
    secret = matrix.query("SELECT id FROM groups WHERE name = 'secret'")[0][0]
    control(matrix, secret, NA, NA)
    add_to_group(matrix, ADMIN, "timers")
    bug_id = file_bug(matrix, cc=list(WATCHERS))
    deliver(matrix)
    smtp.mails.clear()
    update_bug(matrix, bug_id, estimated_time=8, priority="High")
    deliver(matrix)
    for login in WATCHERS:
        [mail] = smtp.to(login)
        fields = mail["X-Bugzilla-Changed-Fields"].split()
        assert ("estimated_time" in fields) == (login == "timer@example.com"), login
        assert ("Estimated Hours" in mail.get_content()) == (login == "timer@example.com")


def test_a_restricted_bug_is_mailed_only_to_who_may_see_it(matrix, smtp):
    set_param(matrix, "globalwatchers", ",".join(WATCHERS))
    file_bug(matrix, summary="Secret thing")
    deliver(matrix)
    got = {login for login in WATCHERS if smtp.to(login)}
    # outsider is no member and on no role; the others are members.
    assert got == {"insider@example.com", "timer@example.com", "member@example.com",
                   "leaver@example.com"}
    assert not any("Secret thing" in str(m) for m in smtp.to("outsider@example.com"))


def test_a_user_who_lost_access_before_delivery_gets_nothing(matrix, smtp):
    set_param(matrix, "globalwatchers", ",".join(WATCHERS))
    bug_id = file_bug(matrix, summary="Secret thing")
    deliver(matrix)
    smtp.mails.clear()
    update_bug(matrix, bug_id, comment={"body": "Plans for the merger"})
    # Taken out of the group after the change, before the mail goes out.
    with matrix.db.transaction(write=True) as conn:
        conn.execute("DELETE FROM user_groups WHERE user_id = (SELECT id FROM users WHERE"
                     " login = 'leaver@example.com') AND group_id = (SELECT id FROM groups"
                     " WHERE name = 'secret')")
    deliver(matrix)
    assert smtp.to("leaver@example.com") == []
    assert "Plans for the merger" in smtp.to("member@example.com")[0].get_content()
    assert ("the recipient cannot see the bug",) in matrix.query(
        "SELECT last_error FROM outbox_messages WHERE user_id = (SELECT id FROM users WHERE"
        " login = 'leaver@example.com') AND state = 'dropped'")


def test_a_disabled_account_gets_nothing(matrix, smtp):
    bug_id = file_bug(matrix, cc=["outsider@example.com"])
    with matrix.db.transaction(write=True) as conn:
        conn.execute("UPDATE users SET disabled_text = 'gone' WHERE login = ?",
                     ("outsider@example.com",))
    update_bug(matrix, bug_id, priority="High")
    deliver(matrix)
    assert smtp.to("outsider@example.com") == []


def test_a_dependency_on_a_hidden_bug_is_left_out(matrix, smtp):
    hidden = file_bug(matrix, summary="Hidden")
    secret = matrix.query("SELECT id FROM groups WHERE name = 'secret'")[0][0]
    control(matrix, secret, SHOWN, NA)
    visible = file_bug(matrix, cc=["outsider@example.com", "member@example.com"])
    deliver(matrix)
    smtp.mails.clear()
    update_bug(matrix, visible, depends_on={"add": [hidden]}, priority="High")
    deliver(matrix)
    [outsider] = smtp.to("outsider@example.com")
    [member] = smtp.to("member@example.com")
    assert "dependson" not in outsider["X-Bugzilla-Changed-Fields"].split()
    assert "Depends on" not in outsider.get_content()
    assert "dependson" in member["X-Bugzilla-Changed-Fields"].split()
    assert f"|{hidden}" in member.get_content()


# Flags ----------------------------------------------------------------------------------

def test_a_flag_request_mails_the_requestee_and_its_answer_the_requester(people, smtp):
    from bugsvc.services import flagtype
    people.call(flagtype.create, {"name": "review", "description": "Review",
                                  "target_type": "bug", "cc_list": "list@example.com"},
                as_user=ADMIN)
    bug_id = file_bug(people)
    deliver(people)
    update_bug(people, bug_id, flags=[{"name": "review", "status": "?",
                                       "requestee": "dev@example.com"}])
    deliver(people)
    [asked] = [m for m in smtp.to("dev@example.com") if m["X-Bugzilla-Type"] == "request"]
    assert asked["Subject"] == f"review requested: [Bug {bug_id}] Something is broken"
    assert "has asked Dana Dev <dev@example.com> for review" in asked.get_content()
    assert [m["Subject"] for m in smtp.to("list@example.com")] == [asked["Subject"]]
    flag_id = people.query("SELECT id FROM flags")[0][0]
    update_bug(people, bug_id, as_user="dev@example.com", flags=[{"id": flag_id,
                                                                 "status": "+"}])
    deliver(people)
    answered = [m for m in smtp.to(ADMIN) if m["X-Bugzilla-Type"] == "request"]
    assert answered[-1]["Subject"] == f"review granted: [Bug {bug_id}] Something is broken"


# Delivery ----------------------------------------------------------------------------------

def test_a_refusing_server_is_tried_again_then_parked_and_resent_by_an_admin(people, smtp):
    smtp.refuse = "451 4.3.0 Try again later"
    file_bug(people, assigned_to="dev@example.com")
    deliver(people)
    [(state, attempts, error)] = people.query(
        "SELECT state, attempts, last_error FROM outbox_messages WHERE user_id = 2")
    assert (state, attempts) == ("parked", 4) and "451" in error
    assert smtp.mails == []
    listed = people.call(notification.list_messages, {}, as_user=ADMIN)
    assert [m["recipient"] for m in listed["messages"]] == ["dev@example.com"]
    smtp.refuse = None
    ids = [m["id"] for m in listed["messages"]]
    assert people.call(notification.resend, {"ids": ids}, as_user=ADMIN) == {"resent": ids}
    deliver(people)
    assert len(smtp.to("dev@example.com")) == 1


def test_a_permanent_refusal_is_parked_at_once(people, smtp):
    smtp.refuse = "550 5.1.1 No such mailbox"
    file_bug(people, assigned_to="dev@example.com")
    deliver(people)
    assert people.query("SELECT state, attempts FROM outbox_messages WHERE user_id = 2") == [
        ("parked", 1)]


def test_the_queue_is_for_administrators(people, client, plain_key):
    answer = client.simulate_get("/rest/notification", params={"Bugzilla_api_key": plain_key})
    assert (answer.status_code, answer.json["code"]) == (401, 304)
    answer = client.simulate_post("/rest/notification/resend",
                                  params={"Bugzilla_api_key": plain_key}, json={"ids": [1]})
    assert (answer.status_code, answer.json["code"]) == (401, 304)
    assert client.simulate_get("/rest/notification").json["code"] == 410


def test_the_queue_by_state_and_channel_names_a_webhooks_calls_by_the_webhook(people, smtp):
    from bugsvc.errors import ServiceError
    from bugsvc.services import webhook
    set_param(people, "webhooks_enabled", "1")
    people.call(webhook.create, {"name": "CI hook", "url": "https://hooks.example.com/x",
                                 "events": ["create"], "product": "TestProduct"}, as_user=ADMIN)
    file_bug(people, assigned_to="dev@example.com")
    deliver(people)                 # the hook's host is never resolved: its call is parked
    listed = people.call(notification.list_messages, {"state": ["parked", "sent"],
                                                      "channel": "webhook"}, as_user=ADMIN)
    [call] = listed["messages"]
    assert (call["channel"], call["kind"], call["state"]) == ("webhook", "create", "parked")
    assert call["recipient"] == "CI hook" and "next_attempt" not in call
    assert "cannot be resolved" in call["last_error"]
    assert listed["counts"]["parked"] == 1 and listed["counts"]["sent"] >= 1
    sent = people.call(notification.list_messages, {"state": "sent", "channel": "mail"},
                       as_user=ADMIN)["messages"]
    assert "dev@example.com" in [m["recipient"] for m in sent]
    assert {m["channel"] for m in sent} == {"mail"}
    for params, code in (({"state": "lost"}, 53), ({"channel": "pigeon"}, 53),
                         ({"limit": "many"}, 52)):
        with pytest.raises(ServiceError) as caught:
            people.call(notification.list_messages, params, as_user=ADMIN)
        assert caught.value.code == code
    with pytest.raises(ServiceError) as caught:
        people.call(notification.resend, {}, as_user=ADMIN)
    assert caught.value.code == 50
    assert people.query("SELECT state FROM outbox_messages WHERE channel = 'webhook'") == [
        ("parked",)]


def test_closing_a_blocker_tells_the_people_of_the_bugs_that_depend_on_it(people, smtp):
    blocker = file_bug(people, summary="The blocker")
    dependent = file_bug(people, depends_on=[blocker], cc=["qa@example.com"])
    deliver(people)
    smtp.mails.clear()
    update_bug(people, blocker, status="RESOLVED", resolution="FIXED")
    deliver(people)
    [mail] = smtp.to("qa@example.com")
    assert mail["X-Bugzilla-Type"] == "dep_changed"
    assert mail["Subject"] == f"[Bug {dependent}] Something is broken"
    body = mail.get_content()
    assert f"Bug {dependent} depends on bug {blocker}, which was closed." in body
    assert f"Bug {blocker} Summary: The blocker" in body


def test_the_smtp_password_never_goes_over_an_unencrypted_connection(people, smtp, caplog):
    set_param(people, "smtp_username", "bugs")
    set_param(people, "smtp_password", "s3cret-pass")
    file_bug(people, assigned_to="dev@example.com")
    deliver(people)
    [(state, error)] = people.query("SELECT state, last_error FROM outbox_messages"
                                    " WHERE user_id = 2")
    assert state == "parked" and "offers no STARTTLS" in error
    assert smtp.mails == []
    assert "s3cret" not in caplog.text and "s3cret" not in error


def test_text_that_is_not_ascii_is_encoded_and_reads_back(people, smtp):
    bug_id = file_bug(people, assigned_to="dev@example.com", summary="Grüße aus Köln")
    update_bug(people, bug_id, comment={"body": "Ça marche \u2014 enfin"})
    deliver(people)
    new, changed = smtp.to("dev@example.com")
    assert new["Subject"] == f"[Bug {bug_id}] New: Grüße aus Köln"
    assert "Ça marche \u2014 enfin" in changed.get_content()
    assert changed["Content-Transfer-Encoding"] == "quoted-printable"
    assert new["Content-Transfer-Encoding"] == "quoted-printable"     # the summary's field


def test_a_new_attachment_is_mailed_and_a_private_one_only_to_insiders(matrix, smtp):
    import base64

    from bugsvc.services import attachment as attachment_service
    secret = matrix.query("SELECT id FROM groups WHERE name = 'secret'")[0][0]
    control(matrix, secret, NA, NA)
    bug_id = file_bug(matrix, cc=["outsider@example.com", "insider@example.com"])
    deliver(matrix)
    smtp.mails.clear()
    for summary, private in (("Public trace", False), ("Customer dump", True)):
        matrix.call(attachment_service.create, {
            "ids": [bug_id], "data": base64.b64encode(b"data").decode(), "file_name": "f.txt",
            "summary": summary, "content_type": "text/plain", "is_private": private},
            as_user=ADMIN)
    deliver(matrix)
    [outsider] = smtp.to("outsider@example.com")
    insider = smtp.to("insider@example.com")
    assert outsider["X-Bugzilla-Changed-Fields"] == "attachments.created"
    assert "Created attachment" in outsider.get_content()
    assert "Public trace" in outsider.get_content()
    assert "Customer dump" not in str(outsider)
    assert len(insider) == 2 and "Customer dump" in insider[1].get_content()


def test_a_flag_cc_list_address_without_account_reads_as_a_logged_out_caller(matrix, smtp):
    from bugsvc.services import flagtype
    matrix.call(flagtype.create, {"name": "review", "description": "Review",
                                  "target_type": "bug", "cc_list": "list@example.org"},
                as_user=ADMIN)
    secret = matrix.query("SELECT id FROM groups WHERE name = 'secret'")[0][0]
    control(matrix, secret, SHOWN, NA)
    public = file_bug(matrix, summary="Public thing")
    hidden = file_bug(matrix, summary="Hidden thing", groups=["secret"])
    for bug_id in (public, hidden):
        update_bug(matrix, bug_id, flags=[{"name": "review", "status": "?"}])
    deliver(matrix)
    subjects = [mail["Subject"] for mail in smtp.to("list@example.org")]
    assert subjects == [f"review requested: [Bug {public}] Public thing"]
