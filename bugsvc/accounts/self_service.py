"""What mail makes possible for accounts: creating one's own account by
mail (the reference's User.offer_account_by_email, for addresses that match
the parameter createemailregexp), choosing a new password through a mailed
link, and changing one's own e-mail address, confirmed from the new address
(the reference's preferences page and token.cgi, while allowemailchange is
on). The calls are services/account.py's.

Each sends a mail with a one-time link (made when the mail is sent, valid
for three days, stored only as a hash) to `{urlbase}token.cgi?t=TOKEN&a=...`
(the web pages' address for it): `a=request_new_account` to create the
account, `a=cfmpw` to choose the password. The token is then given to
create_account or reset_password.

The answers never tell whether an account exists: asking for a password
for an address without an account succeeds and sends nothing; offering an
account to an address that has one succeeds and mails its owner a notice
instead. A second request for the same account or address within ten
minutes succeeds and sends nothing, so nobody can fill a mailbox.
"""

import re

from .. import dates
from ..call.changes import note
from ..call.params import clean_text
from ..errors import ACCOUNT_EXISTS, ILLEGAL_EMAIL_ADDRESS, USER_ERROR, ServiceError
from ..store import audit, outbox, request_counts
from . import auth, external, membership, tokens
from .account import check_password_rules
from .new_account import check_login_name


# The links mailed for a change of e-mail address (either address's).
EMAIL = "email"

_BAD_TOKEN = ("The token you submitted does not exist, has expired, or has been used "
              "already.")
# Account requests (User.offer_account_by_email) accepted in an hour from one
# client address, and for the addresses of one e-mail domain.
ACCOUNT_REQUESTS_PER_ADDRESS = 3
ACCOUNT_REQUESTS_PER_DOMAIN = 10


def _recently(ctx, kind, user_id=None, address=None):
    """True when a mail of `kind` was asked for the account or address
    within tokens.REQUEST_INTERVAL."""
    since = dates.to_db(ctx.now - tokens.REQUEST_INTERVAL)
    if user_id is not None:
        row = ctx.conn.execute("SELECT 1 FROM outbox_messages WHERE kind = ? AND user_id = ?"
                               " AND created_at > ? LIMIT 1", (kind, user_id, since)).fetchone()
    else:
        row = ctx.conn.execute("SELECT 1 FROM outbox_messages WHERE kind = ?"
                               " AND lower(address) = lower(?) AND created_at > ? LIMIT 1",
                               (kind, address, since)).fetchone()
    return row is not None


def _creation_allowed(ctx, address):
    """Errors: 501 when self-registration is off (createemailregexp empty)
    or the address does not match it, is blocked (blocked_emails,
    blocked_email_domains), or is no acceptable login."""
    pattern = ctx.param("createemailregexp")
    try:
        allowed = bool(pattern) and re.search(pattern, address) is not None
    except re.error:
        allowed = False
    if allowed and _blocked(ctx, address):
        raise ServiceError(ILLEGAL_EMAIL_ADDRESS, f"Accounts cannot be created for the address "
                                                  f"'{address}' here.")
    if not allowed:
        raise ServiceError(ILLEGAL_EMAIL_ADDRESS, f"Accounts cannot be created for the address "
                                                  f"'{address}' here (parameter "
                                                  "createemailregexp).")


def _listed(text):
    """The lower-case entries of a parameter listing names by commas or spaces."""
    return {entry.lower() for entry in re.split(r"[\s,]+", text or "") if entry}


def _blocked(ctx, address):
    """True when `address` or its domain (or a domain above it) is blocked."""
    address = address.lower()
    if address in _listed(ctx.param("blocked_emails")):
        return True
    domain = address.rsplit("@", 1)[-1].strip(".")
    blocked = {entry.lstrip("@.") for entry in _listed(ctx.param("blocked_email_domains"))}
    parts = domain.split(".")
    return any(".".join(parts[index:]) in blocked for index in range(len(parts)))


def _count_request(ctx, address):
    """Count an account request against the client's address and the
    e-mail domain, in the call's transaction (so every server process
    counts together, and a refused request is not counted).
    Errors: 32000 past ACCOUNT_REQUESTS_PER_ADDRESS or
    ACCOUNT_REQUESTS_PER_DOMAIN in the hour."""
    seconds = int(ctx.now.timestamp())
    slot = seconds // 3600
    domain = address.rsplit("@", 1)[-1].lower()
    for subject, limit, whose in (
            (f"signup-address:{ctx.remote_ip or '-'}", ACCOUNT_REQUESTS_PER_ADDRESS,
             "from your address"),
            (f"signup-domain:{domain}", ACCOUNT_REQUESTS_PER_DOMAIN, f"for addresses at {domain}")):
        key = (subject, "accounts/hour", slot)
        total = request_counts.add(ctx.conn, {key + ((slot + 1) * 3600,): 1})[key]
        if total > limit:
            wait = (slot + 1) * 3600 - seconds
            raise ServiceError(USER_ERROR, f"Too many new accounts were asked for {whose} in "
                                           f"the last hour; try again in {wait // 60 + 1} "
                                           "minutes.")


def offer_account(ctx, address):
    """Mail `address` a link to create its account; when an account already
    has this login, its owner gets a notice instead (nothing tells which).
    Errors: 501 self-registration is off (createemailregexp empty), or the
    address does not match createemailregexp, is blocked, or is no
    acceptable login (check_login_name); 32000 too many account requests
    from the client's address or for the address's domain in the hour
    (only requests that mail someone count).
    """
    _creation_allowed(ctx, address)
    existing = ctx.conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                (address,)).fetchone()
    if existing is None:
        check_login_name(ctx, address)
        if not _recently(ctx, "new_account", address=address):
            _count_request(ctx, address)
            outbox.add_message(ctx.conn, outbox.MAIL, "new_account", ctx.now, address=address)
    elif not _recently(ctx, "account_exists", user_id=existing["id"]):
        _count_request(ctx, address)
        outbox.add_message(ctx.conn, outbox.MAIL, "account_exists", ctx.now,
                           user_id=existing["id"])


def create_offered_account(ctx, secret, password, full_name):
    """Create the account a mailed link offered; its token is used up. The
    account joins the groups whose user_regexp matches, like any new one.
    Returns (id, login).
    Errors: 32000 a token that does not exist, expired or was used; 502,
    305 (check_password_rules); 501 the address no longer matches
    createemailregexp; 500 an account got the address meanwhile.
    """
    row = tokens.find(ctx.conn, tokens.ACCOUNT, secret, ctx.now)
    if row is None:
        raise ServiceError(USER_ERROR, _BAD_TOKEN)
    address = row["login"]
    _creation_allowed(ctx, address)
    if ctx.conn.execute("SELECT 1 FROM users WHERE lower(login) = lower(?)",
                        (address,)).fetchone() is not None:
        raise ServiceError(ACCOUNT_EXISTS, f"There is already an account with the login name "
                                           f"'{address}'.")
    check_login_name(ctx, address)
    check_password_rules(ctx, password)
    user_id = ctx.conn.execute(
        "INSERT INTO users (login, real_name, password_hash, disabled_text, email_enabled,"
        " created_at) VALUES (?, ?, ?, '', 1, ?) RETURNING id",
        (address, clean_text(full_name), ctx.auth.hash_password(password),
         dates.to_db(ctx.now))).fetchone()[0]
    membership.refresh_for_user(ctx.conn, user_id)
    tokens.use(ctx.conn, row)
    audit.record(ctx, "User", user_id)
    return user_id, address


def request_password_reset(ctx, login):
    """Mail the account of `login` a link to choose a new password; nothing
    is sent when no account has it, it is disabled, or a directory (LDAP)
    keeps its password (nothing tells)."""
    row = ctx.conn.execute("SELECT id, disabled_text FROM users WHERE lower(login) = lower(?)",
                           (login,)).fetchone()
    if row is not None and not row["disabled_text"] and not external.signs_in_through_directory(
            ctx.conn, row["id"]) and not _recently(
            ctx, "password_reset", user_id=row["id"]):
        outbox.add_message(ctx.conn, outbox.MAIL, "password_reset", ctx.now, user_id=row["id"],
                           data={"ip": ctx.remote_ip})


def reset_password(ctx, secret, password):
    """Choose a new password with a mailed link's token. The token and
    every other password token of the account are used up, and the
    account's login tokens end. Audited like a password change.
    Returns (id, login).
    Errors: 32000 a token that does not exist, expired or was used (or
    whose account was disabled), or a directory (LDAP) keeps the account's
    password; 502, 305 (check_password_rules).
    """
    row = tokens.find(ctx.conn, tokens.PASSWORD, secret, ctx.now)
    user = row and ctx.conn.execute("SELECT id, login, disabled_text FROM users WHERE id = ?",
                                    (row["user_id"],)).fetchone()
    if row is None or user is None or user["disabled_text"]:
        raise ServiceError(USER_ERROR, _BAD_TOKEN)
    if external.signs_in_through_directory(ctx.conn, user["id"]):
        raise ServiceError(USER_ERROR, external.DIRECTORY_KEEPS_PASSWORD)
    check_password_rules(ctx, password)
    ctx.conn.execute("UPDATE users SET password_hash = ? WHERE id = ?",
                     (ctx.auth.hash_password(password), user["id"]))
    tokens.use(ctx.conn, row)
    auth.delete_user_tokens(ctx.conn, user["id"])
    auth.reset_failed_logins(ctx.conn, user["login"])
    audit.record(ctx, "User", user["id"], "password")
    return user["id"], user["login"]


def token_purpose(ctx, kind, secret):
    """What a mailed token of `kind` (tokens.PASSWORD, tokens.ACCOUNT or
    EMAIL) is for: {"type": "password" | "account", "login"} (the account's
    login, or the address the account would get); for an e-mail change {"type":
    "emailnew" | "emailold", "login": the account's login now, "email": the
    address the token was mailed to}.
    Errors: 32000 a token that does not exist, expired or was used.
    """
    if kind == tokens.PASSWORD:
        row = tokens.find(ctx.conn, tokens.PASSWORD, secret, ctx.now)
        user = row and ctx.conn.execute("SELECT login, disabled_text FROM users WHERE id = ?",
                                        (row["user_id"],)).fetchone()
        if row is None or user is None or user["disabled_text"]:
            raise ServiceError(USER_ERROR, _BAD_TOKEN)
        return {"type": tokens.PASSWORD, "login": user["login"]}
    if kind == tokens.ACCOUNT:
        row = tokens.find(ctx.conn, tokens.ACCOUNT, secret, ctx.now)
        if row is None:
            raise ServiceError(USER_ERROR, _BAD_TOKEN)
        return {"type": tokens.ACCOUNT, "login": row["login"]}
    row, user = _email_token(ctx, secret, (tokens.EMAIL_NEW, tokens.EMAIL_OLD))
    return {"type": row["kind"], "login": user["login"], "email": row["login"]}


def cancel_token(ctx, kind, secret):
    """Cancel what a mailed token of `kind` (as token_purpose) offers:
    it, and every other token of its kind for the same account or address,
    stop working; the password or the missing account stay as they are. An
    e-mail address change is cancelled from either address: no link of it
    works any more, and when the link mailed to the address changed from
    cancels a change that was made already, the account gets that address
    back (while no other account took it) and its sessions end.
    Returns {"type", "login"} as token_purpose (the login it has afterwards).
    Errors: 32000 a token that does not exist, expired or was used.
    """
    if kind == EMAIL:
        return _cancel_email_change(ctx, secret)
    row = tokens.find(ctx.conn, kind, secret, ctx.now)
    if row is None:
        raise ServiceError(USER_ERROR, _BAD_TOKEN)
    if row["user_id"] is not None:
        login = ctx.conn.execute("SELECT login FROM users WHERE id = ?",
                                 (row["user_id"],)).fetchone()
        login = login["login"] if login is not None else ""
    else:
        login = row["login"]
    tokens.use(ctx.conn, row)
    return {"type": kind, "login": login}


# Changing one's own e-mail address ---------------------------------------------------

def require_email_change_allowed(ctx):
    """Errors: 32000 changing one's own address is turned off here
    (allowemailchange)."""
    if not ctx.param_is_on("allowemailchange"):
        raise ServiceError(USER_ERROR, "Changing your own e-mail address is turned off here "
                                       "(parameter allowemailchange); ask an administrator.")


def request_email_change(ctx, new_email, current_password):
    """Ask to change the caller's e-mail address (its login) to `new_email`:
    the new address is mailed a link to confirm the change, the current one
    a notice with a link that cancels it. The caller's own address again
    changes nothing.
    Errors: 32000 changing one's address is turned off (allowemailchange),
    or a change of the account's address is under way already; 300 a wrong
    current password (counted like a failed sign-in); 501, 500
    (check_login_name).
    """
    require_email_change_allowed(ctx)
    user = ctx.conn.execute("SELECT id, login FROM users WHERE id = ?",
                            (ctx.caller.id,)).fetchone()
    ctx.auth.check_current_password(ctx.conn, user["login"], current_password, ctx.now)
    if new_email == user["login"]:
        return
    if _email_change_under_way(ctx, user["id"]):
        raise ServiceError(USER_ERROR, "A change of your e-mail address is under way already: "
                                       "confirm it from the mail sent to the new address, or "
                                       "cancel it from either mail.")
    check_login_name(ctx, new_email, user["id"])
    tokens.issue(ctx.conn, tokens.EMAIL_REQUEST, ctx.now, user_id=user["id"], login=new_email)
    data = {"old": user["login"], "new": new_email}
    outbox.add_message(ctx.conn, outbox.MAIL, "email_change_new", ctx.now, user_id=user["id"],
                       address=new_email, data=data)
    outbox.add_message(ctx.conn, outbox.MAIL, "email_change_old", ctx.now, user_id=user["id"],
                       address=user["login"], data=data)


def confirm_email_change(ctx, secret, password):
    """Confirm a change of e-mail address with the link mailed to the new
    address: the account's login becomes the new address; its sessions, API
    keys and the link mailed to the old address stay. Audited as a change
    of the account's email. Returns (id, login).
    Errors: 32000 a token that does not exist, expired, was used or
    cancelled (or whose account was disabled); 300 a wrong password
    (counted like a failed sign-in); 500, 501 (check_login_name).
    """
    row, user = _email_token(ctx, secret, (tokens.EMAIL_NEW,))
    ctx.auth.check_current_password(ctx.conn, user["login"], password, ctx.now)
    new_email = row["login"]
    check_login_name(ctx, new_email, user["id"])
    _set_login(ctx, user, new_email)
    tokens.end(ctx.conn, user["id"], (tokens.EMAIL_NEW, tokens.EMAIL_REQUEST))
    return user["id"], new_email


def _email_change_under_way(ctx, user_id):
    return tokens.pending(ctx.conn, user_id, tokens.EMAIL_KINDS, ctx.now)


def _email_token(ctx, secret, kinds):
    """(token row, account row) of an e-mail change token of `kinds`.
    Errors: 32000 no such token (expired, used, cancelled), or its account
    is disabled or gone."""
    row = tokens.find(ctx.conn, kinds, secret, ctx.now)
    user = row and ctx.conn.execute("SELECT id, login, disabled_text FROM users WHERE id = ?",
                                    (row["user_id"],)).fetchone()
    if row is None or user is None or user["disabled_text"]:
        raise ServiceError(USER_ERROR, _BAD_TOKEN)
    return row, user


def _cancel_email_change(ctx, secret):
    row, user = _email_token(ctx, secret, (tokens.EMAIL_NEW, tokens.EMAIL_OLD))
    login = user["login"]
    if row["kind"] == tokens.EMAIL_OLD and login != row["login"]:
        # The change was made: the old address comes back, unless another
        # account took it meanwhile; every session of the account ends.
        taken = ctx.conn.execute("SELECT 1 FROM users WHERE lower(login) = lower(?) AND id <> ?",
                                 (row["login"], user["id"])).fetchone()
        if taken is None:
            _set_login(ctx, user, row["login"])
            auth.delete_user_tokens(ctx.conn, user["id"])
            login = row["login"]
    tokens.end(ctx.conn, user["id"], tokens.EMAIL_KINDS)
    return {"type": row["kind"], "login": login}


def _set_login(ctx, user, login):
    """Give account `user` the login `login` (groups by user_regexp follow),
    audited as a change of its email."""
    changes = {}
    if note(changes, "email", user["login"], login):
        ctx.conn.execute("UPDATE users SET login = ? WHERE id = ?", (login, user["id"]))
        membership.refresh_for_user(ctx.conn, user["id"])
        audit.record_changes(ctx, "User", user["id"], changes)


def self_registration_open(ctx):
    """True when people may create their own account by mail here (the
    parameter createemailregexp is not empty)."""
    return bool(ctx.param("createemailregexp"))
