"""What the import reads from the source, call by call, in pages and batches.

Every call is one the reference serves over REST to whoever holds the key:
nothing needs administrator rights at the source, and whatever the key's
account may not see is simply not in the answers. Bugs are listed in pages
by bug id (`bug_id` greater than the last one seen, ordered by bug id), and
read in batches: `GET /rest/bug/{first}?ids=...` and the same for comments,
history and attachments, which the reference answers for every id given.
A batch that fails because one of its bugs went out of sight (or was
deleted) between the listing and the reading is split until the bugs that
fail are alone; those are reported and left out.
"""

from . import forms
from .client import SourceError

# Error codes that mean "this bug is not there for you" (invalid, missing, hidden).
BUG_GONE = (100, 101, 102)
# Error codes that mean "the source has no such call" or "not for you".
NOT_OFFERED = (32614, 32610, 51)


class Source:
    """Reads of one source through a Client."""

    def __init__(self, client):
        self.client = client

    def get(self, path, params=None):
        return self.client.get(path, params)

    # The instance --------------------------------------------------------------

    def version(self):
        return str(self.get("/version").get("version", ""))

    def time(self):
        """The source's database time now (the reference's recipe for
        incremental reads), in the database form; its web time when it has
        no database time."""
        answer = self.get("/time")
        return forms.when(answer.get("db_time") or answer.get("web_time_utc")
                          or answer.get("web_time"), "time")

    def whoami(self):
        """The key's login when the source tells it (GET /rest/whoami of
        bugzilla.mozilla.org), else None."""
        if not self.client.api_key:
            return None
        try:
            answer = self.get("/whoami")
        except SourceError as exc:
            if exc.code is None and exc.status is None:
                raise
            return None
        return answer.get("name") or answer.get("login")

    def parameters(self):
        return self.get("/parameters").get("parameters") or {}

    # The catalogue -------------------------------------------------------------

    def fields(self):
        return self.get("/field/bug").get("fields") or []

    def products(self):
        """Every product the key may search or file in, with components
        (and their flag types), versions and milestones; group controls
        where the source shows them (bugsvc, to editcomponents members)."""
        ids = set()
        for kind in ("accessible", "selectable", "enterable"):
            try:
                ids.update(int(i) for i in self.get(f"/product_{kind}").get("ids") or [])
            except SourceError as exc:
                if exc.code not in NOT_OFFERED:
                    raise
        ids = sorted(ids)
        products = []
        for start in range(0, len(ids), 50):
            chunk = ids[start:start + 50]
            products += self.get("/product", {"ids": chunk,
                                              "include_fields": "_default,group_controls"}
                                 ).get("products") or []
        return products

    def classification(self, name):
        """A classification by name, or None when the source does not show
        classifications (useclassification off: 900)."""
        try:
            found = self.get(f"/classification/{_path(name)}").get("classifications") or []
        except SourceError as exc:
            if exc.code is None:
                raise
            return None
        return found[0] if found else None

    def groups(self):
        """The groups the key's account may see in full (all of them for
        members of editusers or creategroups, else those it may bless)."""
        try:
            return self.get("/group").get("groups") or []
        except SourceError as exc:
            if exc.code is None:
                raise
            return []

    def users(self, logins):
        """User objects for `logins`, in batches; a login the source will
        not describe is left out (returned in the second list)."""
        found, refused = [], []
        logins = sorted(set(logins))
        for start in range(0, len(logins), 100):
            self._users(logins[start:start + 100], found, refused)
        return found, refused

    def _users(self, logins, found, refused):
        try:
            found += self.get("/user", {"names": logins}).get("users") or []
        except SourceError as exc:
            if exc.code is None:
                raise
            if len(logins) == 1:
                refused.append(logins[0])
                return
            middle = len(logins) // 2
            self._users(logins[:middle], found, refused)
            self._users(logins[middle:], found, refused)

    # Bugs ------------------------------------------------------------------------

    def bug_ids(self, after, since=None, limit=1000):
        """[(id, last_change_time)] of up to `limit` bugs with ids above
        `after`, lowest first; only bugs changed at or after `since` (the
        database form) when given."""
        params = {"f1": "bug_id", "o1": "greaterthan", "v1": after, "order": "bug_id",
                  "limit": limit, "include_fields": "id,last_change_time"}
        if since:
            params["last_change_time"] = forms.wire(since)
        bugs = self.get("/bug", params).get("bugs") or []
        return sorted((int(b["id"]), forms.when(b.get("last_change_time"))) for b in bugs)

    def bugs(self, ids):
        """({id: raw bug}, [ids out of sight]) for `ids`."""
        found, gone = {}, []
        self._split(ids, self._bugs, found, gone)
        return found, gone

    def _bugs(self, ids):
        answer = self.get(f"/bug/{ids[0]}", {"ids": ids[1:] or None})
        return {int(b["id"]): b for b in answer.get("bugs") or []}

    def comments(self, ids):
        """({bug id: [raw comments]}, [ids out of sight])."""
        found, gone = {}, []
        self._split(ids, self._comments, found, gone)
        return found, gone

    def _comments(self, ids):
        answer = self.get(f"/bug/{ids[0]}/comment", {"ids": ids[1:] or None})
        return {int(bug_id): (value or {}).get("comments") or []
                for bug_id, value in (answer.get("bugs") or {}).items()}

    def histories(self, ids):
        """({bug id: [raw history entries]}, [ids out of sight])."""
        found, gone = {}, []
        self._split(ids, self._histories, found, gone)
        return found, gone

    def _histories(self, ids):
        answer = self.get(f"/bug/{ids[0]}/history", {"ids": ids[1:] or None})
        return {int(b["id"]): b.get("history") or [] for b in answer.get("bugs") or []}

    def attachments(self, ids):
        """({bug id: [raw attachments without data]}, [ids out of sight])."""
        found, gone = {}, []
        self._split(ids, self._attachments, found, gone)
        return found, gone

    def _attachments(self, ids):
        answer = self.get(f"/bug/{ids[0]}/attachment", {"ids": ids[1:] or None,
                                                        "exclude_fields": "data"})
        return {int(bug_id): value or [] for bug_id, value in (answer.get("bugs") or {}).items()}

    def attachment_data(self, attachment_ids):
        """{attachment id: base64 text} of `attachment_ids` (one request)."""
        answer = self.get(f"/bug/attachment/{attachment_ids[0]}",
                          {"attachment_ids": attachment_ids[1:] or None,
                           "include_fields": "id,data"})
        return {int(key): value.get("data") for key, value in
                (answer.get("attachments") or {}).items() if value.get("data") is not None}

    def _split(self, ids, read, found, gone):
        """read(ids) into `found`; on an error naming a bug, halves until the
        failing bugs are alone, and those go to `gone`."""
        if not ids:
            return
        try:
            found.update(read(list(ids)))
        except SourceError as exc:
            if exc.code not in BUG_GONE:
                raise
            if len(ids) == 1:
                gone.append(ids[0])
                return
            middle = len(ids) // 2
            self._split(ids[:middle], read, found, gone)
            self._split(ids[middle:], read, found, gone)


def _path(text):
    import urllib.parse
    return urllib.parse.quote(str(text), safe="")
