"""Mail preferences: which bug mail an account wants, by its relationship to
the bug and the kind of change (the reference's email preferences matrix),
whom it watches, and which bugs it ignores; reading and changing an
account's preferences (the reference's email preferences page; the calls
are services/notification.py's). recipients.py reads them.

Relationships and events carry the reference's numbers, so the stored
choices read the same. A choice is "I want mail" (true) or not, including
the two that the reference shows as exceptions: `unconfirmed` (mail even
while the bug is UNCONFIRMED) and `changed_by_me` (mail about my own
changes). Only the choices that differ from the defaults are stored; the
defaults are the reference's for a new account: everything on, except mail
about one's own changes, and CC list changes except for the reporter.
"""

from ..accounts.visibility import can_see_user
from ..bugs import visibility
from ..bugs.lookup import visible_bug_id
from ..call.params import Params, as_bool
from ..catalogue import catalog
from ..errors import (
    AUTH_FAILURE,
    OBJECT_DOES_NOT_EXIST,
    PARAM_INVALID,
    USER_ERROR,
    ServiceError,
    require_login,
)
from ..store.db import placeholders


REL_ASSIGNEE, REL_QA, REL_REPORTER, REL_CC, REL_GLOBAL_WATCHER, REL_ANY = 0, 1, 2, 3, 5, 100
# Someone @mentioned in a comment (bugsvc's; the reference has no such role).
REL_MENTIONED = 6

EVT_OTHER, EVT_ADDED_REMOVED, EVT_COMMENT, EVT_ATTACHMENT, EVT_ATTACHMENT_DATA = 0, 1, 2, 3, 4
EVT_PROJ_MANAGEMENT, EVT_OPENED_CLOSED, EVT_KEYWORD, EVT_CC, EVT_DEPEND_BLOCK = 5, 6, 7, 8, 9
EVT_BUG_CREATED, EVT_COMPONENT = 10, 11
EVT_UNCONFIRMED, EVT_CHANGED_BY_ME = 50, 51
EVT_FLAG_REQUESTED, EVT_REQUESTED_FLAG = 100, 101

# The names the interface uses, in the order the preferences show them.
RELATIONSHIPS = {"assignee": REL_ASSIGNEE, "reporter": REL_REPORTER, "cc": REL_CC,
                 "qa_contact": REL_QA, "mentioned": REL_MENTIONED}
EVENTS = {"added_removed": EVT_ADDED_REMOVED, "bug_created": EVT_BUG_CREATED,
          "opened_closed": EVT_OPENED_CLOSED, "component": EVT_COMPONENT,
          "project_management": EVT_PROJ_MANAGEMENT, "comment": EVT_COMMENT,
          "attachment": EVT_ATTACHMENT, "attachment_data": EVT_ATTACHMENT_DATA,
          "keywords": EVT_KEYWORD, "cc": EVT_CC, "dependency": EVT_DEPEND_BLOCK,
          "other": EVT_OTHER, "unconfirmed": EVT_UNCONFIRMED, "changed_by_me": EVT_CHANGED_BY_ME}
GLOBAL_EVENTS = {"flag_requested": EVT_FLAG_REQUESTED, "requested_flag": EVT_REQUESTED_FLAG}
# The header names of the relationships (X-Bugzilla-Reason, X-Bugzilla-Watch-Reason).
HEADER_NAMES = {REL_ASSIGNEE: "AssignedTo", REL_REPORTER: "Reporter", REL_QA: "QAcontact",
                REL_CC: "CC", REL_GLOBAL_WATCHER: "GlobalWatcher", REL_MENTIONED: "Mentioned"}
# The reporter cannot be added to or removed from its role: the reference
# offers no such choice for it.
# A mention comes with a comment: its only choices are that comment, and
# whether it is wanted while the bug is UNCONFIRMED.
_NOT_FOR = {REL_REPORTER: ("added_removed",),
            REL_MENTIONED: tuple(name for name in EVENTS if name not in ("comment",
                                                                         "unconfirmed"))}


def default(relationship, event):
    """The choice of an account that never changed it."""
    if relationship == REL_ANY:
        return True
    if event == EVT_CHANGED_BY_ME:
        return False
    if event == EVT_CC:
        return relationship == REL_REPORTER
    return True


class Settings:
    """One account's choices: {(relationship, event): wanted} over the defaults."""

    def __init__(self, stored=None):
        self.stored = dict(stored or {})

    def wants(self, relationship, event):
        """True when the account wants mail for `event` in `relationship`."""
        return self.stored.get((relationship, event), default(relationship, event))

    def wants_any(self, relationship, events):
        """True when it wants mail for at least one of `events` in
        `relationship`; a global watcher always does."""
        if relationship == REL_GLOBAL_WATCHER:
            return True
        return any(self.wants(relationship, event) for event in events)


def load(conn, user_id):
    """The Settings of account `user_id`."""
    return Settings({(row[0], row[1]): bool(row[2]) for row in conn.execute(
        "SELECT relationship, event, enabled FROM email_settings WHERE user_id = ?",
        (user_id,))})


def save(conn, user_id, choices):
    """Store `choices` ({(relationship, event): wanted}) for account
    `user_id`; a choice equal to the default is stored as no row."""
    for (relationship, event), wanted in choices.items():
        conn.execute("DELETE FROM email_settings WHERE user_id = ? AND relationship = ?"
                     " AND event = ?", (user_id, relationship, event))
        if bool(wanted) != default(relationship, event):
            conn.execute("INSERT INTO email_settings (user_id, relationship, event, enabled)"
                         " VALUES (?, ?, ?, ?)", (user_id, relationship, event, int(wanted)))


def watched_by(conn, user_id):
    """Ids of the accounts `user_id` watches."""
    return [row[0] for row in conn.execute(
        "SELECT watched FROM user_watch WHERE watcher = ? ORDER BY watched", (user_id,))]


def watchers_of(conn, user_ids):
    """[(watcher, watched)] for the accounts watching any of `user_ids`."""
    user_ids = sorted(set(user_ids))
    if not user_ids:
        return []
    return [(row[0], row[1]) for row in conn.execute(
        f"SELECT watcher, watched FROM user_watch WHERE watched IN ({placeholders(user_ids)})"
        " ORDER BY watcher, watched", user_ids)]


def ignores(conn, user_id, bug_id):
    """True when account `user_id` wants no mail about bug `bug_id`."""
    return conn.execute("SELECT 1 FROM email_bug_ignore WHERE user_id = ? AND bug_id = ?",
                        (user_id, bug_id)).fetchone() is not None


# Reading and changing an account's preferences --------------------------------

def _account(ctx, value):
    """(id, login) of the account whose settings are meant: the caller's
    own, or (editusers only) the one named by `value` (an id or login, as
    given; None or "": the caller's).
    Errors: 410; 304 another account without editusers; 51 unknown account."""
    require_login(ctx)
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
    settings = load(conn, user_id)
    relationships = {}
    for rel_name, relationship in RELATIONSHIPS.items():
        if relationship == REL_QA and not ctx.param_is_on("useqacontact"):
            continue
        relationships[rel_name] = {
            name: settings.wants(relationship, event) for name, event in EVENTS.items()
            if name not in _NOT_FOR.get(relationship, ())}
    watching = catalog.logins_of(conn, watched_by(conn, user_id))
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
        "flags": {name: settings.wants(REL_ANY, event)
                  for name, event in GLOBAL_EVENTS.items()},
        "relationships": relationships,
        "watching": sorted(watching.values(), key=str.lower),
        "watchers": watchers,
        "ignored_bugs": [bug_id for bug_id in ignored
                         if visibility.visible_bug_ids(ctx, [bug_id])],
    }


def settings_of(ctx, user=None):
    """The mail preferences of account `user` (see _account): {"user",
    "email_enabled", "global_watcher", "flags": {"flag_requested",
    "requested_flag"}, "relationships": {relationship: {event: wanted}}
    (qa_contact while useqacontact is on; no added_removed for the
    reporter), "watching", "watchers", "ignored_bugs" (the visible ones)}.
    Errors: 410, 304, 51 (see _account).
    """
    user_id, login = _account(ctx, user)
    return _settings_object(ctx, user_id, login)


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


def update_settings(ctx, user=None, flags=None, relationships=None, watching=None,
                    ignored_bugs=None):
    """Change the mail preferences of account `user` (see _account); what is
    None stays. All values as given: flags {flag_requested, requested_flag:
    bool}, relationships {relationship: {event: bool}}, watching (a list of
    logins, or {add, remove, set}), ignored_bugs (a list of bug ids or
    aliases, or {add, remove, set}). Returns the preferences afterwards (as
    settings_of).
    Errors: 410, 304, 51 (see _account); 51 an unknown account to watch (an
    account hidden by usevisibilitygroups answers alike); 53 an unknown
    relationship or event, or a value of the wrong shape; 100/101/102 a bug
    to ignore that the caller cannot see; 32000 watching oneself.
    """
    user_id, login = _account(ctx, user)
    conn = ctx.conn
    choices = {}
    for name, wanted in _boolean_map(flags, "flags", list(GLOBAL_EVENTS)).items():
        choices[(REL_ANY, GLOBAL_EVENTS[name])] = wanted
    if relationships is not None and not isinstance(relationships, dict):
        raise ServiceError(PARAM_INVALID, "The parameter 'relationships' must be an object.")
    for rel_name, events in (relationships or {}).items():
        if rel_name not in RELATIONSHIPS:
            raise ServiceError(PARAM_INVALID, f"'{rel_name}' is not a relationship; they are: "
                                              f"{', '.join(RELATIONSHIPS)}.")
        relationship = RELATIONSHIPS[rel_name]
        allowed = [name for name in EVENTS if name not in _NOT_FOR.get(relationship, ())]
        for name, wanted in _boolean_map(events, f"relationships.{rel_name}", allowed).items():
            choices[(relationship, EVENTS[name])] = wanted
    save(conn, user_id, choices)
    add, remove, replace = _change_list(watching, "watching")
    if replace is not None:
        wanted = {_watchable(ctx, login_name, user_id) for login_name in replace}
        current = set(watched_by(conn, user_id))
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
    add, remove, replace = _change_list(ignored_bugs, "ignored_bugs")
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
    return _settings_object(ctx, user_id, login)


def _watched_id(ctx, login_name):
    row = catalog.user_by_login(ctx.conn, str(login_name).strip())
    return None if row is None else row["id"]


def _watchable(ctx, login_name, user_id):
    """The id of an account to watch. Errors: 51 missing or hidden; 32000 oneself."""
    name = str(login_name).strip()
    row = catalog.user_by_login(ctx.conn, name)
    if row is None or not can_see_user(ctx, row["id"]):
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user account '{name}'.")
    if row["id"] == user_id:
        raise ServiceError(USER_ERROR, "An account cannot watch itself.")
    return row["id"]
