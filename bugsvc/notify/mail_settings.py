"""Mail preferences: which bug mail an account wants, by its relationship to
the bug and the kind of change (the reference's email preferences matrix),
whom it watches, and which bugs it ignores.

Relationships and events carry the reference's numbers, so the stored
choices read the same. A choice is "I want mail" (true) or not, including
the two that the reference shows as exceptions: `unconfirmed` (mail even
while the bug is UNCONFIRMED) and `changed_by_me` (mail about my own
changes). Only the choices that differ from the defaults are stored; the
defaults are the reference's for a new account: everything on, except mail
about one's own changes, and CC list changes except for the reporter.
"""

from ..store.db import placeholders

REL_ASSIGNEE, REL_QA, REL_REPORTER, REL_CC, REL_GLOBAL_WATCHER, REL_ANY = 0, 1, 2, 3, 5, 100

EVT_OTHER, EVT_ADDED_REMOVED, EVT_COMMENT, EVT_ATTACHMENT, EVT_ATTACHMENT_DATA = 0, 1, 2, 3, 4
EVT_PROJ_MANAGEMENT, EVT_OPENED_CLOSED, EVT_KEYWORD, EVT_CC, EVT_DEPEND_BLOCK = 5, 6, 7, 8, 9
EVT_BUG_CREATED, EVT_COMPONENT = 10, 11
EVT_UNCONFIRMED, EVT_CHANGED_BY_ME = 50, 51
EVT_FLAG_REQUESTED, EVT_REQUESTED_FLAG = 100, 101

# The names the interface uses, in the order the preferences show them.
RELATIONSHIPS = {"assignee": REL_ASSIGNEE, "reporter": REL_REPORTER, "cc": REL_CC,
                 "qa_contact": REL_QA}
EVENTS = {"added_removed": EVT_ADDED_REMOVED, "bug_created": EVT_BUG_CREATED,
          "opened_closed": EVT_OPENED_CLOSED, "component": EVT_COMPONENT,
          "project_management": EVT_PROJ_MANAGEMENT, "comment": EVT_COMMENT,
          "attachment": EVT_ATTACHMENT, "attachment_data": EVT_ATTACHMENT_DATA,
          "keywords": EVT_KEYWORD, "cc": EVT_CC, "dependency": EVT_DEPEND_BLOCK,
          "other": EVT_OTHER, "unconfirmed": EVT_UNCONFIRMED, "changed_by_me": EVT_CHANGED_BY_ME}
GLOBAL_EVENTS = {"flag_requested": EVT_FLAG_REQUESTED, "requested_flag": EVT_REQUESTED_FLAG}
# The header names of the relationships (X-Bugzilla-Reason, X-Bugzilla-Watch-Reason).
HEADER_NAMES = {REL_ASSIGNEE: "AssignedTo", REL_REPORTER: "Reporter", REL_QA: "QAcontact",
                REL_CC: "CC", REL_GLOBAL_WATCHER: "GlobalWatcher"}


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
