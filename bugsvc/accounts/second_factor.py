"""The second factor of a sign-in: time-based one-time codes (TOTP, RFC
6238: six digits every 30 seconds from an authenticator app, by pyotp), the
recovery codes that stand in for the app, and the page sign-ins that wait
for a code.

Enrolment makes a secret that the account's owner is shown once (as text,
as an otpauth:// link and as a QR code) and that works only after a first
code from the app confirms it; confirming gives RECOVERY_CODES recovery
codes, shown once and kept as SHA-256 digests (80 random bits each), each
usable once. The secret is never shown again, nor in any answer of the
interface. A code is accepted for its own 30-second step and one step
either side (clocks drift); a code of a step no later than the last one
accepted is refused, so an overheard code does not work twice.

A password sign-in of an account with a second factor needs a code
(Authenticator.complete_sign_in); API keys need none. The parameter
mfa_group names a group whose members must enrol.
"""

import hashlib
import hmac
import re
import secrets
from datetime import timedelta

import pyotp
import segno

from .. import dates
from ..catalogue import settings
from ..errors import (
    AUTH_FAILURE,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    SECOND_FACTOR_ENROLMENT_REQUIRED,
    SECOND_FACTOR_INVALID,
    SECOND_FACTOR_REQUIRED,
    USER_ERROR,
    ServiceError,
)
from ..store import audit


DIGITS = 6
STEP_SECONDS = 30
# Steps either side of the current one whose code is accepted.
DRIFT_STEPS = 1
RECOVERY_CODES = 10
_RECOVERY_ALPHABET = "ABCDEFGHJKLMNPQRSTUVWXYZ23456789"
_RECOVERY_LENGTH = 16                # 16 characters of 32: 80 bits
# A page sign-in waits this long for its code (or enrolment).
PENDING_MAX_AGE = timedelta(minutes=10)
# An enrolment not confirmed in this time starts over with a new secret.
ENROLMENT_MAX_AGE = timedelta(hours=1)
PENDING_SECRET_LENGTH = 32          # characters of token_urlsafe(24): 192 bits
# Longer input is no code of ours (checked before any work).
_MAX_CODE_LENGTH = 64
_SEPARATORS = re.compile(r"[\s-]+")


def secret_hash(secret):
    """The stored form of a recovery code or a waiting sign-in's secret:
    SHA-256 hex (each holds enough random bits that no faster hash of
    guesses finds one)."""
    return hashlib.sha256(secret.encode("utf-8")).hexdigest()


# Codes ---------------------------------------------------------------------------

def _totp(secret):
    return pyotp.TOTP(secret, digits=DIGITS, interval=STEP_SECONDS)


def current_code(secret, now):
    """The code the app shows for `secret` at `now` (for tests and tools)."""
    return _totp(secret).at(now)


def otpauth_uri(secret, login, issuer):
    """The otpauth:// link an authenticator app takes `secret` from."""
    return _totp(secret).provisioning_uri(name=login, issuer_name=issuer)


def qr_code_svg(uri):
    """`uri` as a QR code: an SVG document (text) drawn here, so no other
    site ever sees the secret it holds."""
    return segno.make(uri, error="m").svg_inline(scale=4, title="QR code of the enrolment link",
                                                 dark="#000", light="#fff")


def _normalised(code):
    """`code` without spaces and hyphens, upper case; None when it cannot
    be a code (not text, or longer than any code)."""
    if not isinstance(code, str) or len(code) > _MAX_CODE_LENGTH:
        return None
    return _SEPARATORS.sub("", code).upper()


def _matching_step(secret, code, now):
    """The time step whose code `code` is (within DRIFT_STEPS of now), or None."""
    totp = _totp(secret)
    step = totp.timecode(now)
    for candidate in range(step - DRIFT_STEPS, step + DRIFT_STEPS + 1):
        if hmac.compare_digest(totp.generate_otp(candidate), code):
            return candidate
    return None


# Enrolment -----------------------------------------------------------------------

def is_enrolled(conn, user_id):
    """True when account `user_id` has a confirmed second factor."""
    return conn.execute("SELECT 1 FROM second_factors WHERE user_id = ?"
                        " AND confirmed_at IS NOT NULL", (user_id,)).fetchone() is not None


def due(conn, user_id):
    """What account `user_id`'s sign-in needs after its first factor:
    "code" (it has a second factor), "enrol" (a member of mfa_group
    without one) or None."""
    if is_enrolled(conn, user_id):
        return "code"
    if must_enrol(conn, user_id, mfa_group(conn)):
        return "enrol"
    return None


def must_enrol(conn, user_id, mfa_group):
    """True when account `user_id` is a member of group `mfa_group` (a
    name; "" for none) and has no second factor yet."""
    return _member(conn, user_id, mfa_group) and not is_enrolled(conn, user_id)


def _member(conn, user_id, group):
    """True when account `user_id` is a member of the group named `group`
    ("" names none)."""
    return bool(group) and conn.execute(
        "SELECT 1 FROM user_groups ug JOIN groups g ON g.id = ug.group_id WHERE ug.user_id = ?"
        " AND g.name = ? AND ug.is_bless = 0", (user_id, group)).fetchone() is not None


def begin_enrolment(conn, user_id, now):
    """The secret of account `user_id`'s enrolment: the one waiting for its
    first code when younger than ENROLMENT_MAX_AGE, else a new one. Returns
    None when the account has a confirmed second factor already."""
    row = conn.execute("SELECT secret, created_at, confirmed_at FROM second_factors"
                       " WHERE user_id = ?", (user_id,)).fetchone()
    if row is not None and row["confirmed_at"] is not None:
        return None
    if row is not None and row["created_at"] >= dates.to_db(now - ENROLMENT_MAX_AGE):
        return row["secret"]
    secret = pyotp.random_base32()
    conn.execute("DELETE FROM second_factors WHERE user_id = ?", (user_id,))
    conn.execute("INSERT INTO second_factors (user_id, secret, created_at) VALUES (?, ?, ?)",
                 (user_id, secret, dates.to_db(now)))
    return secret


def confirm_enrolment(conn, user_id, code, now):
    """Confirm account `user_id`'s waiting enrolment with a first `code`.
    Returns the new recovery codes (shown once), or None when there is no
    enrolment waiting or the code is not its current one."""
    row = conn.execute("SELECT secret, created_at FROM second_factors WHERE user_id = ?"
                       " AND confirmed_at IS NULL", (user_id,)).fetchone()
    code = _normalised(code)
    if row is None or not code or row["created_at"] < dates.to_db(now - ENROLMENT_MAX_AGE):
        return None
    step = _matching_step(row["secret"], code, now)
    if step is None:
        return None
    conn.execute("UPDATE second_factors SET confirmed_at = ?, last_step = ? WHERE user_id = ?",
                 (dates.to_db(now), step, user_id))
    return new_recovery_codes(conn, user_id)


def new_recovery_codes(conn, user_id):
    """Replace account `user_id`'s recovery codes with RECOVERY_CODES new
    ones; returns them (XXXX-XXXX-XXXX-XXXX), which are not stored."""
    conn.execute("DELETE FROM recovery_codes WHERE user_id = ?", (user_id,))
    codes = []
    for _ in range(RECOVERY_CODES):
        raw = "".join(secrets.choice(_RECOVERY_ALPHABET) for _ in range(_RECOVERY_LENGTH))
        conn.execute("INSERT INTO recovery_codes (code_hash, user_id) VALUES (?, ?)",
                     (secret_hash(raw), user_id))
        codes.append("-".join(raw[i:i + 4] for i in range(0, _RECOVERY_LENGTH, 4)))
    return codes


def recovery_codes_left(conn, user_id):
    """How many unused recovery codes account `user_id` has."""
    return conn.execute("SELECT COUNT(*) FROM recovery_codes WHERE user_id = ?",
                        (user_id,)).fetchone()[0]


def remove(conn, user_id):
    """Remove account `user_id`'s second factor (confirmed or waiting), its
    recovery codes and its page sign-ins waiting for a code. Returns True
    when it had a confirmed one."""
    had = is_enrolled(conn, user_id)
    conn.execute("DELETE FROM second_factors WHERE user_id = ?", (user_id,))
    conn.execute("DELETE FROM recovery_codes WHERE user_id = ?", (user_id,))
    conn.execute("DELETE FROM pending_sign_ins WHERE user_id = ?", (user_id,))
    return had


# Checking a code ---------------------------------------------------------------------

def check_code(conn, user_id, code, now):
    """True when `code` is account `user_id`'s current TOTP code (not used
    before: its step is later than the last one accepted, which it becomes)
    or one of its unused recovery codes (which is used up). Writes on
    `conn` (a write transaction)."""
    code = _normalised(code)
    if not code:
        return False
    row = conn.execute("SELECT secret, last_step FROM second_factors WHERE user_id = ?"
                       " AND confirmed_at IS NOT NULL", (user_id,)).fetchone()
    if row is None:
        return False
    if code.isdigit() and len(code) == DIGITS:
        step = _matching_step(row["secret"], code, now)
        if step is None or step <= row["last_step"]:
            return False
        # Unless a concurrent sign-in took the same step first.
        taken = conn.execute("UPDATE second_factors SET last_step = ? WHERE user_id = ?"
                             " AND last_step < ? RETURNING user_id",
                             (step, user_id, step)).fetchall()
        return bool(taken)
    used = conn.execute("DELETE FROM recovery_codes WHERE code_hash = ? AND user_id = ?"
                        " RETURNING user_id", (secret_hash(code), user_id)).fetchall()
    return bool(used)


def mfa_group(conn):
    """The parameter mfa_group: the name of the group whose members must
    have a second factor ("" for none)."""
    row = conn.execute("SELECT value FROM params WHERE name = 'mfa_group'").fetchone()
    return row[0] if row is not None else settings.DEFINITIONS["mfa_group"][0]


def sign_in_refusal(conn, user_id, code, now):
    """Why account `user_id`, whose first factor was right, may not sign
    in with `code` (None when given no code): a ServiceError to raise, or
    None when it may (a right code is used up on `conn`)."""
    if is_enrolled(conn, user_id):
        if code is None or code == "":
            return ServiceError(SECOND_FACTOR_REQUIRED,
                                "This account signs in with a second factor: give the current "
                                "code of its authenticator app (or a recovery code) as the "
                                "parameter 'totp' (also Bugzilla_totp, Service_totp).")
        if not check_code(conn, user_id, code, now):
            return ServiceError(SECOND_FACTOR_INVALID,
                                "The code of the second factor ('totp') is wrong, expired or "
                                "used already.")
        return None
    group = mfa_group(conn)
    if must_enrol(conn, user_id, group):
        return ServiceError(SECOND_FACTOR_ENROLMENT_REQUIRED,
                            f"Members of the group '{group}' must sign in with a second "
                            "factor: set one up by signing in on the web pages first (API "
                            "keys keep working for scripts).")
    return None


# Page sign-ins waiting for the second factor ---------------------------------------------

def begin_pending(conn, user_id, ip_address, restrict, remember, enrol, now):
    """Store a page sign-in of account `user_id` whose password was right,
    from `ip_address`, that waits for a code (or, when `enrol`, for the
    enrolment of a second factor); `restrict`: its login token is to be
    valid only from that address; `remember`: the visitor asked to stay
    signed in. Returns its secret (only a digest is stored)."""
    secret = secrets.token_urlsafe(24)
    conn.execute("DELETE FROM pending_sign_ins WHERE created_at < ?",
                 (dates.to_db(now - PENDING_MAX_AGE),))
    conn.execute("INSERT INTO pending_sign_ins (token_hash, user_id, ip_address, restrict_login,"
                 " remember, enrol, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                 (secret_hash(secret), user_id, ip_address, int(bool(restrict)),
                  int(bool(remember)), int(bool(enrol)), dates.to_db(now)))
    return secret


def find_pending(conn, secret, ip_address, now):
    """The waiting sign-in {user_id, login, restrict_login, remember, enrol}
    of `secret`: None when unknown, used, older than PENDING_MAX_AGE, of a
    disabled account, or sent from another address than its password."""
    if not isinstance(secret, str) or len(secret) != PENDING_SECRET_LENGTH:
        return None
    row = conn.execute("SELECT p.user_id, u.login, p.ip_address, p.restrict_login, p.remember,"
                       " p.enrol,"
                       " p.created_at, u.disabled_text FROM pending_sign_ins p"
                       " JOIN users u ON u.id = p.user_id WHERE p.token_hash = ?",
                       (secret_hash(secret),)).fetchone()
    if (row is None or row["created_at"] < dates.to_db(now - PENDING_MAX_AGE)
            or row["disabled_text"] or row["ip_address"] != ip_address):
        return None
    return row


def end_pending(conn, secret):
    """The waiting sign-in of `secret` stops working (it was completed)."""
    conn.execute("DELETE FROM pending_sign_ins WHERE token_hash = ?", (secret_hash(secret),))


# An account's own second factor, and an administrator's reset -------------------------

def issuer(conn):
    """The name authenticator apps show beside the codes: the host of the
    parameter urlbase, or "bugsvc" while it is not set."""
    row = conn.execute("SELECT value FROM params WHERE name = 'urlbase'").fetchone()
    host = (row[0] if row is not None else "").split("://", 1)[-1].split("/", 1)[0]
    return host or "bugsvc"


def enrolment_link(conn, secret, login):
    """{"secret", "uri", "qr_code"}: what an authenticator app takes
    `secret` of account `login` from (the text, the otpauth:// link, the
    link as an SVG QR code)."""
    uri = otpauth_uri(secret, login, issuer(conn))
    return {"secret": secret, "uri": uri, "qr_code": qr_code_svg(uri)}


def status(ctx, user_id=None):
    """The second factor of the caller, or (editusers) of account
    `user_id`: {"enabled", "recovery_codes_left", "required" (a member of
    mfa_group)}; never its secret.
    Errors: 304 another account's, outside editusers."""
    if user_id is not None and user_id != ctx.caller.id:
        _require_editusers(ctx, "see another account's second factor")
    else:
        user_id = ctx.caller.id
    return {"enabled": is_enrolled(ctx.conn, user_id),
            "recovery_codes_left": recovery_codes_left(ctx.conn, user_id),
            "required": _member(ctx.conn, user_id, mfa_group(ctx.conn))}


def _require_editusers(ctx, what):
    if not ctx.caller.in_group("editusers"):
        raise ServiceError(AUTH_FAILURE, "Sorry, you aren't a member of the 'editusers' group, "
                                         f"and only users with that membership may {what}.")


def start(ctx):
    """Start (or show again, while it waits for its first code) the
    caller's enrolment: enrolment_link's answer.
    Errors: 32000 the caller has a second factor already."""
    secret = begin_enrolment(ctx.conn, ctx.caller.id, ctx.now)
    if secret is None:
        raise ServiceError(USER_ERROR, "You have a second factor already; disable it first to "
                                       "set up another.")
    return enrolment_link(ctx.conn, secret, ctx.caller.login)


def confirm(ctx, code):
    """Confirm the caller's enrolment with the app's first `code`.
    Returns the recovery codes (shown once).
    Errors: 331 not the app's current code (or no enrolment waiting)."""
    codes = confirm_enrolment(ctx.conn, ctx.caller.id, code, ctx.now)
    if codes is None:
        raise ServiceError(SECOND_FACTOR_INVALID, "That code is not the one your authenticator "
                                                  "app shows now; try again.")
    return codes


def disable(ctx, code, password):
    """Remove the caller's second factor, proved by a current `code` (or
    a recovery code) or by the account's `password`. A wrong code or
    password counts against the login name like a wrong password (see
    Authenticator.check_current_code and check_current_password).
    Errors: 332 a member of mfa_group must keep one; 331 a wrong code;
    300 a wrong password; 50 neither given; 32000 the login name waits."""
    group = mfa_group(ctx.conn)
    if group and ctx.caller.in_group(group):
        raise ServiceError(SECOND_FACTOR_ENROLMENT_REQUIRED,
                           f"Members of the group '{group}' must keep a second factor.")
    if code:
        ctx.auth.check_current_code(ctx.conn, ctx.caller.id, ctx.caller.login, code, ctx.now)
    elif password:
        ctx.auth.check_current_password(ctx.conn, ctx.caller.login, password, ctx.now)
    else:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Give a current code of your authenticator "
                                                 "app, or your password, to disable it.")
    remove(ctx.conn, ctx.caller.id)


def reset(ctx, user_id):
    """An administrator (editusers) removes account `user_id`'s second
    factor (a lost phone), recorded in the audit log. Returns whether it
    had one.
    Errors: 304 not in editusers; 51 no such account."""
    _require_editusers(ctx, "reset another account's second factor")
    if ctx.conn.execute("SELECT 1 FROM users WHERE id = ?", (user_id,)).fetchone() is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no account with the id {user_id}.")
    had = remove(ctx.conn, user_id)
    if had:
        audit.record(ctx, "User", user_id, "second_factor", "enabled", "reset")
    return had
