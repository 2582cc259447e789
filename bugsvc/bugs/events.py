"""What a change tells the people and tools that follow a bug: the events of
the outbox.

The domain code notes what it writes into the call's Journal as it writes
it (history rows, comments, attachments, flags, a bug becoming restricted or
public, a blocker opened or closed); at the end of the call, inside the
call's own transaction, `Journal.write` stores one outbox event per bug the
call changed. So a change that is rolled back leaves no event, and a change
that is committed has its event, whatever happens to the process after the
commit. The delivery worker (bugsvc/notify/) reads the events later and
decides, at send time and as each recipient, what each one is told.

An event holds references and the change itself, never a rendering:
{"new": true when the call created the bug,
 "changes": [{"field", "removed", "added", "attachment_id"?, "comment_id"?}]
   (the history rows the call wrote, in order),
 "comments": [comment ids], "attachments": [ids of attachments created],
 "flags": [{"type_id", "flag_id", "attachment_id", "old", "new"}] (old and
   new: {"status", "setter_id", "requestee_id"} or null),
 "public": [before, after] when the bug became restricted or public,
 "blockers": [{"id", "status": [old, new], "resolution": [old, new]}] for a
   bug this bug depends on that was closed or reopened,
 "people": {"assigned_to", "qa_contact", "reporter", "cc": [ids]} as the
   change left them (who is told is worked out later, from the roles at the
   time of the change, not at the time of sending)}.
"""

import orjson

from .. import dates
from ..store.dialect import json_items, once_per_dialect


_FLAG_KEYS = ("status", "setter_id", "requestee_id")
# The people of an event, the CC list after these roles.
_ROLES = ("assigned_to", "qa_contact", "reporter")


def _new_note():
    """The note of a bug the call has not changed yet (an event's data
    without its people)."""
    return {"new": False, "changes": [], "comments": [], "attachments": [], "flags": []}


class Journal:
    """The bugs one call changed, and how.

    enabled: False for a journal that notes nothing, for writes that must
    tell nobody (data imported from another tracker sends no mail and calls
    no webhook).
    """

    def __init__(self, enabled=True):
        self.enabled = enabled
        self._bugs = {}
        # bug id -> (its people, the connection's writes_so_far when read)
        self._people = {}
        # The bugs whose event the statement changing them stored.
        self._stored = set()

    def _of(self, bug_id):
        if bug_id in self._stored:
            raise RuntimeError(f"bug {bug_id}'s event was stored with its change: the call"
                               " may note nothing more of it")
        note = self._bugs.get(bug_id)
        if note is None:
            note = self._bugs[bug_id] = _new_note()
        return note

    def __bool__(self):
        return bool(self._bugs)

    def created(self, bug_id):
        """Bug `bug_id` was filed by this call."""
        if self.enabled:
            self._of(bug_id)["new"] = True

    def changed(self, bug_id, field, removed, added, attachment_id=None, comment_id=None):
        """A history row of bug `bug_id` was written (the same values)."""
        if not self.enabled:
            return
        change = {"field": field, "removed": removed or "", "added": added or ""}
        if attachment_id is not None:
            change["attachment_id"] = attachment_id
        if comment_id is not None:
            change["comment_id"] = comment_id
        self._of(bug_id)["changes"].append(change)

    def commented(self, bug_id, comment_id):
        """Comment `comment_id` was added to bug `bug_id`."""
        if self.enabled:
            self._of(bug_id)["comments"].append(comment_id)

    def attached(self, bug_id, attachment_id):
        """Attachment `attachment_id` was added to bug `bug_id`."""
        if self.enabled:
            self._of(bug_id)["attachments"].append(attachment_id)

    def flagged(self, bug_id, attachment_id, before, after):
        """The flags of a bug (attachment_id None) or of one of its
        attachments went from `before` to `after` (lists of stored flag
        dicts with ids); each flag that changed is noted."""
        if not self.enabled:
            return
        old = {flag["id"]: flag for flag in before}
        new = {flag["id"]: flag for flag in after}
        for flag_id in sorted(set(old) | set(new)):
            was, now = old.get(flag_id), new.get(flag_id)
            if was is not None and now is not None and all(was[k] == now[k] for k in _FLAG_KEYS):
                continue
            self._of(bug_id)["flags"].append({
                "type_id": (now or was)["type_id"], "flag_id": flag_id,
                "attachment_id": attachment_id,
                "old": None if was is None else {k: was[k] for k in _FLAG_KEYS},
                "new": None if now is None else {k: now[k] for k in _FLAG_KEYS}})

    def restricted(self, bug_id, was_public, is_public):
        """Bug `bug_id` went from visible to everyone to restricted to groups,
        or back (public: in no group)."""
        if self.enabled and was_public != is_public:
            self._of(bug_id)["public"] = [was_public, is_public]

    def blocker_changed(self, bug_id, blocker_id, status, resolution):
        """Bug `blocker_id`, which bug `bug_id` depends on, was closed or
        reopened; status and resolution: (old, new)."""
        if self.enabled:
            self._of(bug_id).setdefault("blockers", []).append(
                {"id": blocker_id, "status": list(status), "resolution": list(resolution)})

    def people_seen(self, bug_id, people, writes):
        """Bug `bug_id`'s people ({"assigned_to", "qa_contact", "reporter",
        "cc"}) as a write just left them, `writes` the connection's
        writes_so_far after it: the event takes them when nothing was
        written since (else it reads them)."""
        if self.enabled:
            self._people[bug_id] = (people, writes)

    def may_store_with_change(self, bug_id, changer_id):
        """Whether the statement making a call's whole change of bug
        `bug_id` may store its event itself (comment_event_data): the journal
        notes, the call has a changer, and nothing of that bug is noted yet."""
        return (self.enabled and changer_id is not None and bug_id not in self._bugs
                and bug_id not in self._stored)

    def stored_with_change(self, bug_id):
        """Bug `bug_id`'s event was stored by the statement that changed it
        (see may_store_with_change): write() counts it and stores none for
        it; noting anything more of that bug is an error (RuntimeError)."""
        self._stored.add(bug_id)

    def write(self, conn, changer_id, now):
        """Store one outbox event per bug noted (in the caller's transaction)
        and forget them. Returns how many events the call stored, those
        stored with their change included."""
        stored = len(self._stored)
        self._stored.clear()
        if not self.enabled or changer_id is None:
            self._bugs.clear()
            self._people.clear()
            return stored
        stamp = dates.to_db(now)
        rows = []
        writes = conn.writes_so_far()
        for bug_id, note in self._bugs.items():
            seen = self._people.get(bug_id)
            note["people"] = seen[0] if seen is not None and seen[1] == writes \
                else _people(conn, bug_id)
            rows.append((bug_id, changer_id, stamp, orjson.dumps(note).decode()))
        if rows:
            conn.executemany("INSERT INTO outbox_events (bug_id, changer_id, created_at, data)"
                             " VALUES (?, ?, ?, ?)", rows)
        self._bugs.clear()
        self._people.clear()
        return len(rows) + stored


def comment_event_data(dialect, comment_id, people):
    """SQL of the data of the event of a call whose whole change of a bug
    is one comment, as Journal.write would store it: `comment_id` the SQL
    expression of the comment's id, `people` those of people_columns' four
    values (the roles, then the CC list's JSON text)."""
    values = {key: dialect.json_value(f"'{orjson.dumps(value).decode()}'")
              for key, value in _new_note().items()}
    values["comments"] = dialect.json_array([comment_id])
    values["people"] = dialect.json_object(
        [*zip(_ROLES, people[:3], strict=True), ("cc", dialect.json_value(people[3]))])
    return dialect.as_text(dialect.json_object(list(values.items())))


@once_per_dialect
def people_columns(dialect):
    """The columns of a row of bugs (the table named `bugs`, no alias) that
    people_of reads: the roles, and the CC list as a JSON array."""
    cc = dialect.json_list(["user_id"], "FROM bug_cc WHERE bug_id = bugs.id", "user_id")
    return f"{', '.join(_ROLES)}, {cc} AS cc"


def people_of(row):
    """The people ({"assigned_to", "qa_contact", "reporter", "cc"}) of a row
    of people_columns."""
    return {"assigned_to": row[0], "qa_contact": row[1], "reporter": row[2],
            "cc": json_items(row[3])}


@once_per_dialect
def _people_sql(dialect):
    return f"SELECT {people_columns(dialect)} FROM bugs WHERE id = ?"


def _people(conn, bug_id):
    return people_of(conn.execute(_people_sql(conn.dialect), (bug_id,)).fetchone())


def load(text):
    """The event data stored by `Journal.write`."""
    return orjson.loads(text)
