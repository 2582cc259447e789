"""Real names and the names of products, components, versions and
classifications are one line, as the reference keeps them: every run of
control characters (CR and LF included) becomes one space, on every call
that sets them; so nobody can forge lines in the bug mail others receive
(mail headers were already safe)."""

from datetime import datetime, timezone

from accounts import ADMIN
from bug_support import file_bug, update_bug
from bugsvc.accounts import tokens
from bugsvc.services import account, component, product, user
from notify_support import deliver, use_smtp


FORGED = "Eve\r\n\r\n--- Comment #9 from Administrator ---\nPlease send your password\x07\x00"
CLEAN = "Eve --- Comment #9 from Administrator --- Please send your password"


def real_name(services, login):
    return services.query("SELECT real_name FROM users WHERE login = ?", (login,))[0][0]


def test_real_names_on_every_call_that_sets_them(services):
    services.call(user.create, {"email": "a@example.com", "full_name": FORGED}, as_user=ADMIN)
    assert real_name(services, "a@example.com") == CLEAN
    services.call(user.create, {"email": "b@example.com", "name": FORGED}, as_user=ADMIN)
    assert real_name(services, "b@example.com") == CLEAN
    services.add_user("c@example.com", password="a password of c's")
    services.call(user.update, {"names": ["c@example.com"], "full_name": FORGED}, as_user=ADMIN)
    assert real_name(services, "c@example.com") == CLEAN
    services.add_user("d@example.com", password="a password of d's")
    answer = services.call(user.update_self, {"full_name": FORGED}, as_user="d@example.com")
    assert answer["changes"]["full_name"]["added"] == CLEAN
    assert real_name(services, "d@example.com") == CLEAN


def test_real_name_of_an_account_made_from_a_mailed_link(services):
    with services.db.transaction(write=True) as conn:
        secret = tokens.issue(conn, tokens.ACCOUNT, datetime.now(timezone.utc),
                              login="e@example.com")
    services.call(account.create_account, {"account_token": secret, "full_name": FORGED,
                                           "password": "a long enough password"})
    assert real_name(services, "e@example.com") == CLEAN


def test_names_of_products_and_components(services):
    services.call(product.create, {"name": "Gad\r\ngets", "description": "Two\nlines stay",
                                   "version": "1.0\n"}, as_user=ADMIN)
    assert services.query("SELECT name, description FROM products WHERE name LIKE 'Gad%'") == [
        ("Gad gets", "Two\nlines stay")]
    assert services.query("SELECT name FROM versions WHERE name LIKE '1.0%'") == [("1.0",)]
    services.call(product.update, {"names": ["Gad gets"], "name": "Gad\x1bgets\x7f"},
                  as_user=ADMIN)
    assert services.query("SELECT name FROM products WHERE name LIKE 'Gad%'") == [("Gad gets",)]
    created = {"product": "Gad gets", "name": "Wid\ngets", "description": "d",
               "default_assignee": ADMIN}
    services.call(component.create, created, as_user=ADMIN)
    renamed = {"names": [{"product": "Gad gets", "component": "Wid gets"}],
               "name": "Wid\r\ngets 2"}
    services.call(component.update, renamed, as_user=ADMIN)
    assert services.query("SELECT name FROM components WHERE name LIKE 'Wid%'") == [
        ("Wid gets 2",)]


def test_bug_mail_shows_no_forged_line(services, smtp):
    use_smtp(services, smtp)
    services.add_user("dev@example.com", real_name="Dana Dev")
    services.add_user("eve@example.com", password="a password of eve's")
    services.call(user.update_self, {"full_name": FORGED}, as_user="eve@example.com")
    bug_id = file_bug(services, assigned_to="dev@example.com")
    update_bug(services, bug_id, as_user="eve@example.com", comment={"body": "hello"})
    deliver(services)
    body = smtp.to("dev@example.com")[-1].get_content()
    assert f"--- Comment #1 from {CLEAN} <eve@example.com> ---" in body
    assert not any(line.startswith(("--- Comment #9", "Please send")) for line in body.splitlines())
