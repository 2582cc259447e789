"""One import run, start to end.

1. The target: a new database is made (schema, the reference's default
   values, an administrator, no test product); an existing one must be
   empty of bugs or filled by an earlier import from the same source.
2. The run: an unfinished one is continued from its cursor; otherwise a
   new one starts at the source's time now (its /rest/time) and reads every
   bug, or, when an earlier run finished, the bugs changed since that run
   began less the overlap (bugzilla.mozilla.org's recipe for incremental
   reads; `--since` sets the bound by hand).
3. The catalogue is carried (again: cheap, and it may have changed):
   every account the key may list with its memberships, groups, fields,
   products with their group controls (or, where the source does not show
   them, the groups their bugs use), flag types, parameters, and how See
   Also links to the old installation are rewritten.
4. The bug ids are listed, in pages by bug id, then read in pages of
   `page_size` bugs (each page's reads in parallel batches, the next page
   read while this one is written) and written one page per transaction,
   with the cursor moved in the same transaction.
5. Links that waited for bugs that never came are reported; the run is
   marked finished; the report is printed.

A dry run does all of this into a scratch copy of the target, which is
thrown away: the report is the one a real run would print.
"""

import json
import os
import secrets
import shutil
import sqlite3
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone
from pathlib import Path

from .. import dates
from ..accounts import auth
from ..accounts.auth import ScryptCost
from ..catalogue import install, settings
from ..config import DEFAULT_ADMIN_EMAIL
from ..store.convert import convert
from ..store.location import Location, open_database
from . import catalogue, forms, state, writer
from .accounts import Accounts
from .admin_pages import AdminPages, PagesRefused
from .client import Client, Limits, SourceError, SourceMisbehaved, rest_base
from .progress import Progress
from .report import Report
from .source import Source
from .target import Target


DEFAULT_OVERLAP = timedelta(minutes=5)


@dataclass
class Options:
    """What the command line asked for (see bugsvc/cli/options.py)."""
    url: str
    db_path: str
    api_key: str | None = None
    login: str | None = None
    since: str | None = None               # database form
    dry_run: bool = False
    concurrency: int = 4
    page_size: int = 100
    batch_size: int = 25
    overlap: timedelta = DEFAULT_OVERLAP
    retries: int = 8
    admin_email: str | None = None
    admin_password: str | None = None
    password_cost: ScryptCost = field(default_factory=ScryptCost)
    base_delay: float = 1.0
    limits: Limits = field(default_factory=Limits)
    urlbase: str | None = None             # the new installation's address
    keep_see_also: bool = False
    source_password: str | None = None     # the key's account's, for 5.2's admin pages


class ImportRefused(Exception):
    """The target cannot take this import (said in one line; exit status 2)."""


def run_import(options, out=sys.stdout, err=sys.stderr, client=None):
    """Run one import. Returns the exit status: 0 done, 1 the source failed
    (the run stays resumable), 130 interrupted.
    Errors: ImportRefused, SchemaError, ValueError (a bad URL)."""
    progress = Progress(err)
    client = client or make_client(options, progress)
    if client.on_retry is None:
        client.on_retry = progress.retry
    report = Report(dry_run=options.dry_run)
    scratch = None
    try:
        if options.dry_run:
            scratch = tempfile.mkdtemp(prefix="bugsvc-import-dry-run-")
            db_path = _scratch_copy(options.db_path, scratch)
        else:
            db_path = options.db_path
        db, created = _open_target(db_path, options, out)
        try:
            importer = _Importer(Source(client), db, options, report, progress, created)
            status = importer.run()
        finally:
            db.close()
    except SourceMisbehaved as exc:
        progress.say(f"bugsvc import: stopped: {exc}")
        if not options.dry_run:
            progress.say("Nothing written is lost: run the same command again to continue "
                         "where it stopped.")
        status = 1
    except SourceError as exc:
        progress.say(f"bugsvc import: the source failed: {exc}")
        if not options.dry_run:
            progress.say("Nothing written is lost: run the same command again to continue "
                         "where it stopped.")
        status = 1
    except KeyboardInterrupt:
        progress.say("bugsvc import: stopped. Run the same command again to continue where "
                     "it stopped.")
        status = 130
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    for line in report.lines():
        print(line, file=out)
    out.flush()
    return status


def make_client(options, progress):
    """The Client of a run (or a verification) as the options ask."""
    return Client(options.url, options.api_key, concurrency=options.concurrency,
                  retries=options.retries, on_retry=progress.retry,
                  base_delay=options.base_delay, limits=options.limits)


def _scratch_copy(db_path, scratch):
    """A copy of the target to write a dry run into (a new database when
    there is none yet)."""
    path = os.path.join(scratch, "dry-run.sqlite")
    if db_path and not Location.of(db_path).is_file:
        # A target on a server is copied into the scratch file as convert-db does.
        probe = open_database(db_path)
        try:
            installed = probe.version() > 0
        finally:
            probe.close()
        if installed:
            convert(db_path, path)
        return path
    if db_path and os.path.exists(db_path) and os.path.getsize(db_path) > 0:
        source = sqlite3.connect(db_path)
        copy = sqlite3.connect(path)
        try:
            source.backup(copy)
        finally:
            copy.close()
            source.close()
    return path


def _open_target(db_path, options, out):
    """The target Database, made when new; (db, created).
    Errors: ImportRefused for a database another tracker's data fills."""
    parent = Path(db_path).resolve().parent
    if Location.of(db_path).is_file and not parent.is_dir():
        raise ImportRefused(f"the directory of {db_path} does not exist")
    db = open_database(db_path)
    try:
        created = db.initialize()
        with db.transaction(write=True) as conn:
            if created or not install.is_installed(conn):
                _install(conn, options, out)
                created = True
            values = state.load(conn)
            bugs = conn.execute("SELECT COUNT(*) FROM bugs").fetchone()[0]
        source = values.get(state.SOURCE)
        wanted = _source_name(options.url)
        if source is not None and source != wanted:
            raise ImportRefused(f"{db_path} was filled from {source}, not {wanted}: import "
                                "into a new database")
        if source is None and bugs:
            raise ImportRefused(f"{db_path} already holds {bugs} bugs of its own: import into "
                                "a new database (bug ids are kept, so they would collide)")
    except BaseException:
        db.close()
        raise
    return db, created


def _source_name(url):
    return rest_base(url)


def _install(conn, options, out):
    """A new target: the default values, and an administrator whose
    password is printed once (the imported accounts have none)."""
    if conn.execute("SELECT 1 FROM fields LIMIT 1").fetchone() is None:
        install.install_defaults(conn)
    email = options.admin_email or DEFAULT_ADMIN_EMAIL
    password = options.admin_password or secrets.token_urlsafe(18)
    install.create_admin(conn, email, auth.hash_password(password, options.password_cost),
                         datetime.now(timezone.utc), test_product=False)
    if not options.dry_run:
        print(f"Created the administrator {email}.", file=out, flush=True)
        if not options.admin_password:
            print(f"Its password, shown only this once: {password}", file=out, flush=True)


class _Importer:
    def __init__(self, source, db, options, report, progress, created):
        self.source = source
        self.db = db
        self.options = options
        self.report = report
        self.progress = progress
        self.created = created
        self.now = dates.to_db(datetime.now(timezone.utc))
        self.accounts = None
        self.local_links = None
        self.controls_unknown = set()
        self._refreshed = set()
        self.login = None
        self.saw_time_tracking = False
        self.admin_logins = [options.admin_email or DEFAULT_ADMIN_EMAIL]

    # The run -----------------------------------------------------------------

    def run(self):
        source = self.source
        version = source.version()
        started = source.time()
        self.login = source.whoami() or self.options.login
        self.accounts = Accounts(source, self.login)
        reader = self.login or ("an unnamed account" if source.client.api_key else "anonymous")
        self.progress.say(f"Source: {source.client.base} (Bugzilla {version}), reading as "
                          f"{reader}.")
        with self.db.transaction(write=True) as conn:
            values = state.load(conn)
            state.put(conn, state.SOURCE, _source_name(self.options.url))
            if self.login:
                state.put(conn, state.LOGIN, self.login)
            run = state.unfinished(values)
            if run is not None and self.options.since is None:
                self.progress.say(f"Continuing the run begun at {forms.wire(run.started)}, "
                                  f"after bug {run.cursor}.")
            else:
                since = self.options.since
                if since is None and values.get(state.LAST_STARTED):
                    since = dates.to_db(forms.moment(values[state.LAST_STARTED])
                                        - self.options.overlap)
                state.begin_run(conn, started, since)
                run = state.Run(state.load(conn))
        # Until a run has finished, the target's values are the source's alone.
        self._catalogue(first_run=not values.get(state.LAST_STARTED))
        ids = self._list(run)
        self._bugs(ids)
        with self.db.transaction(write=True) as conn:
            for bug_id, field_name, other in writer.unresolved_links(conn):
                self.report.not_carried(f"{field_name} links", f"bug {bug_id} -> {other}",
                                        "the other bug is not visible to the key (or gone)")
            state.finish_run(conn)
        if not self.saw_time_tracking and ids:
            self.report.note("Time tracking (estimated and remaining hours, deadlines) was not "
                             "visible to the key: bugs keep none.")
        kept = self.report.counts.pop("see also links to the old installation", 0)
        if kept:
            self.report.note(f"{kept:,} See Also links name the old installation's own bugs and "
                             "were kept as they are: run again with --urlbase (the new "
                             "installation's address; bug ids are kept) to point them there.")
        if self.report.counts.get("memberships granted by a regexp"):
            self.report.note("Memberships a group's regular expression grants are kept as "
                             "such: changing the expression later takes them away, as at the "
                             "source. The source does not show whether someone it grants was "
                             "also added to the group by hand: add those again if so.")
        self.report.note("Imported accounts have no password: people set theirs with the "
                         "password reset mail (or an administrator sets one).")
        return 0

    # Catalogue -----------------------------------------------------------------

    def _catalogue(self, first_run):
        self.progress.say("Reading the catalogue: accounts, fields, groups, products, flag "
                          "types ...")
        source = self.source
        parameters = source.parameters()
        self.accounts.read_key_account()
        fields = source.fields()
        groups = source.groups(membership=bool(source.client.api_key)
                               and not self.accounts.editusers)
        products = source.products()
        pages = None
        if self.options.source_password and self.login:
            pages = AdminPages(source.client, self.login, self.options.source_password)
        try:
            controls, unknown = self._group_controls(products, pages)
            grants = self._group_grants(groups, pages)
        finally:
            if pages is not None:
                pages.close()
        self._list_accounts(parameters, groups)
        logins = set(self.accounts.logins())
        owners = set()
        for product in products:
            for component in product.get("components") or []:
                for key in ("default_assigned_to", "default_qa_contact"):
                    if component.get(key):
                        owners.add(component[key])
        self._read_users(owners)
        logins |= owners
        if self.login:
            logins.add(self.login)
        if not any("user_regexp" in group for group in groups):
            self.report.note("The key may not read the groups' settings (creategroups): groups "
                             "keep the target's own membership rules (on a new database every "
                             "account is in editbugs), and memberships a group's regular "
                             "expression grants at the source are direct ones here; change "
                             "them if the source differs.")
        with self.db.transaction(write=True) as conn:
            target = self._target(conn)
            group_ids = catalogue.carry_groups(target, groups)
            group_ids["admin"] = target.group_id("admin", create=False)
            catalogue.carry_group_grants(target, grants, self.report)
            for name in ("insidergroup", "timetrackinggroup", "comment_taggers_group"):
                if parameters.get(name):
                    target.group_id(str(parameters[name]), create=True)
            for login in sorted(logins):
                target.user_id(login)
            catalogue.carry_fields(target, fields, first_run, self.report)
            flag_types = catalogue.carry_products(target, products, source, self.report)
            catalogue.carry_flag_types(target, flag_types, group_ids, self.report)
            catalogue.carry_parameters(target, parameters, self.report)
            catalogue.carry_group_controls(target, controls, unknown, self.report)
            self.controls_unknown = {target.products[name.lower()] for name in unknown
                                     if name.lower() in target.products}
            state.put(conn, state.CONTROLS_UNKNOWN, json.dumps(sorted(unknown)))
            self.local_links = self._local_links(conn, parameters)

    def _group_controls(self, products, pages):
        """({product name: (controls, inactive groups)}, [names of products
        whose controls the source does not show]): from Product.get where
        it shows them (bugsvc, to editcomponents), else from 5.2's
        administration pages, `pages` (an AdminPages, None when the key's
        account or its password is not known)."""
        controls, missing = {}, []
        for product in products:
            if isinstance(product.get("group_controls"), dict):
                controls[product["name"]] = (product["group_controls"], [])
            else:
                missing.append(product["name"])
        if missing and pages is not None:
            for name in list(missing):
                try:
                    controls[name] = pages.controls(name)
                except PagesRefused as exc:
                    self.report.not_carried("group controls", name, f"the administration "
                                            f"pages could not be read: {exc}")
                    if pages.cookies is None:
                        break
                else:
                    missing.remove(name)
        elif missing and self.source.client.api_key:
            self.report.note("The source does not show products' group controls to the key "
                             "over REST (Bugzilla 5.2 shows them to nobody there): give the "
                             "password of the key's account (an editcomponents member) in "
                             "BUGSVC_IMPORT_PASSWORD to read them from its administration "
                             "pages, or set them by hand.")
        return controls, missing

    def _group_grants(self, groups, pages):
        """{group name: {grant type: [group names]}} (admin_pages.AdminPages.grants)
        of the groups the source listed, read from 5.2's group pages
        (`pages`, None when no password was given: the report says what
        that leaves). Only a creategroups member may read them; the first
        refusal ends the reading, and the report names what was not read."""
        listed = [group for group in groups if group.get("name") and group.get("id")]
        if not listed:
            return {}
        if pages is None:
            if self.source.client.api_key:
                self.report.note("The grants between groups (groups that are members of other "
                                 "groups, may bless them or see their members) were not "
                                 "carried: the import reads them only from Bugzilla 5.2's "
                                 "administration pages, with the password of the key's "
                                 "account (a creategroups member) in BUGSVC_IMPORT_PASSWORD; "
                                 "else set them on editgroups.cgi. The groups the import made "
                                 "have no member groups and no blessing groups (not even "
                                 "admin): the target's administrators are their members only "
                                 "where the source showed them so.")
            return {}
        grants = {}
        for group in listed:
            try:
                grants[group["name"]] = pages.grants(group["id"])
            except PagesRefused as exc:
                unread = [g["name"] for g in listed if g["name"] not in grants]
                for name in unread:
                    self.report.not_carried("group grants", name, "the administration pages "
                                            f"could not be read: {exc}")
                break
        if grants and not any(2 in shown for shown in grants.values()):
            self.report.note("The source's pages show no visibility grants (who sees whom) "
                             "while its usevisibilitygroups is off: those of the target are "
                             "kept as they are.")
        return grants

    def _local_links(self, conn, parameters):
        """How See Also links to the old installation's bugs are written
        (forms.LocalLinks, None: as they are), kept in the state for the
        runs after and --verify; links stored by an earlier run with
        another new address (or none) are rewritten."""
        if self.options.keep_see_also:
            state.put(conn, state.LINKS_NEW, "")
            return None
        values = state.load(conn)
        if self.options.urlbase:
            address = settings.normalise(conn, "urlbase", self.options.urlbase)
            conn.execute("INSERT INTO params (name, value) VALUES ('urlbase', ?)"
                         " ON CONFLICT (name) DO UPDATE SET value = excluded.value", (address,))
        new = settings.load(conn)["urlbase"] or None
        old = [self.source.client.site]
        if "urlbase" in parameters:
            old.append(str(parameters["urlbase"] or ""))
        before = values.get(state.LINKS_NEW) or None
        links = forms.LocalLinks(old + json.loads(values.get(state.LINKS_OLD) or "[]"), new)
        state.put(conn, state.LINKS_OLD, json.dumps(links.old))
        state.put(conn, state.LINKS_NEW, new or "")
        if new and new != before:
            again = forms.LocalLinks(links.old + ([before] if before else []), new)
            changed = writer.rewrite_local_links(conn, again)
            if changed:
                self.report.count("see also links rewritten", changed)
        return links

    def _list_accounts(self, parameters, groups):
        """Every account the key may list, and the report on those it may not."""
        if not self.source.client.api_key:
            self.report.not_carried("accounts", "those on no bug", "an anonymous reader may "
                                    "not list the source's accounts: only those on bugs come")
            return
        cap = str(parameters.get("maxusermatches", "")).strip()
        listed = self.accounts.list_all(int(cap) if cap.isdigit() else None, groups)
        if listed.refused:
            self.report.not_carried("accounts", "those on no bug", "the source does not list "
                                    "its accounts to the key: only those on bugs come")
        for prefix in listed.unresolved:
            self.report.not_carried(
                "accounts", f"{prefix}*", f"the source lists at most {listed.most:,} accounts "
                "per question and these could not be told apart further: some may be missing")

    def _target(self, conn):
        return Target(conn, self.report, self.now, self.admin_logins, accounts=self.accounts,
                      refreshed=self._refreshed, tag_owner=self.login,
                      local_links=self.local_links, controls_unknown=self.controls_unknown)

    def _read_users(self, logins):
        """Describe the accounts in `logins` the run has not read yet (a
        page reads those it names itself: see importer/accounts.py)."""
        for login in self.accounts.read(logins) or []:
            self.report.not_carried("account details", login,
                                    "the source does not describe the account to the key")

    # Listing -------------------------------------------------------------------

    def _list(self, run):
        bound = f" changed since {forms.wire(run.since)}" if run.since else ""
        self.progress.say(f"Listing the bugs{bound} after bug {run.cursor} ...")
        ids, after = [], run.cursor
        page = max(self.options.page_size, 1000)
        while True:
            found = self.source.bug_ids(after, run.since, page)
            found = [bug_id for bug_id, _ in found if bug_id > after]
            if not found:
                break
            ids += found
            after = found[-1]
        self.progress.say(f"{len(ids):,} bugs to read.")
        return ids

    # Bugs ----------------------------------------------------------------------

    def _bugs(self, ids):
        self.progress.start(len(ids))
        size = max(1, self.options.page_size)
        pages = [ids[start:start + size] for start in range(0, len(ids), size)]
        requests = ThreadPoolExecutor(max_workers=max(2, self.options.concurrency * 2),
                                      thread_name_prefix="import-read")
        readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="import-page")
        try:
            pending = []
            for page in pages[:2]:
                pending.append(readers.submit(self._read_page, page, requests))
            next_page = 2
            while pending:
                data = pending.pop(0).result()
                if next_page < len(pages):
                    pending.append(readers.submit(self._read_page, pages[next_page], requests))
                    next_page += 1
                self._write_page(data)
        except BaseException:
            for future in pending:
                future.cancel()
            raise
        finally:
            readers.shutdown(wait=True, cancel_futures=True)
            requests.shutdown(wait=True, cancel_futures=True)
        self.progress.finish()

    def _read_page(self, ids, requests):
        """Everything of the bugs `ids` (runs in a reader thread)."""
        size = max(1, self.options.batch_size)
        batches = [ids[start:start + size] for start in range(0, len(ids), size)]
        kinds = {"bugs": self.source.bugs, "comments": self.source.comments,
                 "history": self.source.histories, "attachments": self.source.attachments}
        futures = {(kind, index): requests.submit(read, batch)
                   for kind, read in kinds.items() for index, batch in enumerate(batches)}
        results = {kind: {} for kind in kinds}
        gone = set()
        for (kind, _), future in futures.items():
            found, missing = future.result()
            results[kind].update(found)
            gone.update(missing)
        data = _Page(ids, results["bugs"], results["comments"], results["history"],
                     results["attachments"], gone)
        self._read_attachment_data(data, requests)
        logins = set()
        for raw in data.bugs.values():
            logins.update(filter(None, [raw.get("assigned_to"), raw.get("creator"),
                                        raw.get("qa_contact")]))
            logins.update(raw.get("cc") or [])
            for flag in raw.get("flags") or []:
                logins.update(filter(None, [flag.get("setter"), flag.get("requestee")]))
        for comments in data.comments.values():
            logins.update(c.get("creator") for c in comments if c.get("creator"))
        for entries in data.history.values():
            logins.update(e.get("who") for e in entries if e.get("who"))
        for attachments in data.attachments.values():
            for attachment in attachments:
                if attachment.get("creator"):
                    logins.add(attachment["creator"])
                for flag in attachment.get("flags") or []:
                    logins.update(filter(None, [flag.get("setter"), flag.get("requestee")]))
        data.logins = logins
        self._read_users(logins)
        return data

    def _read_attachment_data(self, data, requests):
        """The data of the attachments the target does not have yet."""
        listed = [attachment for attachments in data.attachments.values()
                  for attachment in attachments]
        if not listed:
            return
        conn = self.db.connect()
        try:
            ids = [int(a["id"]) for a in listed]
            have = set()
            for start in range(0, len(ids), 500):
                chunk = ids[start:start + 500]
                have.update(row[0] for row in conn.execute(
                    "SELECT attachment_id FROM attachment_data WHERE attachment_id IN"
                    f" ({', '.join('?' for _ in chunk)})", chunk))
        finally:
            conn.close()
        needed = [a for a in listed if int(a["id"]) not in have]
        data.attachment_data.update(self.source.attachments_data(needed, requests.map))

    def _write_page(self, data):
        counts = {"comments": 0, "attachments": 0}
        with self.db.transaction(write=True) as conn:
            target = self._target(conn)
            for bug_id in data.ids:
                raw = data.bugs.get(bug_id)
                if raw is None or bug_id in data.gone:
                    self.report.not_carried("bugs", bug_id, "no longer visible to the key when "
                                            "read (or deleted)")
                    continue
                try:
                    bug, comments, history, attachments = self._forms(data, bug_id, raw)
                except (forms.FormError, KeyError, TypeError, ValueError) as exc:
                    self.report.not_carried("bugs", bug_id, f"the target refuses it: {exc}")
                    continue
                for login, real_name in bug["real_names"].items():
                    self.accounts.name_from_bug(login, real_name)
                if "time" in bug:
                    self.saw_time_tracking = True
                writer.write_bug(target, bug, comments, history, attachments, self.report)
                counts["comments"] += len(comments)
                counts["attachments"] += len(attachments)
            state.advance(conn, data.ids[-1])
        self.progress.advance(len(data.ids), **counts)

    def _forms(self, data, bug_id, raw):
        bug = forms.bug(raw)
        comments = [forms.comment(c) for c in data.comments.get(bug_id, [])]
        history = forms.history(data.history.get(bug_id, []))
        attachments = []
        for item in data.attachments.get(bug_id, []):
            item = dict(item)
            encoded = data.attachment_data.get(int(item["id"]))
            if encoded is not None:
                item["data"] = encoded
            attachments.append(forms.attachment(item))
        return bug, comments, history, attachments


class _Page:
    def __init__(self, ids, bugs, comments, history, attachments, gone):
        self.ids = ids
        self.bugs = bugs
        self.comments = comments
        self.history = history
        self.attachments = attachments
        self.gone = gone
        self.attachment_data = {}
        self.logins = set()
