"""Accounts that sign in through someone else (an LDAP directory, an
OpenID provider): finding the account of an outside identity, creating it
at its first sign-in and keeping its login and real name as the outside
source has them, as the reference's create_or_update_user does.

An outside identity is (source, subject): source 'LDAP' or 'oidc:<name>',
subject the directory's uid or the provider's `sub`. Such an account is
created without a password; it is recorded in the audit log like any
account created.
"""

from dataclasses import dataclass
from datetime import datetime

from ..call.params import clean_text
from ..errors import INTERNAL_ERROR, ServiceError
from ..store import audit
from . import membership, new_account
from .caller import ANONYMOUS, Caller


@dataclass
class SignInChange:
    """What an account change made while signing in reads (the audit log's
    and the login checks' context): the connection, the time, the
    parameters ({name: value}) and who is changing (nobody is signed in
    yet)."""
    conn: object
    now: datetime
    values: dict
    caller: Caller = ANONYMOUS

    def param(self, name):
        return self.values[name]


DIRECTORY_KEEPS_PASSWORD = ("The password of this account is kept by the directory (LDAP) it "
                            "signs in with; change it there.")


def signs_in_through_directory(conn, user_id):
    """True when account `user_id` is linked to an LDAP directory, which
    keeps its password: bugsvc neither sets nor resets one for it (as the
    reference's LDAP checker cannot change passwords), so that an account
    removed from the directory cannot sign in with a password set here."""
    return conn.execute("SELECT 1 FROM external_logins WHERE user_id = ? AND source = 'LDAP'",
                        (user_id,)).fetchone() is not None


def linked_account(conn, source, subject):
    """The id of the account linked to (source, subject); None when none."""
    row = conn.execute("SELECT user_id FROM external_logins WHERE source = ? AND subject = ?",
                       (source, subject)).fetchone()
    return row[0] if row is not None else None


def link(conn, source, subject, user_id):
    """Link account `user_id` to the outside identity (source, subject)."""
    conn.execute("INSERT INTO external_logins (source, subject, user_id) VALUES (?, ?, ?)",
                 (source, subject, user_id))


def existing_login(conn, candidates, default):
    """The first of `candidates` that is an account's login (any case), else
    `default` (a directory entry with several addresses signs in as the
    account one of them already is, as in the reference)."""
    for candidate in candidates:
        if conn.execute("SELECT 1 FROM users WHERE lower(login) = lower(?)",
                        (candidate,)).fetchone() is not None:
            return candidate
    return default


def account_for(ctx, source, subject, login, real_name, create=True):
    """The id of the account of the outside identity (source, subject),
    whose login is `login` and real name `real_name` there.

    The account linked to it is used (its login and real name follow the
    outside source's when they changed); else the account whose login is
    `login` (and it is linked); else, when `create`, a new account without
    a password (audited). Returns None when there is none and not `create`.
    ctx: conn, now, caller and param(name) (a Context or a SignInChange).
    Errors: -32000 the identity is linked to one account and `login` is
    another's; 501 / 500 a login that is not acceptable here or taken.
    """
    linked = linked_account(ctx.conn, source, subject)
    row = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                           (login,)).fetchone()
    by_login = row[0] if row is not None else None
    if linked is not None and by_login is not None and linked != by_login:
        owner = ctx.conn.execute("SELECT login FROM users WHERE id = ?", (linked,)).fetchone()[0]
        raise ServiceError(INTERNAL_ERROR, f"The external ID '{subject}' already belongs to "
                                           f"'{owner}', but the account source says that "
                                           f"'{login}' has that ID.")
    if linked is None and by_login is None:
        if not create:
            return None
        new_account.check_login_name(ctx, login)
        user_id = new_account.insert(ctx, login, real_name, None)
        link(ctx.conn, source, subject, user_id)
        return user_id
    if linked is None:
        link(ctx.conn, source, subject, by_login)
        linked = by_login
    _follow(ctx, linked, login, real_name)
    return linked


def _follow(ctx, user_id, login, real_name):
    """Give account `user_id` the outside source's login and real name
    where they changed (audited as any change of an account)."""
    row = ctx.conn.execute("SELECT login, real_name FROM users WHERE id = ?",
                           (user_id,)).fetchone()
    real_name = clean_text(real_name or "")
    if login.lower() != row["login"].lower():
        new_account.check_login_name(ctx, login, user_id)
        ctx.conn.execute("UPDATE users SET login = ? WHERE id = ?", (login, user_id))
        membership.refresh_for_user(ctx.conn, user_id)
        audit.record(ctx, "User", user_id, "email", row["login"], login)
    if real_name and real_name != row["real_name"]:
        ctx.conn.execute("UPDATE users SET real_name = ? WHERE id = ?", (real_name, user_id))
        audit.record(ctx, "User", user_id, "full_name", row["real_name"], real_name)
