"""A new account's row: whether a login may be had, and storing the
account (what accounts made by an administrator, by mail and by an outside
source such as a directory share)."""

import re

from .. import dates
from ..call.params import clean_text
from ..errors import ACCOUNT_EXISTS, ILLEGAL_EMAIL_ADDRESS, ServiceError
from ..store import audit
from . import membership


LOGIN_MAX_LENGTH = 127


def check_login_name(ctx, login_name, user_id=None):
    """Refuse a login (e-mail address) that is not valid or not free.

    user_id: the account being renamed (its own login, in any case, is free).
    Errors: 501 not an acceptable address (emailregexp, ASCII, at most 127
    characters, no spaces); 500 another account has it (any case).
    """
    try:
        acceptable = re.search(ctx.param("emailregexp"), login_name) is not None
    except re.error:
        acceptable = False
    if (not acceptable or len(login_name) > LOGIN_MAX_LENGTH or not login_name.isascii()
            or any(c.isspace() or not c.isprintable() for c in login_name)):
        raise ServiceError(ILLEGAL_EMAIL_ADDRESS, f"The e-mail address '{login_name}' is not valid "
                                                  f"here. {ctx.param('emailregexpdesc')}")
    row = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                           (login_name,)).fetchone()
    if row is not None and row["id"] != user_id:
        raise ServiceError(ACCOUNT_EXISTS, f"There is already an account with the login name "
                                           f"'{login_name}'.")


def insert(ctx, login_name, real_name, password_hash):
    """Store a new account (login already checked) with `password_hash`
    (None: no password); it joins the groups whose user_regexp matches and
    its creation is audited. Returns its id."""
    cur = ctx.conn.execute(
        "INSERT INTO users (login, real_name, password_hash, disabled_text, email_enabled,"
        " created_at) VALUES (?, ?, ?, '', 1, ?) RETURNING id",
        (login_name, clean_text(real_name), password_hash, dates.to_db(ctx.now)))
    user_id = cur.fetchone()[0]
    membership.refresh_for_user(ctx.conn, user_id)
    audit.record(ctx, "User", user_id)
    return user_id
