"""Notifications: an account's mail preferences (the reference's email
preferences page: the relationship/event matrix, flag mail, user watching,
ignored bugs) and the delivery queue as administrators see it (a bugsvc
addition: messages that kept failing are parked there, and can be sent
again)."""

from .. import dates
from ..accounts import access, mail_settings as ms
from ..call.params import Params, as_bool
from ..bugs.lookup import visible_bug_id
from ..catalogue import catalog
from ..errors import (ServiceError, require_group, require_login, AUTH_FAILURE,
                      OBJECT_DOES_NOT_EXIST, OBJECT_NOT_SPECIFIED, PARAM_INVALID, USER_ERROR)
from ..store import outbox
from ..store.db import placeholders

# The reporter cannot be added to or removed from its role: the reference
# offers no such choice for it.
_NOT_FOR = {ms.REL_REPORTER: ("added_removed",)}
MAX_LIST = 1000


def _account(ctx, p):
    """(id, login) of the account whose settings the call reads or changes:
    the caller's own, or (editusers only) the one named by `user`.
    Errors: 410; 304 another account without editusers; 51 unknown account."""
    require_login(ctx)
    value = p.get("user")
    if value in (None, "") or str(value).strip().lower() in (str(ctx.caller.id),
                                                             ctx.caller.login.lower()):
        return ctx.caller.id, ctx.caller.login
    if not ctx.caller.in_group("editusers"):
        raise ServiceError(AUTH_FAILURE, "Sorry, you aren't a member of the 'editusers' group, "
                                         "and only users with that membership may change the "
                                         "mail preferences of other accounts.")
    text = str(value).strip()
    row = (catalog.user_by_id(ctx.conn, int(text)) if text.isdigit()
           else catalog.user_by_login(ctx.conn, text))
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user account '{text}'.")
    return row["id"], row["login"]


def _settings_object(ctx, user_id, login):
    conn = ctx.conn
    settings = ms.load(conn, user_id)
    relationships = {}
    for rel_name, relationship in ms.RELATIONSHIPS.items():
        if relationship == ms.REL_QA and not ctx.param_is_on("useqacontact"):
            continue
        relationships[rel_name] = {
            name: settings.wants(relationship, event) for name, event in ms.EVENTS.items()
            if name not in _NOT_FOR.get(relationship, ())}
    watching = catalog.logins_of(conn, ms.watched_by(conn, user_id))
    watchers = [row[0] for row in conn.execute(
        "SELECT u.login FROM user_watch w JOIN users u ON u.id = w.watcher"
        " WHERE w.watched = ? ORDER BY lower(u.login)", (user_id,))]
    account = conn.execute("SELECT email_enabled FROM users WHERE id = ?", (user_id,)).fetchone()
    ignored = [row[0] for row in conn.execute(
        "SELECT bug_id FROM email_bug_ignore WHERE user_id = ? ORDER BY bug_id", (user_id,))]
    watchers_param = [name.strip().lower() for name in
                      ctx.param("globalwatchers").replace(",", " ").split()]
    return {
        "user": login,
        "email_enabled": bool(account["email_enabled"]),
        "global_watcher": login.lower() in watchers_param,
        "flags": {name: settings.wants(ms.REL_ANY, event)
                  for name, event in ms.GLOBAL_EVENTS.items()},
        "relationships": relationships,
        "watching": sorted(watching.values(), key=str.lower),
        "watchers": watchers,
        "ignored_bugs": [bug_id for bug_id in ignored
                         if access.visible_bug_ids(ctx, [bug_id])],
    }


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
    user_id, login = _account(ctx, Params(params))
    return {"email_settings": _settings_object(ctx, user_id, login)}


def _boolean_map(value, name, allowed):
    """{name: bool} of an object parameter whose keys must be in `allowed`.
    Errors: 53."""
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise ServiceError(PARAM_INVALID, f"The parameter '{name}' must be an object.")
    unknown = [key for key in value if key not in allowed]
    if unknown:
        raise ServiceError(PARAM_INVALID, f"'{unknown[0]}' is not a choice of '{name}'; the "
                                          f"choices are: {', '.join(allowed)}.")
    return {key: as_bool(flag) for key, flag in value.items()}


def _change_list(value, name):
    """(add, remove, set) of a list parameter: an object with add/remove, or
    a list (set). Errors: 53."""
    if value is None:
        return [], [], None
    if isinstance(value, list):
        return [], [], value
    if not isinstance(value, dict) or set(value) - {"add", "remove", "set"}:
        raise ServiceError(PARAM_INVALID, f"The parameter '{name}' must be a list, or an object "
                                          "with add, remove and set.")
    p = Params(value)
    return p.list("add"), p.list("remove"), p.list("set") if p.has("set") else None


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
    user_id, login = _account(ctx, p)
    conn = ctx.conn
    choices = {}
    for name, wanted in _boolean_map(p.get("flags"), "flags", list(ms.GLOBAL_EVENTS)).items():
        choices[(ms.REL_ANY, ms.GLOBAL_EVENTS[name])] = wanted
    relationships = p.get("relationships")
    if relationships is not None and not isinstance(relationships, dict):
        raise ServiceError(PARAM_INVALID, "The parameter 'relationships' must be an object.")
    for rel_name, events in (relationships or {}).items():
        if rel_name not in ms.RELATIONSHIPS:
            raise ServiceError(PARAM_INVALID, f"'{rel_name}' is not a relationship; they are: "
                                              f"{', '.join(ms.RELATIONSHIPS)}.")
        relationship = ms.RELATIONSHIPS[rel_name]
        allowed = [name for name in ms.EVENTS if name not in _NOT_FOR.get(relationship, ())]
        for name, wanted in _boolean_map(events, f"relationships.{rel_name}", allowed).items():
            choices[(relationship, ms.EVENTS[name])] = wanted
    ms.save(conn, user_id, choices)
    add, remove, replace = _change_list(p.get("watching"), "watching")
    if replace is not None:
        wanted = {_watchable(ctx, login_name, user_id) for login_name in replace}
        current = set(ms.watched_by(conn, user_id))
        add_ids, remove_ids = wanted - current, current - wanted
    else:
        add_ids = {_watchable(ctx, login_name, user_id) for login_name in add}
        remove_ids = {_watched_id(ctx, login_name) for login_name in remove} - {None}
    for watched in sorted(remove_ids):
        conn.execute("DELETE FROM user_watch WHERE watcher = ? AND watched = ?",
                     (user_id, watched))
    for watched in sorted(add_ids):
        conn.execute("INSERT INTO user_watch (watcher, watched) VALUES (?, ?)"
                     " ON CONFLICT (watcher, watched) DO NOTHING", (user_id, watched))
    add, remove, replace = _change_list(p.get("ignored_bugs"), "ignored_bugs")
    if replace is not None:
        conn.execute("DELETE FROM email_bug_ignore WHERE user_id = ?", (user_id,))
        add = replace
    for value in remove:
        text = str(value).strip()
        if text.isdigit():
            conn.execute("DELETE FROM email_bug_ignore WHERE user_id = ? AND bug_id = ?",
                         (user_id, int(text)))
    for value in add:
        conn.execute("INSERT INTO email_bug_ignore (user_id, bug_id) VALUES (?, ?)"
                     " ON CONFLICT (user_id, bug_id) DO NOTHING",
                     (user_id, visible_bug_id(ctx, value)))
    return {"email_settings": _settings_object(ctx, user_id, login)}


def _watched_id(ctx, login_name):
    row = catalog.user_by_login(ctx.conn, str(login_name).strip())
    return None if row is None else row["id"]


def _watchable(ctx, login_name, user_id):
    """The id of an account to watch. Errors: 51 missing or hidden; 32000 oneself."""
    name = str(login_name).strip()
    row = catalog.user_by_login(ctx.conn, name)
    if row is None or not access.can_see_user(ctx, row["id"]):
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user account '{name}'.")
    if row["id"] == user_id:
        raise ServiceError(USER_ERROR, "An account cannot watch itself.")
    return row["id"]


# The delivery queue -------------------------------------------------------------------

def _message_object(row, logins, webhooks):
    recipient = logins.get(row["user_id"]) if row["user_id"] is not None else row["address"]
    result = {"id": row["id"], "channel": row["channel"], "kind": row["kind"],
              "bug_id": row["bug_id"], "recipient": recipient, "webhook_id": row["webhook_id"],
              "state": row["state"], "attempts": row["attempts"],
              "last_error": row["last_error"],
              "created": dates.from_db(row["created_at"]),
              "done": dates.from_db(row["done_at"])}
    if row["webhook_id"] is not None:
        result["recipient"] = webhooks.get(row["webhook_id"])
    if row["state"] == outbox.PENDING:
        result["next_attempt"] = dates.from_db(row["next_attempt_at"][:19])
    return result


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
    states = p.str_list("state") or [outbox.PARKED]
    for state in states:
        if state not in outbox.STATES:
            raise ServiceError(PARAM_INVALID, f"'{state}' is not a state; they are: "
                                              f"{', '.join(outbox.STATES)}.")
    channel = p.str("channel")
    if channel is not None and channel not in (outbox.MAIL, outbox.WEBHOOK):
        raise ServiceError(PARAM_INVALID, "The channel is mail or webhook.")
    limit = min(max(p.int("limit", 100) or 100, 1), MAX_LIST)
    rows = outbox.messages(ctx.conn, states, limit, channel, p.int("after", 0) or 0)
    user_ids = sorted({row["user_id"] for row in rows if row["user_id"] is not None})
    logins = catalog.logins_of(ctx.conn, user_ids) if user_ids else {}
    webhook_ids = sorted({row["webhook_id"] for row in rows if row["webhook_id"] is not None})
    webhooks = dict(ctx.conn.execute(
        f"SELECT id, name FROM webhooks WHERE id IN ({placeholders(webhook_ids)})",
        webhook_ids).fetchall()) if webhook_ids else {}
    counts = {state: 0 for state in outbox.STATES}
    counts.update(dict(ctx.conn.execute(
        "SELECT state, COUNT(*) FROM outbox_messages GROUP BY state").fetchall()))
    return {"messages": [_message_object(row, logins, webhooks) for row in rows],
            "counts": counts}


def resend(ctx, params):
    """Send parked (or dropped) messages again (administrators): each is
    queued as new, due at once, and rendered again for its recipient.

    params: ids (message ids).
    Returns {"resent": [ids queued]}: ids of messages that are not parked or
    dropped (or do not exist) are left out.
    Errors: 410 logged out; 304 not in admin; 50 no ids; 52 a bad id.
    """
    require_group(ctx, "admin", "send messages again")
    p = Params(params)
    ids = p.id_list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the messages to send again "
                                                 "(ids).")
    return {"resent": outbox.resend(ctx.conn, list(dict.fromkeys(ids)), ctx.now)}
