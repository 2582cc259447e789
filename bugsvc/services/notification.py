"""Notifications: an account's mail preferences (the reference's email
preferences page: the relationship/event matrix, flag mail, user watching,
ignored bugs) and the delivery queue as administrators see it (a bugsvc
addition: messages that kept failing are parked there, and can be sent
again).
The behaviour lives in bugsvc/notify/mail_settings.py and delivery_queue.py."""

from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_group
from ..notify import delivery_queue, mail_settings


def get_email_settings(ctx, params):
    """An account's mail preferences.

    params: user (id or login; another account than the caller's needs
    editusers).
    Returns {"email_settings": {"user", "email_enabled" (set by
    administrators with User.update), "global_watcher" (named in the
    parameter globalwatchers), "flags": {"flag_requested",
    "requested_flag"}, "relationships": {"assignee" | "reporter" | "cc" |
    "qa_contact" (while useqacontact is on): {event: wanted}}, "watching"
    (logins the account watches), "watchers" (logins watching it),
    "ignored_bugs" (ids)}}. Events: added_removed (not for the reporter),
    bug_created, opened_closed, component, project_management, comment,
    attachment, attachment_data, keywords, cc, dependency, other, and the
    two exceptions: unconfirmed (mail also while the bug is UNCONFIRMED)
    and changed_by_me (mail also about my own changes).
    Errors: 410 logged out; 304 another account without editusers; 51
    unknown account.
    """
    return {"email_settings": mail_settings.settings_of(ctx, Params(params).get("user"))}


def update_email_settings(ctx, params):
    """Change an account's mail preferences; what is not given stays.

    params: user (id or login; another account needs editusers), flags
    {flag_requested, requested_flag: bool}, relationships {relationship:
    {event: bool}} (names as in get_email_settings), watching (a list of
    logins to watch, or {add, remove, set}), ignored_bugs (a list of bug
    ids or aliases, or {add, remove, set}).
    Returns {"email_settings": ...} as get_email_settings, after the change.
    Errors: 410 logged out; 304 another account without editusers; 51
    unknown account to change or to watch (an account hidden by
    usevisibilitygroups answers alike); 53 an unknown relationship or event,
    or a parameter of the wrong shape; 100/101/102 a bug to ignore that the
    caller cannot see; 32000 watching oneself.
    """
    p = Params(params)
    settings = mail_settings.update_settings(
        ctx, p.get("user"), p.get("flags"), p.get("relationships"), p.get("watching"),
        p.get("ignored_bugs"))
    return {"email_settings": settings}


# The delivery queue -------------------------------------------------------------------

def list_messages(ctx, params):
    """The delivery queue (administrators).

    params: state (pending, sent, dropped or parked; a list for several;
    default parked), channel (mail or webhook), after (only messages with
    a larger id), limit (default 100, at most 1000).
    Returns {"messages": [{"id", "channel", "kind" (bug, flag,
    password_reset, new_account, account_exists, webhook_disabled, or the
    webhook event), "bug_id", "recipient" (a login, an address, or the
    webhook's name), "webhook_id", "state", "attempts", "last_error" (why it
    failed, or why it was dropped), "created", "done", "next_attempt"
    (pending only)}], "counts": {state: number}}. The content of a message
    is never stored: it is made for its recipient when it is sent.
    Errors: 410 logged out; 304 not in admin; 53 an unknown state or
    channel; 52 a bad limit or after.
    """
    require_group(ctx, "admin", "see the delivery queue")
    p = Params(params)
    return delivery_queue.messages(ctx, p.str_list("state"), p.str("channel"),
                                   p.int("limit", 100), p.int("after", 0))


def resend(ctx, params):
    """Send parked (or dropped) messages again (administrators): each is
    queued as new, due at once, and rendered again for its recipient.

    params: ids (message ids).
    Returns {"resent": [ids queued]}: ids of messages that are not parked or
    dropped (or do not exist) are left out.
    Errors: 410 logged out; 304 not in admin; 50 no ids; 52 a bad id.
    """
    require_group(ctx, "admin", "send messages again")
    ids = Params(params).id_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the messages to send again "
                                                 "(ids).")
    return {"resent": delivery_queue.resend(ctx, ids)}
