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

import collections
from dataclasses import dataclass, field

from . import forms
from .client import SourceError


# Error codes that mean "this bug is not there for you" (invalid, missing, hidden).
BUG_GONE = (100, 101, 102)
# Error codes that mean "the source has no such call" or "not for you".
NOT_OFFERED = (32614, 32610, 51)

# Listing accounts: User.get's `match` answers at most min(limit,
# maxusermatches) accounts and has no offset, so a full answer is narrowed
# by the next character of the login or real name (its LIKE is
# case-insensitive): a* into aa* ... a9*, down to LIST_DEPTH characters and
# at most LIST_REQUESTS questions in all.
LIST_PAGE = 1000
LIST_CHARS = "abcdefghijklmnopqrstuvwxyz0123456789.-+@'="
LIST_DEPTH = 8
LIST_REQUESTS = 5000
IDS_AT_ONCE = 100
ATTACHMENT_BATCH_BYTES = 8 * 1024 * 1024


@dataclass
class AccountList:
    """What the source listed: users (User objects), refused (the key may
    not list accounts), unresolved (match prefixes still full at the
    deepest narrowing or when the questions ran out), most (the most
    accounts one answer held)."""
    users: list = field(default_factory=list)
    refused: bool = False
    unresolved: list = field(default_factory=list)
    most: int = 0


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

    def groups(self, membership=False):
        """The groups the key's account may see in full (all of them for
        members of editusers or creategroups, else those it may bless),
        with their members when `membership` (a source that refuses the
        members answers without them)."""
        try:
            return self.get("/group", {"membership": True} if membership else None
                            ).get("groups") or []
        except SourceError as exc:
            if exc.code is None:
                raise
            if membership:
                return self.groups()
            return []

    def account_list(self, cap=None):
        """Every account the key may list (disabled ones too): AccountList.
        cap: the source's maxusermatches when it shows it (0: none); when
        it does not, an answer as full as the fullest so far may have been
        cut, and is narrowed too. A source that listed by narrowing is also
        asked by id for the ids below the highest one found that it did not
        list (logins with characters the narrowing does not try)."""
        limit = min(LIST_PAGE, cap) if cap else LIST_PAGE
        listed, found = AccountList(), {}
        queue, asked = collections.deque([""]), 0
        while queue:
            prefix = queue.popleft()
            if asked >= LIST_REQUESTS:
                listed.unresolved += [prefix] + list(queue)
                break
            asked += 1
            try:
                users = self.get("/user", {"match": prefix + "*", "include_disabled": True,
                                           "limit": limit}).get("users") or []
            except SourceError as exc:
                if exc.code is None:
                    raise
                if not prefix:
                    listed.refused = True
                    break
                listed.unresolved.append(prefix)
                continue
            for user in users:
                found[int(user["id"])] = user
            listed.most = max(listed.most, len(users))
            full = len(users) >= limit or (cap is None and len(users) == listed.most
                                           and len(users) > 1)
            if not full:
                continue
            if len(prefix) >= LIST_DEPTH:
                listed.unresolved.append(prefix)
                continue
            queue.extend(prefix + char for char in LIST_CHARS)
        if asked > 1 and found:
            self._accounts_by_id(found)
        listed.users = [found[user_id] for user_id in sorted(found)]
        return listed

    def _accounts_by_id(self, found):
        """Ask for the ids up to the highest found (and a batch beyond) that
        the listing missed; an id the key may not see is left out. Ids
        spread far wider than the accounts found are not asked for."""
        highest = max(found)
        if highest > 10 * len(found) + 10_000:
            return
        missing = [i for i in range(1, highest + IDS_AT_ONCE + 1) if i not in found]
        for start in range(0, len(missing), IDS_AT_ONCE):
            self._ids(missing[start:start + IDS_AT_ONCE], found)

    def _ids(self, ids, found):
        try:
            users = self.get("/user", {"ids": ids}).get("users") or []
        except SourceError as exc:
            if exc.code is None:
                raise
            if len(ids) > 1:
                middle = len(ids) // 2
                self._ids(ids[:middle], found)
                self._ids(ids[middle:], found)
            return
        for user in users:
            found[int(user["id"])] = user

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
        # The key's personal tags are an extra field: asked for by name.
        fields = "_default,tags" if self.client.api_key else None
        answer = self.get(f"/bug/{ids[0]}", {"ids": ids[1:] or None, "include_fields": fields})
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

    def attachments_data(self, attachments, mapper=map):
        """{attachment id: base64 text} of `attachments` (attachment objects
        with id and size), read in batches of at most ATTACHMENT_BATCH_BYTES
        (by their sizes) or 50; an attachment the source refuses is left
        out. mapper: map, or an executor's map to read batches at once."""
        batches, batch, total = [], [], 0
        for attachment in attachments:
            size = int(attachment.get("size") or 0)
            if batch and (total + size > ATTACHMENT_BATCH_BYTES or len(batch) >= 50):
                batches.append(batch)
                batch, total = [], 0
            batch.append(int(attachment["id"]))
            total += size
        if batch:
            batches.append(batch)
        found = {}
        for result in mapper(self._attachment_batch, batches):
            found.update(result)
        return found

    def _attachment_batch(self, attachment_ids):
        try:
            return self.attachment_data(attachment_ids)
        except SourceError as exc:
            if exc.code is None:
                raise
            if len(attachment_ids) == 1:
                return {}
            found = {}
            for attachment_id in attachment_ids:
                found.update(self._attachment_batch([attachment_id]))
            return found

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
