"""`bugsvc import --verify URL`: the source and the target compared bug by
bug, field by field: each bug, its comments, its attachments' metadata
(and flags), its history.

The source is read with the key, exactly as the import reads it; the
target is read through its own operations (Bug.get, Bug.comments,
Bug.attachments, Bug.history) as the key's account there, so the
comparison also checks that the target shows that account what the source
showed it, no more and no less: a bug, comment or attachment the target
shows it and the source does not is a difference like a missing one.
"""

import sys
from concurrent.futures import ThreadPoolExecutor

from ..accounts import access
from ..api.operations import OPERATIONS
from ..api.runner import Runner
from ..compose import unit_of_work
from ..config import Config
from ..store.location import open_database
from . import forms, state
from .client import Client, rest_base
from .progress import Progress
from .run import ImportRefused
from .source import Source

_BUG_KEYS = ("summary", "status", "resolution", "product", "component", "classification",
             "version", "target_milestone", "platform", "op_sys", "priority", "severity", "url",
             "whiteboard", "alias", "is_confirmed", "dupe_of", "keywords", "blocks", "depends_on",
             "cc", "assigned_to", "creator", "qa_contact", "groups", "see_also", "flags",
             "creation_time", "last_change_time", "is_cc_accessible", "is_creator_accessible",
             "time", "custom")
_COMMENT_KEYS = ("bug_id", "count", "creator", "time", "text", "is_private", "attachment_id",
                 "tags")
_ATTACHMENT_KEYS = ("bug_id", "creator", "creation_time", "last_change_time", "summary",
                    "file_name", "content_type", "is_patch", "is_obsolete", "is_private", "size",
                    "flags")


class Difference:
    """One difference: where (bug, and the comment or attachment), what
    (the field), and both values."""

    def __init__(self, bug_id, where, field, source, target):
        self.bug_id, self.where, self.field = bug_id, where, field
        self.source, self.target = source, target

    def __str__(self):
        place = f"bug {self.bug_id}" + (f" {self.where}" if self.where else "")
        return (f"{place}: {self.field}: source {_show(self.source)}, "
                f"target {_show(self.target)}")


def _show(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def verify_command(options, out=sys.stdout, err=sys.stderr, client=None):
    """Compare and print every difference. Returns 0 when there is none, 1
    otherwise. Errors: ImportRefused (no target, or another source's),
    SourceError."""
    progress = Progress(err)
    client = client or Client(options.url, options.api_key, concurrency=options.concurrency,
                              retries=options.retries, on_retry=progress.retry,
                              base_delay=options.base_delay)
    differences = verify(Source(client), options, progress)
    for difference in differences:
        print(difference, file=out)
    print(f"{len(differences)} difference{'s' if len(differences) != 1 else ''}.", file=out,
          flush=True)
    return 0 if not differences else 1


def verify(source, options, progress=None):
    """The differences between the source and the target ([Difference])."""
    progress = progress or Progress(open_null())
    import os
    if not os.path.exists(options.db_path) or os.path.getsize(options.db_path) == 0:
        raise ImportRefused(f"there is no database at {options.db_path} to verify")
    db = open_database(options.db_path)
    try:
        with db.transaction() as conn:
            values = state.load(conn)
        if values.get(state.SOURCE) not in (None, rest_base(options.url)):
            raise ImportRefused(f"{options.db_path} was filled from {values[state.SOURCE]}, not "
                                f"{rest_base(options.url)}")
        login = source.whoami() or options.login or values.get(state.LOGIN)
        if source.client.api_key and not login:
            raise ImportRefused("the source does not tell whose key this is: give --login")
        return _Verifier(source, db, options, login, progress).run()
    finally:
        db.close()


def open_null():
    import io
    return io.StringIO()


class _Verifier:
    def __init__(self, source, db, options, login, progress):
        self.source = source
        self.db = db
        self.options = options
        self.progress = progress
        # Its own transactions in a unit of work; its reads of bugs through
        # the operations, as a client reads them (the Runner's rules apply).
        self.units = unit_of_work(db, Config(database=options.db_path))
        self.runner = Runner(self.units)
        self.user_id = None
        if login:
            with db.transaction() as conn:
                row = conn.execute("SELECT id FROM users WHERE lower(login) = lower(?)",
                                   (login,)).fetchone()
            if row is None:
                raise ImportRefused(f"the target has no account '{login}' to read as")
            self.user_id = row[0]
        self.differences = []

    def run(self):
        self.progress.say("Listing the bugs at the source and in the target ...")
        source_ids, after = [], 0
        while True:
            found = [bug_id for bug_id, _ in self.source.bug_ids(after, None, 1000)
                     if bug_id > after]
            if not found:
                break
            source_ids += found
            after = found[-1]
        target_ids = self._target_ids()
        source_set, target_set = set(source_ids), set(target_ids)
        missing = sorted(source_set - target_set)
        # A bug listed but refused when read (it went out of sight, or is
        # gone) is no difference: the source does not show it either.
        readable = set()
        for start in range(0, len(missing), 100):
            readable.update(self.source.bugs(missing[start:start + 100])[0])
        for bug_id in missing:
            if bug_id in readable:
                self._differ(bug_id, "", "bug", "present", "missing")
        for bug_id in sorted(target_set - source_set):
            self._differ(bug_id, "", "bug", "not visible", "visible")
        common = sorted(source_set & target_set)
        self.progress.start(len(common))
        size = max(1, self.options.batch_size)
        batches = [common[start:start + size] for start in range(0, len(common), size)]
        with ThreadPoolExecutor(max_workers=max(1, self.options.concurrency)) as pool:
            for batch, result in zip(batches, pool.map(self._read_source, batches)):
                self._compare(batch, *result)
                self.progress.advance(len(batch))
        self.progress.finish()
        return self.differences

    def _differ(self, bug_id, where, field, source, target):
        self.differences.append(Difference(bug_id, where, field, source, target))

    def _target_ids(self):
        with self.units.context(self.user_id) as ctx:
            ids = [row[0] for row in ctx.conn.execute("SELECT id FROM bugs ORDER BY id")]
            visible = set()
            for start in range(0, len(ids), 500):
                visible |= access.visible_bug_ids(ctx, ids[start:start + 500])
        return sorted(visible)

    def _read_source(self, ids):
        bugs, gone = self.source.bugs(ids)
        comments, _ = self.source.comments([i for i in ids if i not in gone])
        history, _ = self.source.histories([i for i in ids if i not in gone])
        attachments, _ = self.source.attachments([i for i in ids if i not in gone])
        return bugs, comments, history, attachments

    def _call(self, name, params):
        return self.runner.call(OPERATIONS[name], params, self.user_id)

    def _compare(self, ids, source_bugs, source_comments, source_history, source_attachments):
        target_bugs = {b["id"]: b for b in self._call("Bug.get", {"ids": ids})["bugs"]}
        target_comments = {int(k): v["comments"] for k, v in
                           self._call("Bug.comments", {"ids": ids})["bugs"].items()}
        target_history = {b["id"]: b["history"] for b in
                          self._call("Bug.history", {"ids": ids})["bugs"]}
        target_attachments = {int(k): v for k, v in self._call(
            "Bug.attachments", {"ids": ids, "exclude_fields": "data"})["bugs"].items()}
        for bug_id in ids:
            if bug_id not in source_bugs:
                self._differ(bug_id, "", "bug", "not visible when read", "visible")
                continue
            self._compare_bug(bug_id, forms.bug(source_bugs[bug_id]),
                              forms.bug(_jsonable(target_bugs[bug_id])))
            self._compare_items(bug_id, "comment", _COMMENT_KEYS,
                                [forms.comment(c) for c in source_comments.get(bug_id, [])],
                                [forms.comment(_jsonable(c))
                                 for c in target_comments.get(bug_id, [])])
            self._compare_items(bug_id, "attachment", _ATTACHMENT_KEYS,
                                [forms.attachment(a) for a in source_attachments.get(bug_id, [])],
                                [forms.attachment(_jsonable(a))
                                 for a in target_attachments.get(bug_id, [])])
            source_entries = forms.history_entries(forms.history(source_history.get(bug_id)))
            target_entries = forms.history_entries(
                forms.history(_jsonable(target_history.get(bug_id, []))))
            self._compare_history(bug_id, source_entries, target_entries)

    def _compare_bug(self, bug_id, source, target):
        for key in _BUG_KEYS:
            left, right = _comparable(key, source.get(key)), _comparable(key, target.get(key))
            if key == "custom":
                for name in sorted(set(left) | set(right)):
                    if _custom(left.get(name)) != _custom(right.get(name)):
                        self._differ(bug_id, "", name, left.get(name), right.get(name))
                continue
            if left != right:
                self._differ(bug_id, "", key, left, right)

    def _compare_items(self, bug_id, kind, keys, source, target):
        by_id = {item["id"]: item for item in target}
        for item in source:
            other = by_id.pop(item["id"], None)
            if other is None:
                self._differ(bug_id, f"{kind} {item['id']}", kind, "present", "missing")
                continue
            for key in keys:
                left, right = _comparable(key, item.get(key)), _comparable(key, other.get(key))
                if left != right:
                    self._differ(bug_id, f"{kind} {item['id']}", key, left, right)
        for item_id in sorted(by_id):
            self._differ(bug_id, f"{kind} {item_id}", kind, "not visible", "visible")

    def _compare_history(self, bug_id, source, target):
        """Entries are matched by when and who; each entry that differs, or
        is on one side only, is one difference."""
        def by_moment(entries):
            found = {}
            for entry in entries:
                found.setdefault((entry["when"], entry["who"]), []).extend(entry["changes"])
            return found
        left, right = by_moment(source), by_moment(target)
        for moment in sorted(set(left) | set(right)):
            if left.get(moment) != right.get(moment):
                where = f"history {forms.wire(moment[0])} {moment[1]}"
                self._differ(bug_id, where, "changes", left.get(moment), right.get(moment))


def _comparable(key, value):
    """Values that mean the same compare equal: flags in id order, lists of
    names as sets where the order is the reference's own."""
    if key == "flags":
        return sorted((tuple(sorted(flag.items())) for flag in value or []),
                      key=lambda flag: str(flag))
    if key in ("cc", "keywords", "groups"):
        return sorted(value or [], key=str.lower)
    return value


def _custom(value):
    if isinstance(value, list):
        return sorted(str(item) for item in value)
    if value in (None, "", "---"):
        return None
    try:
        return forms.when(value) if isinstance(value, str) and value[:4].isdigit() \
            and "-" in value and ":" in value else value
    except forms.FormError:
        return value


def _jsonable(value):
    """The target's answer as the wire shows it (datetimes as text)."""
    from datetime import datetime
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value
