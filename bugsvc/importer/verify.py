"""`bugsvc import --verify URL`: the source and the target compared on
everything the import carries: each account (login, real name, whether it
may log in and get mail, its memberships in the groups the key sees in
full, and whether a membership is the group's regexp's), each product's
group controls where the source shows them, the grants between groups
where its pages show them, and bug by bug, field by
field: each bug (with the key's personal tags and See Also links as the
import rewrote them), its comments, its attachments (metadata, flags and
bytes) and its history.

The source is read with the key, exactly as the import reads it. Bugs are
read in the target through its own operations (Bug.get, Bug.comments,
Bug.attachments, Bug.history) as the key's account there, so the
comparison also checks that the target shows that account what the source
showed it, no more and no less: a bug, comment or attachment the target
shows it and the source does not is a difference like a missing one.
Accounts, memberships, group controls and attachment bytes are read from
the target's tables (what the import wrote, whoever may see it there).

Products whose group controls the source did not show are listed apart:
they are set by hand and cannot be compared.
"""

import hashlib
import io
import json
import os
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import datetime

from ..accounts.membership import GRANT_REGEXP, regexp_matches
from ..api.operations import OPERATIONS
from ..api.runner import Runner
from ..bugs import visibility
from ..compose import unit_of_work
from ..config import DEFAULT_ADMIN_EMAIL, Config
from ..store.db import placeholders
from ..store.location import open_database
from . import forms, state
from .accounts import Accounts
from .admin_pages import AdminPages, PagesRefused
from .catalogue import control_value
from .client import rest_base
from .progress import Progress
from .run import ImportRefused, make_client
from .source import Source


_BUG_KEYS = ("summary", "status", "resolution", "product", "component", "classification",
             "version", "target_milestone", "platform", "op_sys", "priority", "severity", "url",
             "whiteboard", "alias", "is_confirmed", "dupe_of", "keywords", "blocks", "depends_on",
             "cc", "assigned_to", "creator", "qa_contact", "groups", "see_also", "flags",
             "creation_time", "last_change_time", "is_cc_accessible", "is_creator_accessible",
             "time", "tags", "custom")
_COMMENT_KEYS = ("bug_id", "count", "creator", "time", "text", "is_private", "attachment_id",
                 "tags")
_ATTACHMENT_KEYS = ("bug_id", "creator", "creation_time", "last_change_time", "summary",
                    "file_name", "content_type", "is_patch", "is_obsolete", "is_private", "size",
                    "flags")
_CONTROL_KEYS = ("entry", "membercontrol", "othercontrol", "canedit")
_GRANT_NAMES = {0: "groups that are its members", 1: "groups that may bless it",
                2: "groups that see its members"}


class Difference:
    """One difference: where (a bug, and the comment or attachment; or an
    account or a product: `subject`), what (the field), and both values."""

    def __init__(self, bug_id, where, field, source, target, subject=None):
        self.bug_id, self.where, self.field = bug_id, where, field
        self.source, self.target = source, target
        self.subject = subject

    def __str__(self):
        place = self.subject or (f"bug {self.bug_id}" + (f" {self.where}" if self.where else ""))
        return (f"{place}: {self.field}: source {_show(self.source)}, "
                f"target {_show(self.target)}")


def _show(value):
    text = repr(value)
    return text if len(text) <= 200 else text[:197] + "..."


def verify_command(options, out=sys.stdout, err=sys.stderr, client=None):
    """Compare and print every difference, then what could not be compared.
    Returns 0 when there is no difference, 1 otherwise. Errors:
    ImportRefused (no target, or another source's), SourceError."""
    progress = Progress(err)
    client = client or make_client(options, progress)
    verifier = verify(Source(client), options, progress, whole=True)
    for difference in verifier.differences:
        print(difference, file=out)
    count = len(verifier.differences)
    print(f"{count} difference{'s' if count != 1 else ''}.", file=out)
    for line in verifier.not_compared:
        print(f"Not compared: {line}", file=out)
    out.flush()
    return 0 if not count else 1


def verify(source, options, progress=None, whole=False):
    """The differences between the source and the target ([Difference]);
    with `whole`, the verifier itself (its differences and not_compared).
    Errors: ImportRefused, SourceError."""
    progress = progress or Progress(io.StringIO())
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
        verifier = _Verifier(source, db, options, login, values, progress)
        verifier.run()
        return verifier if whole else verifier.differences
    finally:
        db.close()


class _Verifier:
    def __init__(self, source, db, options, login, values, progress):
        self.source = source
        self.db = db
        self.options = options
        self.login = login
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
        new = values.get(state.LINKS_NEW) or None
        self.links = forms.LocalLinks(json.loads(values.get(state.LINKS_OLD) or "[]"), new) \
            if new else None
        self.controls_unknown = json.loads(values.get(state.CONTROLS_UNKNOWN) or "[]")
        self.admin_logins = {(options.admin_email or DEFAULT_ADMIN_EMAIL).lower()}
        self.differences = []
        self.not_compared = []

    def run(self):
        self.progress.say("Comparing accounts and memberships ...")
        self._compare_accounts()
        pages = None
        if self.options.source_password and self.login:
            pages = AdminPages(self.source.client, self.login, self.options.source_password)
        try:
            self._compare_controls(pages)
            self._compare_grants(pages)
        finally:
            if pages is not None:
                pages.close()
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
            for batch, result in zip(batches, pool.map(self._read_source, batches), strict=True):
                self._compare(batch, *result)
                self.progress.advance(len(batch))
        self.progress.finish()
        for product in self.controls_unknown:
            self.not_compared.append(f"product {product!r}: group controls (the source does "
                                     "not show them to the key: set by hand)")
        return self.differences

    def _differ(self, bug_id, where, field, source, target):
        self.differences.append(Difference(bug_id, where, field, source, target))

    def _differ_about(self, subject, field, source, target):
        self.differences.append(Difference(None, "", field, source, target, subject=subject))

    # Accounts ------------------------------------------------------------------

    def _compare_accounts(self):
        """Each account the source lists (and describes) against the
        target's: what the import carries of it."""
        if not self.source.client.api_key:
            self.not_compared.append("accounts (an anonymous reader may not list them)")
            return
        accounts = Accounts(self.source, self.login)
        accounts.read_key_account()
        groups = self.source.groups(membership=not accounts.editusers)
        cap = str(self.source.parameters().get("maxusermatches", "")).strip()
        listed = accounts.list_all(int(cap) if cap.isdigit() else None, groups)
        regexps = {str(group["name"]).lower(): group.get("user_regexp") or ""
                   for group in groups if "user_regexp" in group}
        with self.db.transaction() as conn:
            users = {row[1].lower(): dict(row) for row in conn.execute(
                "SELECT id, login, real_name, disabled_text, email_enabled FROM users")}
            memberships = {}
            for user_id, name, grant in conn.execute(
                    "SELECT ug.user_id, g.name, ug.grant_type FROM user_groups ug JOIN groups g"
                    " ON g.id = ug.group_id WHERE ug.is_bless = 0"):
                memberships.setdefault(user_id, {}).setdefault(name.lower(), set()).add(grant)
        for key in sorted(accounts.details):
            details = accounts.details[key]
            subject = f"account {details['login']}"
            user = users.get(key)
            if user is None:
                self._differ_about(subject, "account", "present", "missing")
                continue
            self._compare_account(subject, details, user, memberships.get(user["id"], {}),
                                  regexps)
        if not listed.refused and not listed.unresolved:
            for key in sorted(set(users) - set(accounts.details) - self.admin_logins):
                self._differ_about(f"account {users[key]['login']}", "account", "not listed",
                                   "present")
        else:
            self.not_compared.append("accounts the source did not list (see the import's "
                                     "report)")

    def _compare_account(self, subject, details, user, memberships, regexps):
        admin = user["login"].lower() in self.admin_logins
        if details["real_name"] != user["real_name"]:
            self._differ_about(subject, "real_name", details["real_name"], user["real_name"])
        if not admin:
            can_login = not user["disabled_text"]
            if details["can_login"] != can_login:
                self._differ_about(subject, "can_login", details["can_login"], can_login)
            if "email_enabled" in details and details["email_enabled"] != bool(
                    user["email_enabled"]):
                self._differ_about(subject, "email_enabled", details["email_enabled"],
                                   bool(user["email_enabled"]))
        if details["groups"] is None:
            return
        shown = {name.lower(): name for name in details["groups"]}
        seen = details["seen"]
        held = {name for name in memberships if seen is None or name in seen}
        source_side = sorted(shown.values(), key=str.lower)
        target_side = sorted(held, key=str.lower)
        if {name.lower() for name in source_side} - set(held) or (
                not admin and held - set(shown)):
            self._differ_about(subject, "groups", source_side, target_side)
        for name in sorted(set(shown) & set(held)):
            by_regexp = regexp_matches(regexps.get(name, ""), user["login"])
            if by_regexp and GRANT_REGEXP not in memberships[name]:
                self._differ_about(subject, f"membership in {shown[name]}",
                                   "granted by the group's regexp", "direct only")

    # Group controls --------------------------------------------------------------

    def _compare_controls(self, pages):
        """Group controls of the products whose controls the source shows
        (over REST, or on the pages of `pages`, an AdminPages or None)."""
        shown, wanted = {}, []
        for product in self.source.products():
            if isinstance(product.get("group_controls"), dict):
                shown[product["name"]] = product["group_controls"]
            else:
                wanted.append(product["name"])
        if wanted and self.options.source_password and self.login:
            pages = AdminPages(self.source.client, self.login,
                                      self.options.source_password)
            try:
                for name in wanted:
                    try:
                        shown[name] = pages.controls(name)[0]
                    except PagesRefused:
                        if pages.cookies is None:
                            break
            finally:
                pages.close()
        unknown = set(self.controls_unknown)
        for name in wanted:
            if name not in shown and name not in unknown:
                self.not_compared.append(f"product {name!r}: group controls (the import read "
                                         "them from the administration pages: give "
                                         "BUGSVC_IMPORT_PASSWORD to compare them)")
        self.controls_unknown = [name for name in self.controls_unknown if name not in shown]
        with self.db.transaction() as conn:
            for product, controls in sorted(shown.items()):
                stored = {row[0].lower(): dict(zip(_CONTROL_KEYS, row[1:], strict=True)) for row in
                          conn.execute("SELECT g.name, gc.entry, gc.membercontrol,"
                                       " gc.othercontrol, gc.canedit FROM group_controls gc"
                                       " JOIN groups g ON g.id = gc.group_id JOIN products p"
                                       " ON p.id = gc.product_id WHERE lower(p.name) = lower(?)",
                                       (product,))}
                wanted_controls = {}
                for group, control in controls.items():
                    values = {"entry": int(forms.truth(control.get("entry"))),
                              "membercontrol": control_value(control.get("membercontrol")),
                              "othercontrol": control_value(control.get("othercontrol")),
                              "canedit": int(forms.truth(control.get("canedit")))}
                    if any(values.values()):
                        wanted_controls[group.lower()] = (group, values)
                for key in sorted(set(wanted_controls) | set(stored)):
                    group, values = wanted_controls.get(key, (key, None))
                    if values != stored.get(key):
                        self._differ_about(f"product {product!r} group {group!r}",
                                           "group control", values, stored.get(key))

    def _compare_grants(self, pages):
        """The grants between groups the source's group pages show
        (`pages`, an AdminPages or None) against the target's. Without the
        pages nothing is compared: the import did not carry them either, and
        its report says so."""
        if pages is None or not self.source.client.api_key:
            return
        groups = [group for group in self.source.groups() if group.get("id")
                  and group.get("name")]
        if not groups:
            return
        with self.db.transaction() as conn:
            held = {}
            for member, grantor, grant_type in conn.execute(
                    "SELECT m.name, g.name, 0 FROM group_group_map x JOIN groups m"
                    " ON m.id = x.member_id JOIN groups g ON g.id = x.grantor_id"
                    " UNION ALL SELECT m.name, g.name, x.grant_type FROM group_grants x"
                    " JOIN groups m ON m.id = x.member_id JOIN groups g ON g.id = x.grantor_id"):
                held.setdefault((grantor.lower(), grant_type), set()).add(member.lower())
        for group in groups:
            try:
                shown = pages.grants(group["id"])
            except PagesRefused as exc:
                self.not_compared.append(f"grants between groups ({exc})")
                return
            for grant_type, names in sorted(shown.items()):
                source_side = sorted({name.lower() for name in names})
                target_side = sorted(held.get((group["name"].lower(), grant_type), ()))
                if source_side != target_side:
                    self._differ_about(f"group {group['name']!r}", _GRANT_NAMES[grant_type],
                                       source_side, target_side)

    # Bugs ------------------------------------------------------------------------

    def _target_ids(self):
        with self.units.context(self.user_id) as ctx:
            ids = [row[0] for row in ctx.conn.execute("SELECT id FROM bugs ORDER BY id")]
            visible = set()
            for start in range(0, len(ids), 500):
                visible |= visibility.visible_bug_ids(ctx, ids[start:start + 500])
        return sorted(visible)

    def _read_source(self, ids):
        bugs, gone = self.source.bugs(ids)
        comments, _ = self.source.comments([i for i in ids if i not in gone])
        history, _ = self.source.histories([i for i in ids if i not in gone])
        attachments, _ = self.source.attachments([i for i in ids if i not in gone])
        listed = [a for items in attachments.values() for a in items]
        data = self.source.attachments_data(listed)
        return bugs, comments, history, attachments, data

    def _call(self, name, params):
        return self.runner.call(OPERATIONS[name], params, self.user_id)

    def _compare(self, ids, source_bugs, source_comments, source_history, source_attachments,
                 source_data):
        fields = "_default,tags" if self.user_id else None
        target_bugs = {b["id"]: b for b in self._call(
            "Bug.get", {"ids": ids, "include_fields": fields})["bugs"]}
        target_comments = {int(k): v["comments"] for k, v in
                           self._call("Bug.comments", {"ids": ids})["bugs"].items()}
        target_history = {b["id"]: b["history"] for b in
                          self._call("Bug.history", {"ids": ids})["bugs"]}
        target_attachments = {int(k): v for k, v in self._call(
            "Bug.attachments", {"ids": ids, "exclude_fields": "data"})["bugs"].items()}
        target_data = self._target_data([int(i) for i in source_data])
        for bug_id in ids:
            if bug_id not in source_bugs:
                self._differ(bug_id, "", "bug", "not visible when read", "visible")
                continue
            source_bug = forms.bug(source_bugs[bug_id])
            if self.links is not None:
                source_bug["see_also"] = [self.links.rewrite(url)
                                          for url in source_bug["see_also"]]
            self._compare_bug(bug_id, source_bug, forms.bug(_jsonable(target_bugs[bug_id])))
            self._compare_items(bug_id, "comment", _COMMENT_KEYS,
                                [forms.comment(c) for c in source_comments.get(bug_id, [])],
                                [forms.comment(_jsonable(c))
                                 for c in target_comments.get(bug_id, [])])
            self._compare_items(bug_id, "attachment", _ATTACHMENT_KEYS,
                                [forms.attachment(a) for a in source_attachments.get(bug_id, [])],
                                [forms.attachment(_jsonable(a))
                                 for a in target_attachments.get(bug_id, [])])
            for attachment in source_attachments.get(bug_id, []):
                attachment_id = int(attachment["id"])
                if attachment_id in source_data and attachment_id in target_data:
                    self._compare_bytes(bug_id, attachment_id, source_data[attachment_id],
                                        target_data[attachment_id])
            source_entries = forms.history_entries(forms.history(source_history.get(bug_id)))
            target_entries = forms.history_entries(
                forms.history(_jsonable(target_history.get(bug_id, []))))
            self._compare_history(bug_id, source_entries, target_entries)

    def _target_data(self, attachment_ids):
        """{attachment id: its bytes in the target}."""
        found = {}
        with self.db.transaction() as conn:
            for start in range(0, len(attachment_ids), 500):
                chunk = attachment_ids[start:start + 500]
                found.update((row[0], bytes(row[1])) for row in conn.execute(
                    f"SELECT attachment_id, data FROM attachment_data WHERE attachment_id IN"
                    f" ({placeholders(chunk)})", chunk))
        return found

    def _compare_bytes(self, bug_id, attachment_id, encoded, stored):
        try:
            data = forms.attachment_data(encoded)
        except forms.FormError:
            data = None
        if data != stored:
            self._differ(bug_id, f"attachment {attachment_id}", "data", _digest(data),
                         _digest(stored))

    def _compare_bug(self, bug_id, source, target):
        for key in _BUG_KEYS:
            if key == "tags" and "tags" not in source:
                continue                   # the source shows the key no tags (anonymous)
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


def _digest(data):
    if data is None:
        return None
    return f"{len(data):,} bytes, sha256 {hashlib.sha256(data).hexdigest()[:16]}"


def _comparable(key, value):
    """Values that mean the same compare equal: flags in id order, lists of
    names as sets where the order is the reference's own."""
    if key == "flags":
        return sorted((tuple(sorted(flag.items())) for flag in value or []),
                      key=lambda flag: str(flag))
    if key in ("cc", "keywords", "groups", "tags"):
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
    if isinstance(value, dict):
        return {key: _jsonable(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_jsonable(item) for item in value]
    if isinstance(value, datetime):
        return value.strftime("%Y-%m-%dT%H:%M:%SZ")
    return value
