"""Mail about an account rather than a bug: the link to choose a new
password, the link to create an account, the notice to an address that
already has an account, the two mails of an e-mail address change (the
link that confirms it, to the new address; the notice with a link that
cancels it, to the current one), the notice that a webhook was
disabled, and the notice that someone acts as the account (sudo).

The secret of a mailed link is made when the mail is rendered, in the
worker's transaction, and exists only in the mail: the outbox never holds
it. A mail tried twice carries two secrets; either works, once.
"""

from ..accounts import tokens
from ..store import outbox
from . import message
from .message import Drop


def _mail(ctx, to, subject, lines, headers=()):
    return message.new_mail(ctx, to, subject, ctx.now, list(headers), "\n".join(lines) + "\n")


def _account(ctx, user_id):
    row = ctx.conn.execute("SELECT id, login, real_name, disabled_text FROM users WHERE id = ?",
                           (user_id,)).fetchone()
    if row is None:
        raise Drop("the account no longer exists")
    return row


def password_reset(ctx, message_row):
    """The link to choose a new password (its token made now). Errors:
    Drop for a disabled account."""
    user = _account(ctx, message_row["user_id"])
    if user["disabled_text"]:
        raise Drop("the account is disabled")
    secret = tokens.issue(ctx.conn, tokens.PASSWORD, ctx.now, user_id=user["id"])
    days = tokens.MAX_AGE.days
    data = outbox.message_data(message_row)
    lines = [
        f"Someone (from the address {data.get('ip', 'unknown')}) asked to change the password "
        f"of the account {user['login']}.",
        "",
        "To choose a new password, open this link:",
        f"{ctx.param('urlbase')}token.cgi?t={secret}&a=cfmpw",
        "",
        f"The link works once, for {days} days. If you did not ask for it, ignore this mail:",
        "your password stays as it is. To make the link stop working at once, open:",
        f"{ctx.param('urlbase')}token.cgi?t={secret}&a=cxlpw",
        "",
        f"(Over the REST interface: POST /rest/user/reset_password with reset_token {secret}",
        "and the new password.)",
    ]
    return _mail(ctx, message.address_of(ctx, user["login"]), "Choose a new password", lines)


def new_account(ctx, message_row):
    """The link to create an account for an address (its token made now).
    Errors: Drop when the address got an account meanwhile."""
    address = message_row["address"]
    if ctx.conn.execute("SELECT 1 FROM users WHERE lower(login) = lower(?)",
                        (address,)).fetchone() is not None:
        raise Drop("an account with this address exists")
    secret = tokens.issue(ctx.conn, tokens.ACCOUNT, ctx.now, login=address)
    lines = [
        f"Someone asked to create an account for the address {address}.",
        "",
        "To create it, open this link and choose your name and password:",
        f"{ctx.param('urlbase')}token.cgi?t={secret}&a=request_new_account",
        "",
        f"The link works once, for {tokens.MAX_AGE.days} days. If you did not ask for it,",
        "ignore this mail: no account is made. To make the link stop working at once, open:",
        f"{ctx.param('urlbase')}token.cgi?t={secret}&a=cancel_new_account",
        "",
        f"(Over the REST interface: POST /rest/user/create_account with account_token {secret},",
        "a password and your full name.)",
    ]
    return _mail(ctx, address + ctx.param("emailsuffix"), "Create your account", lines)


def account_exists(ctx, message_row):
    """The notice that an address asked for an account already has one."""
    user = _account(ctx, message_row["user_id"])
    lines = [
        f"Someone asked to create an account for the address {user['login']}, which already",
        "has one, so no new account was made.",
        "",
        "If it was you and you forgot your password, ask for a new one on the sign-in page",
        f"{ctx.param('urlbase') or 'of the tracker'}. If it was not you, ignore this mail.",
    ]
    return _mail(ctx, message.address_of(ctx, user["login"]), "You already have an account",
                 lines)


def email_change_new(ctx, message_row):
    """The link that confirms a change of e-mail address, to the new
    address (its token made now), with a link that cancels it. Errors: Drop
    when the change was cancelled or made meanwhile, or the account is
    disabled."""
    user = _account(ctx, message_row["user_id"])
    data = outbox.message_data(message_row)
    if user["disabled_text"]:
        raise Drop("the account is disabled")
    if not tokens.pending(ctx.conn, user["id"], (tokens.EMAIL_REQUEST,), ctx.now,
                          login=data["new"]):
        raise Drop("the address change was cancelled, confirmed or has expired")
    secret = tokens.issue(ctx.conn, tokens.EMAIL_NEW, ctx.now, user_id=user["id"],
                          login=data["new"])
    urlbase = ctx.param("urlbase")
    lines = [
        f"Someone asked to change the e-mail address of the account {data['old']} to this",
        f"address, {data['new']}.",
        "",
        "To confirm the change, open this link (it asks for the account's password):",
        f"{urlbase}token.cgi?t={secret}&a=cfmem",
        "",
        "If you did not ask for it, or do not want it, open this link to cancel it:",
        f"{urlbase}token.cgi?t={secret}&a=cxlem",
        "",
        f"If you do nothing, nothing changes; the links work for {tokens.MAX_AGE.days} days.",
        "",
        f"(Over the REST interface: POST /rest/user/change_email with email_token {secret}",
        "and the password.)",
    ]
    return _mail(ctx, message.address_of(ctx, data["new"]), "Confirm your new e-mail address",
                 lines, headers=[("X-Bugzilla-Type", "admin")])


def email_change_old(ctx, message_row):
    """The notice of a change of e-mail address, to the address changed
    from (its token made now): its link cancels the change, and takes the
    address back if the change was confirmed already."""
    user = _account(ctx, message_row["user_id"])
    data = outbox.message_data(message_row)
    secret = tokens.issue(ctx.conn, tokens.EMAIL_OLD, ctx.now, user_id=user["id"],
                          login=data["old"])
    lines = [
        f"Someone asked to change the e-mail address of your account {data['old']} to",
        f"{data['new']}. The change is made once that address confirms it.",
        "",
        "If you did not ask for it, open this link to cancel it (if it was made already,",
        "your account gets this address back and every session of it ends):",
        f"{ctx.param('urlbase')}token.cgi?t={secret}&a=cxlem",
        "",
        f"The link works for {tokens.MAX_AGE.days} days. If you asked for the change, there is",
        "nothing to do here.",
    ]
    return _mail(ctx, message.address_of(ctx, data["old"]), "Your e-mail address is changing",
                 lines, headers=[("X-Bugzilla-Type", "admin"), ("Importance", "High")])


def webhook_disabled(ctx, message_row):
    """The notice to a webhook's owner that it was disabled, with why."""
    user = _account(ctx, message_row["user_id"])
    data = outbox.message_data(message_row)
    lines = [
        f"Your webhook \"{data['name']}\" (id {data['webhook_id']}, {data['url']}) was disabled:",
        data["reason"],
        "",
        f"Last error: {data['error']}",
        "",
        "The calls waiting for it are kept; changes made while it is disabled are not sent",
        "to it. Enable it again once its receiver works (PUT /rest/webhooks/"
        f"{data['webhook_id']} with",
        "{\"enabled\": true}): the calls that failed are sent again, in order.",
    ]
    return _mail(ctx, message.address_of(ctx, user["login"]),
                 f"Webhook {data['name']} was disabled", lines,
                 headers=[("X-Bugzilla-Type", "admin")])


def sudo_begun(ctx, message_row):
    """The notice to an account that a member of bz_sudoers began acting as
    it (relogin.cgi's sudo), with who and the reason given."""
    user = _account(ctx, message_row["user_id"])
    data = outbox.message_data(message_row)
    who = data["sudoer"]
    if data.get("sudoer_name"):
        who = f"{data['sudoer_name']} <{data['sudoer']}>"
    lines = [
        f"{who} began acting as your account {user['login']} (Bugzilla's \"sudo\"):",
        "until they end it, or for at most "
        f"{data['hours']} hours, what they do on the web pages is done as you.",
        "",
        "The reason they gave:",
        data["reason"] or "(none)",
        "",
        "If you think this is wrong, ask an administrator of the installation.",
    ]
    return _mail(ctx, message.address_of(ctx, user["login"]),
                 f"{data['sudoer']} is acting as your account", lines,
                 headers=[("X-Bugzilla-Type", "admin")])


RENDERERS = {"password_reset": password_reset, "new_account": new_account,
             "account_exists": account_exists, "email_change_new": email_change_new,
             "email_change_old": email_change_old, "webhook_disabled": webhook_disabled,
             "sudo_begun": sudo_begun}
