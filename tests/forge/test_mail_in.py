"""Replying to bug mail: a bug mail delivered through a real SMTP server
(aiosmtpd on loopback) carries a Reply-To with a token for its bug and
recipient; the reply, piped into `bugsvc mail-in` as an MTA does, becomes
exactly one comment by that recipient (quoted text and signature cut),
`@field value` lines change fields and attached files become attachments,
with the recipient's rights. A message delivered twice is taken once,
automatic mail is left alone (no loops), and refusals change nothing and
say why (on standard error, with the exit status an MTA bounces on)."""

import email.policy
import subprocess
import sys
from email.message import EmailMessage

import pytest

from bug_support import add_bug_group, file_bug, set_param
from live_server import ROOT
from notify_support import deliver, use_smtp


DEV = "dev@example.com"
MAILIN = "bugs@tracker.example"


@pytest.fixture
def mailed(services, smtp):
    """A bug whose assignee, DEV, got its new-bug mail over SMTP; returns
    (bug id, that mail)."""
    use_smtp(services, smtp)
    set_param(services, "urlbase", "http://bugs.example.com/")
    set_param(services, "mailin_address", MAILIN)
    services.add_user(DEV, real_name="Dana Dev")
    bug_id = file_bug(services, assigned_to=DEV, summary="It breaks",
                      description="Steps: start it.")
    deliver(services)
    [mail] = smtp.to(DEV)
    return bug_id, mail


def answer(mail, text, message_id="<reply-1@mail.example>", sender=DEV, headers=None,
           files=()):
    """The bytes of a reply to `mail` as a mail reader writes it: to its
    Reply-To, the original quoted under an attribution line."""
    message = EmailMessage()
    message["From"] = f"Dana Dev <{sender}>"
    message["To"] = mail["Reply-To"]
    message["Subject"] = "Re: " + mail["Subject"]
    message["Message-ID"] = message_id
    message["In-Reply-To"] = mail["Message-ID"]
    for name, value in (headers or {}).items():
        message[name] = value
    quoted = "\n".join("> " + line for line in mail.get_content().splitlines())
    message.set_content(f"{text}\n\nOn Fri, 1 May 2026, bugzilla-daemon wrote:\n{quoted}\n")
    for name, content in files:
        message.add_attachment(content.encode(), maintype="text", subtype="plain",
                               filename=name)
    return message.as_bytes(policy=email.policy.SMTP)


def mail_in(db_path, data):
    """`python bugsvc.py --db DB mail-in` with `data` on its standard input."""
    return subprocess.run([sys.executable, str(ROOT / "bugsvc.py"), "--db", str(db_path),
                           "mail-in"], input=data, capture_output=True, timeout=60, cwd=ROOT)


def comments(services, bug_id):
    return services.query("SELECT u.login, c.body FROM comments c JOIN users u"
                          " ON u.id = c.author_id WHERE c.bug_id = ? ORDER BY c.count",
                          (bug_id,))


def test_a_reply_becomes_exactly_one_comment_of_its_recipient(db_path, services, mailed):
    bug_id, mail = mailed
    assert mail["Reply-To"].startswith("bugs+b") and mail["Reply-To"].endswith("@tracker.example")
    reply = answer(mail, "I can reproduce it.\n\n-- \nDana, on her phone")
    for _ in range(3):                                      # delivered again: taken once
        done = mail_in(db_path, reply)
        assert done.returncode == 0, done.stderr
    assert comments(services, bug_id)[1:] == [(DEV, "I can reproduce it.")]


def test_field_lines_and_attachments(db_path, services, mailed):
    bug_id, mail = mailed
    reply = answer(mail, "@status IN_PROGRESS\n@priority High\n\nOn it.",
                   files=[("trace.txt", "Traceback: boom\n")])
    done = mail_in(db_path, reply)
    assert done.returncode == 0, done.stderr
    assert services.query("SELECT status, priority FROM bugs WHERE id = ?", (bug_id,)) == [
        ("IN_PROGRESS", "High")]
    assert comments(services, bug_id)[1:][0] == (DEV, "On it.")
    assert services.query("SELECT file_name, content_type FROM attachments WHERE bug_id = ?",
                          (bug_id,)) == [("trace.txt", "text/plain")]


@pytest.mark.parametrize("headers, sender", [
    ({"Auto-Submitted": "auto-replied"}, DEV),
    ({"Precedence": "bulk"}, DEV),
    ({}, "MAILER-DAEMON@mail.example"),
])
def test_automatic_mail_is_left_alone_without_an_answer(db_path, services, mailed, headers,
                                                        sender):
    bug_id, mail = mailed
    done = mail_in(db_path, answer(mail, "I am out of the office.", headers=headers,
                                   sender=sender))
    assert done.returncode == 0 and b"automatic" in done.stderr
    assert len(comments(services, bug_id)) == 1


def test_refusals_change_nothing_and_say_why(db_path, services, mailed):
    bug_id, mail = mailed
    forged = answer(mail, "Let me in").replace(mail["Reply-To"].split("s")[-1].encode()[:8],
                                               b"deadbeef")
    done = mail_in(db_path, forged)
    assert done.returncode == 67 and b"no valid reply address" in done.stderr
    done = mail_in(db_path, answer(mail, "@votes 12\nplease", "<reply-2@mail.example>"))
    assert done.returncode == 65 and b"@votes" in done.stderr
    done = mail_in(db_path, answer(mail, "", "<reply-3@mail.example>"))
    assert done.returncode == 65
    # The recipient lost the right to see the bug (no longer its assignee, and
    # the bug now restricted to a group): the token alone is not enough.
    group_id = add_bug_group(services, "secret")
    with services.db.transaction(write=True) as conn:
        conn.execute("INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
                     (bug_id, group_id))
        conn.execute("UPDATE bugs SET assigned_to = reporter WHERE id = ?", (bug_id,))
    done = mail_in(db_path, answer(mail, "Still here?", "<reply-4@mail.example>"))
    assert done.returncode == 77 and b"not changed" in done.stderr
    assert len(comments(services, bug_id)) == 1
    assert services.query("SELECT COUNT(*) FROM mail_in_messages") == [(0,)]


def test_no_reply_to_while_mail_in_is_off(services, smtp):
    use_smtp(services, smtp)
    services.add_user(DEV)
    file_bug(services, assigned_to=DEV)
    deliver(services)
    [mail] = smtp.to(DEV)
    assert mail["Reply-To"] is None


def new_bug_mail(sender, text, subject="Fwd: The printer is on fire", message_id="<new-1@x>"):
    message = EmailMessage()
    message["From"] = sender
    message["To"] = "new-bugs@tracker.example"
    message["Subject"] = subject
    message["Message-ID"] = message_id
    message.set_content(text)
    return message.as_bytes(policy=email.policy.SMTP)


@pytest.mark.slow            # five runs of `bugsvc mail-in` as a process, as an MTA's pipe
def test_a_new_bug_by_mail_only_where_configured(db_path, services):
    services.add_user(DEV, real_name="Dana Dev")
    text = ("@product TestProduct\n@component TestComponent\n@version unspecified\n"
            "@op_sys Linux\n@platform PC\n\nSmoke everywhere.\n-- \nDana")
    mail = new_bug_mail(DEV, text)
    done = mail_in(db_path, mail)
    assert done.returncode == 67                       # off: the address is not configured
    set_param(services, "mailin_new_bug_address", "new-bugs@tracker.example")
    for _ in range(2):
        done = mail_in(db_path, mail)
        assert done.returncode == 0, done.stderr
    rows = services.query("SELECT b.id, b.summary, u.login FROM bugs b JOIN users u"
                          " ON u.id = b.reporter")
    assert [row[1:] for row in rows] == [("The printer is on fire", DEV)]
    assert comments(services, rows[0][0]) == [(DEV, "Smoke everywhere.")]
    done = mail_in(db_path, new_bug_mail("stranger@else.example", text, message_id="<n-2@x>"))
    assert done.returncode == 67 and b"not the address of an account" in done.stderr
    done = mail_in(db_path, new_bug_mail(DEV, "@product NoSuchProduct\n\nhi",
                                         message_id="<n-3@x>"))
    assert done.returncode == 77 and b"no bug was filed" in done.stderr
    assert len(services.query("SELECT id FROM bugs")) == 1


@pytest.mark.slow
@pytest.mark.parametrize("lmtp", [False, True])
def test_the_built_in_listener_takes_replies_over_smtp_and_lmtp(db_path, services, mailed,
                                                                lmtp):
    import smtplib
    import socket
    import time

    from live_server import free_port
    bug_id, mail = mailed
    port = free_port()
    server = subprocess.Popen([sys.executable, str(ROOT / "bugsvc.py"), "--db", str(db_path),
                               "mail-in", "--listen", f"127.0.0.1:{port}"]
                              + (["--lmtp"] if lmtp else []),
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                assert time.monotonic() < deadline and server.poll() is None
                time.sleep(0.1)
        client = (smtplib.LMTP if lmtp else smtplib.SMTP)("127.0.0.1", port)
        with client:
            for _ in range(2):
                client.sendmail(DEV, [mail["Reply-To"]], answer(mail, "Over the wire."))
            with pytest.raises(smtplib.SMTPDataError) as refused:
                client.sendmail(DEV, ["bugs+nothing@tracker.example"],
                                answer(mail, "Forged", "<other@mail.example>").replace(
                                    mail["Reply-To"].encode(), b"bugs+nothing@tracker.example"))
        assert refused.value.smtp_code == 550 and b"no valid reply" in refused.value.smtp_error
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert comments(services, bug_id)[1:] == [(DEV, "Over the wire.")]
