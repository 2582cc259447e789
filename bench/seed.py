"""Fill a fresh database with realistic data for the benchmark.

    python -m bench.seed --bugs 100000 [--db bench/data/bugs-100000.sqlite] [--seed 1]

The schema and the default installation come from the project itself
(`bugsvc.serving.server.prepare_database`: schema.sql, default data, the administrator);
then products, components, users, groups and bugs (with CC, keywords,
dependencies, flags, comments (a few private), history rows, small attachments,
aliases and a few restricted bugs) are bulk-inserted into the same tables.
The secondary indexes of the bulk tables are dropped during the load and
recreated afterwards from their definitions in schema.sql. Bugs are generated
in chunks by worker processes (one per core beyond the writer) while the main
process writes, so both cores work. The same --seed gives the same data.
"""

import argparse
import os
import random
import re
import sqlite3
import sys
import time
from dataclasses import dataclass
from datetime import datetime, timezone
from multiprocessing import get_context
from pathlib import Path

from bugsvc.accounts import membership
from bugsvc.accounts.auth import ScryptCost
from bugsvc.config import Config
from bugsvc.serving.server import prepare_database
from bugsvc.store.schema import schema_sql, split_script
from bugsvc.store.sqlite import DIALECT as SQLITE

from . import corpus
from .progress import Progress


DATA_DIR = Path(__file__).resolve().parent / "data"
ADMIN_EMAIL = "admin@example.com"
ADMIN_PASSWORD = "bench-admin-password"
CHUNK = 5000
# Times: bugs are filed evenly over these ten years.
START = int(datetime(2016, 1, 1, tzinfo=timezone.utc).timestamp())
END = int(datetime(2026, 1, 1, tzinfo=timezone.utc).timestamp())
DAY = 86400
# Tables bulk-loaded here; their secondary indexes are rebuilt after the load.
BULK_TABLES = ("bugs", "bug_aliases", "bug_cc", "bug_keywords", "dependencies", "bug_groups",
               "comments", "bug_activity", "attachments", "flags")
_INDEX = re.compile(r"^CREATE\s+(?:UNIQUE\s+)?INDEX\s+(\w+)\s+ON\s+(\w+)", re.IGNORECASE)

# (status, resolution, share of bugs in ‰)
STATES = (("UNCONFIRMED", "", 100), ("CONFIRMED", "", 230), ("IN_PROGRESS", "", 60),
          ("RESOLVED", "FIXED", 300), ("RESOLVED", "INVALID", 40), ("RESOLVED", "WONTFIX", 40),
          ("RESOLVED", "DUPLICATE", 60), ("RESOLVED", "WORKSFORME", 30),
          ("VERIFIED", "FIXED", 140))
# Extra comments after the description: mean about 3.9, so with attachment
# comments a bug has five comments on average.
EXTRA_COMMENTS = (0, 0, 1, 1, 1, 2, 2, 3, 3, 3, 4, 4, 5, 5, 6, 6, 7, 8, 8, 9)
CC_COUNTS = (0, 0, 0, 1, 1, 1, 2, 2, 3, 4)


def default_db_path(bugs):
    """bench/data/bugs-<N>.sqlite."""
    return DATA_DIR / f"bugs-{bugs}.sqlite"


def weighted_table(items, weights, size=1024):
    """A list of `size` items in which each appears in proportion to its weight,
    so a uniform index draws from the weighted distribution."""
    total = float(sum(weights))
    table = []
    for item, weight in zip(items, weights, strict=True):
        table += [item] * max(1, round(size * weight / total))
    return table


@dataclass
class Catalogue:
    """What bugs are made of; built in the database first, then sent to the
    generating processes."""
    bugs: int
    seed: int
    user_ids: list          # accounts that file, comment and are assigned (not disabled)
    logins: dict            # id -> login, for history texts
    heavy_users: list       # the few accounts that do most of the work
    products: list          # [(product_id, [(component_id, assignee)], [versions], [milestones])]
    product_table: list     # index into products, weighted (a few products get most bugs)
    keywords: list          # [(id, name)]
    flag_types: list        # [(id, name)] of bug flag types
    security_group: int
    state_table: list       # indexes into STATES


# Catalogue --------------------------------------------------------------------

def build_catalogue(conn, bugs, seed, now_text):
    """Insert users, groups, classifications, products, components, versions,
    milestones, keywords and flag types; return the Catalogue."""
    rng = random.Random(seed)
    user_count = max(50, bugs // 50)
    users = []
    for number in range(1, user_count + 1):
        first, last = rng.choice(corpus.FIRST_NAMES), rng.choice(corpus.LAST_NAMES)
        login = f"{first}.{last}{number}@example.com".lower()
        disabled = "Left the project." if number % 200 == 17 else ""
        users.append((login, f"{first} {last}", disabled, now_text))
    conn.executemany("INSERT INTO users (login, real_name, password_hash, disabled_text,"
                     " created_at) VALUES (?, ?, NULL, ?, ?)", users)
    rows = conn.execute("SELECT id, login, disabled_text FROM users ORDER BY id").fetchall()
    logins = {row[0]: row[1] for row in rows}
    admin_id = rows[0][0]
    user_ids = [row[0] for row in rows if not row[2] and row[0] != admin_id]

    groups = {}
    for name, description in (("security", "Security-sensitive bugs"),
                              ("insiders", "Sees private comments and attachments")):
        groups[name] = conn.execute(
            "INSERT INTO groups (name, description, is_bug_group, user_regexp, is_active)"
            " VALUES (?, ?, 1, '', 1)", (name, description)).lastrowid
    for (group_id,) in conn.execute("SELECT id FROM groups WHERE user_regexp <> ''").fetchall():
        membership.refresh_for_group(conn, group_id)
    direct = [(admin_id, groups["security"]), (admin_id, groups["insiders"])]
    direct += [(uid, groups["security"]) for uid in user_ids if uid % 20 == 3]
    direct += [(uid, groups["insiders"]) for uid in user_ids if uid % 10 == 1]
    canconfirm = conn.execute("SELECT id FROM groups WHERE name = 'canconfirm'").fetchone()[0]
    direct += [(uid, canconfirm) for uid in user_ids if uid % 5 == 2]
    conn.executemany("INSERT INTO user_groups (user_id, group_id, is_bless, grant_type)"
                     " VALUES (?, ?, 0, 0)", direct)
    conn.execute("UPDATE params SET value = 'insiders' WHERE name = 'insidergroup'")
    # The bugs carry status whiteboards (the bug_update scenario changes
    # them, as the API takes them on any installation): the pages show them
    # while the field is in use.
    conn.execute("UPDATE params SET value = '1' WHERE name = 'usestatuswhiteboard'")

    classification_ids = [1]
    for number, name in enumerate(("Client Software", "Server Software", "Other"), start=2):
        conn.execute("INSERT INTO classifications (id, name, description, sort_key)"
                     " VALUES (?, ?, ?, ?)", (number, name, f"{name} products", number * 10))
        classification_ids.append(number)

    product_count = max(5, min(len(corpus.PRODUCT_NAMES), bugs // 20000))
    products = []
    for number in range(product_count):
        name = corpus.PRODUCT_NAMES[number]
        product_id = conn.execute(
            "INSERT INTO products (name, classification_id, description, is_active,"
            " default_milestone, has_unconfirmed) VALUES (?, ?, ?, 1, '---', 1)",
            (name, classification_ids[number % len(classification_ids)],
             f"Everything about {name}.")).lastrowid
        versions = [f"{major}.{minor}" for major in range(1, 3)
                    for minor in range(rng.randint(1, 3))]
        versions.append("unspecified")
        milestones = ["---"] + [f"{major}.0" for major in range(1, 5)]
        conn.executemany("INSERT INTO versions (product_id, name, sort_key) VALUES (?, ?, ?)",
                         [(product_id, v, k) for k, v in enumerate(versions)])
        conn.executemany("INSERT INTO milestones (product_id, name, sort_key) VALUES (?, ?, ?)",
                         [(product_id, m, k * 10) for k, m in enumerate(milestones)])
        components = []
        for cname in rng.sample(corpus.COMPONENT_NAMES, rng.randint(4, 12)):
            assignee = rng.choice(user_ids)
            qa = rng.choice(user_ids) if rng.random() < 0.5 else None
            component_id = conn.execute(
                "INSERT INTO components (product_id, name, description, default_assignee,"
                " default_qa_contact, is_active) VALUES (?, ?, ?, ?, ?, 1)",
                (product_id, cname, f"{cname} of {name}.", assignee, qa)).lastrowid
            components.append((component_id, assignee))
        # Security bugs: members of the group may restrict bugs to it (Shown/NA).
        conn.execute("INSERT INTO group_controls (group_id, product_id, entry, membercontrol,"
                     " othercontrol, canedit) VALUES (?, ?, 0, 1, 0, 0)",
                     (groups["security"], product_id))
        products.append((product_id, components, versions, milestones))

    keywords = []
    for name in corpus.KEYWORDS:
        keyword_id = conn.execute("INSERT INTO keywords (name, description, is_active)"
                                  " VALUES (?, ?, 1)", (name, f"Bugs about {name}.")).lastrowid
        keywords.append((keyword_id, name))

    flag_types = []
    for sort_key, (name, description, target) in enumerate(
            (("needinfo", "More information is needed", "b"),
             ("approval", "Approval to land on a release branch", "b"),
             ("qe-verify", "QA verification wanted", "b"),
             ("review", "Code review", "a")), start=1):
        type_id = conn.execute(
            "INSERT INTO flag_types (name, description, target_type, is_active, is_requestable,"
            " is_requesteeble, is_multiplicable, sort_key) VALUES (?, ?, ?, 1, 1, 1, 1, ?)",
            (name, description, target, sort_key)).lastrowid
        conn.execute("INSERT INTO flag_inclusions (type_id, product_id, component_id)"
                     " VALUES (?, NULL, NULL)", (type_id,))
        if target == "b":
            flag_types.append((type_id, name))

    heavy = user_ids[:max(5, len(user_ids) // 20)]
    weights = [1.0 / (rank + 1) ** 0.8 for rank in range(len(products))]
    return Catalogue(
        bugs=bugs, seed=seed, user_ids=user_ids, logins=logins, heavy_users=heavy,
        products=products, product_table=weighted_table(range(len(products)), weights),
        keywords=keywords, flag_types=flag_types, security_group=groups["security"],
        state_table=weighted_table(range(len(STATES)), [s[2] for s in STATES]))


# Bugs ---------------------------------------------------------------------------

class _Clock:
    """Seconds since the epoch -> 'YYYY-MM-DD HH:MM:SS', with the date part cached."""

    def __init__(self):
        self.days = {}

    def text(self, seconds):
        day, rest = divmod(seconds, DAY)
        date = self.days.get(day)
        if date is None:
            date = time.strftime("%Y-%m-%d", time.gmtime(day * DAY))
            self.days[day] = date
        hours, rest = divmod(rest, 3600)
        minutes, secs = divmod(rest, 60)
        return f"{date} {hours:02d}:{minutes:02d}:{secs:02d}"


_WORKER = {}


def _init_worker(catalogue):
    """Build the pools once per generating process."""
    rng = random.Random(catalogue.seed)
    _WORKER.update(cat=catalogue, comments=corpus.comment_pool(rng),
                   summaries=corpus.summary_pool(rng), attachments=corpus.attachment_pool(rng),
                   clock=_Clock())


def _generate_in_worker(first_id):
    cat = _WORKER["cat"]
    return generate_chunk(cat, first_id, min(CHUNK, cat.bugs - first_id + 1), _WORKER)


def generate_chunk(cat, first_id, count, pools):
    """Rows of bugs first_id .. first_id+count-1 and everything attached to them.

    Returns a dict table -> list of row tuples. Attachment ids are local
    (0, 1, ...) in 'attachments', 'attachment_data' and the attachment comments
    ('attachment_comments'); the writer turns them into real ids.
    """
    rng = random.Random(cat.seed * 1_000_003 + first_id)
    r = rng.random
    comments_pool, summaries, attachment_pool = pools["comments"], pools["summaries"], \
        pools["attachments"]
    clock = pools["clock"].text
    users, heavy, logins = cat.user_ids, cat.heavy_users, cat.logins
    n_users, n_heavy = len(users), len(heavy)
    span = (END - START) / cat.bugs

    def user():
        return heavy[int(r() * n_heavy)] if r() < 0.3 else users[int(r() * n_users)]

    out = {name: [] for name in ("bugs", "bug_aliases", "bug_cc", "bug_keywords", "dependencies",
                                 "bug_groups", "comments", "bug_activity", "attachments",
                                 "attachment_data", "attachment_comments", "flags")}
    bugs_rows, cc_rows, comments, activity = out["bugs"], out["bug_cc"], out["comments"], \
        out["bug_activity"]
    for bug_id in range(first_id, first_id + count):
        created = int(START + (bug_id - 1) * span + r() * span)
        product_id, components, versions, milestones = cat.products[
            cat.product_table[int(r() * len(cat.product_table))]]
        component_id, default_assignee = components[int(r() * len(components))]
        status, resolution, _ = STATES[cat.state_table[int(r() * len(cat.state_table))]]
        is_open = resolution == ""
        reporter = user()
        assignee = default_assignee if r() < 0.7 else user()
        qa_contact = user() if r() < 0.3 else None
        priority = ("---", "---", "Normal", "High", "Low", "Highest", "Lowest")[int(r() * 7)]
        severity = ("normal", "normal", "normal", "major", "minor", "critical", "enhancement",
                    "trivial", "blocker")[int(r() * 9)]
        platform = ("All", "PC", "PC", "Macintosh", "Other")[int(r() * 5)]
        op_sys = ("All", "Windows", "Windows", "Linux", "Mac OS", "Other")[int(r() * 6)]
        dupe_of = None
        if resolution == "DUPLICATE" and bug_id > 1:
            dupe_of = max(1, bug_id - 1 - int(r() * 2000))
        whiteboard = "[needs-triage]" if r() < 0.1 else ""
        estimated = round(r() * 16, 1) if r() < 0.1 else 0.0
        remaining = 0.0 if not is_open else estimated
        deadline = clock(created + 30 * DAY)[:10] if r() < 0.02 else None

        # Comments: the description, then replies over the following weeks.
        when = created
        comments.append((bug_id, 0, reporter, clock(when),
                         comments_pool[int(r() * 4096)], 0, 0.0, 0, None))
        number = 1
        for _ in range(EXTRA_COMMENTS[int(r() * len(EXTRA_COMMENTS))]):
            when += 600 + int(r() * r() * 30 * DAY)
            author = assignee if r() < 0.3 else user()
            work = round(0.5 + r() * 3, 1) if r() < 0.05 else 0.0
            comments.append((bug_id, number, author, clock(when), comments_pool[int(r() * 4096)],
                             1 if r() < 0.03 else 0, work, 0, None))
            number += 1
        if r() < 0.06:
            for _ in range(2 if r() < 0.1 else 1):
                when += 300 + int(r() * 3 * DAY)
                local = len(out["attachments"])
                name, ctype, is_patch, data, summary = attachment_pool[
                    int(r() * len(attachment_pool))]
                creator = reporter if r() < 0.5 else assignee
                stamp = clock(when)
                private = 1 if r() < 0.05 else 0
                out["attachments"].append((local, bug_id, creator, stamp, stamp, summary, name,
                                           ctype, is_patch, 0, private, len(data)))
                out["attachment_data"].append((local, data))
                out["attachment_comments"].append((bug_id, number, creator, stamp, "", private,
                                                   0.0, 5, local))
                number += 1
        if dupe_of is not None:
            when += 3600
            comments.append((bug_id, number, assignee, clock(when), "", 0, 0.0, 2, str(dupe_of)))
            number += 1

        # CC, keywords, dependencies, flags, aliases, groups.
        cc = set()
        for _ in range(CC_COUNTS[int(r() * len(CC_COUNTS))]):
            cc.add(reporter if r() < 0.2 else user())
        for uid in sorted(cc):
            cc_rows.append((bug_id, uid))
        keywords = set()
        if r() < 0.3:
            keywords.add(cat.keywords[int(r() * len(cat.keywords))])
            if r() < 0.2:
                keywords.add(cat.keywords[int(r() * len(cat.keywords))])
        for keyword_id, _ in keywords:
            out["bug_keywords"].append((bug_id, keyword_id))
        depends = set()
        if bug_id > 10 and r() < 0.1:
            depends.add(max(1, bug_id - 1 - int(r() * 5000)))
            if r() < 0.2:
                depends.add(max(1, bug_id - 1 - int(r() * 5000)))
        for other in depends:
            out["dependencies"].append((bug_id, other))
        flag = None
        if r() < 0.1:
            status_flag = "?" if r() < 0.5 else ("+" if r() < 0.7 else "-")
            flag_type = cat.flag_types[int(r() * len(cat.flag_types))]
            flag = (flag_type[0], status_flag, bug_id, None, user(),
                    user() if status_flag == "?" else None)
        if r() < 0.01:
            out["bug_aliases"].append((f"{corpus.KEYWORDS[int(r() * 30)]}-{bug_id}", bug_id))
        restricted = r() < 0.01
        if restricted:
            out["bug_groups"].append((bug_id, cat.security_group))

        # History: the changes that led to the current state.
        who_when = created + 300

        def change(field, removed, added, bug_id=bug_id, assignee=assignee):
            nonlocal who_when
            who_when += 60 + int(r() * 5 * DAY)
            activity.append((bug_id, None, user() if r() < 0.5 else assignee, clock(who_when),
                             field, removed, added, None))
        if status != "UNCONFIRMED" and r() < 0.6:
            change("status", "UNCONFIRMED", "CONFIRMED")
        if assignee != default_assignee:
            change("assigned_to", logins[default_assignee], logins[assignee])
        if priority != "---" and r() < 0.5:
            change("priority", "---", priority)
        for uid in sorted(cc):
            if uid != reporter and r() < 0.5:
                change("cc", "", logins[uid])
        for _, name in keywords:
            change("keywords", "", name)
        for other in sorted(depends):
            change("depends_on", "", str(other))
        if not is_open:
            change("status", "IN_PROGRESS" if r() < 0.5 else "CONFIRMED", "RESOLVED")
            change("resolution", "", resolution)
            if dupe_of is not None:
                change("dupe_of", "", str(dupe_of))
            if status == "VERIFIED":
                change("status", "RESOLVED", "VERIFIED")
        if flag is not None:
            change("flagtypes.name", "", f"{flag_type[1]}{flag[1]}")
            stamp = clock(who_when)
            out["flags"].append(flag + (stamp, stamp))

        last_change = clock(max(when, who_when))
        milestone = milestones[int(r() * len(milestones))] if not is_open or r() < 0.3 else "---"
        bugs_rows.append((bug_id, product_id, component_id, versions[int(r() * len(versions))],
                          milestone, summaries[int(r() * len(summaries))], status, resolution,
                          0 if status == "UNCONFIRMED" else 1, priority, severity, platform, op_sys,
                          assignee, qa_contact, reporter, "", whiteboard, dupe_of, clock(created),
                          last_change, deadline, estimated, remaining, 1, 1))
    return out


# Writing ------------------------------------------------------------------------

INSERTS = {
    "bugs": "INSERT INTO bugs (id, product_id, component_id, version, target_milestone, summary,"
            " status, resolution, is_confirmed, priority, severity, platform, op_sys, assigned_to,"
            " qa_contact, reporter, url, whiteboard, dupe_of, creation_time, last_change_time,"
            " deadline, estimated_time, remaining_time, is_cc_accessible, is_creator_accessible)"
            " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?,"
            " ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "bug_aliases": "INSERT INTO bug_aliases (alias, bug_id) VALUES (?, ?)",
    "bug_cc": "INSERT INTO bug_cc (bug_id, user_id) VALUES (?, ?)",
    "bug_keywords": "INSERT INTO bug_keywords (bug_id, keyword_id) VALUES (?, ?)",
    "dependencies": "INSERT INTO dependencies (blocked, depends_on) VALUES (?, ?)",
    "bug_groups": "INSERT INTO bug_groups (bug_id, group_id) VALUES (?, ?)",
    "comments": "INSERT INTO comments (bug_id, count, author_id, created_at, body, is_private,"
                " work_time, kind, extra) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "attachment_comments": "INSERT INTO comments (bug_id, count, author_id, created_at, body,"
                           " is_private, work_time, kind, extra, attachment_id)"
                           " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "bug_activity": "INSERT INTO bug_activity (bug_id, attachment_id, who, changed_at, field,"
                    " removed, added, comment_id) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
    "attachments": "INSERT INTO attachments (id, bug_id, creator_id, created_at, last_change_time,"
                   " summary, file_name, content_type, is_patch, is_obsolete, is_private, size)"
                   " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    "attachment_data": "INSERT INTO attachment_data (attachment_id, data) VALUES (?, ?)",
    "flags": "INSERT INTO flags (type_id, status, bug_id, attachment_id, setter_id, requestee_id,"
             " created_at, modified_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
}


def write_chunk(conn, rows, next_attachment_id):
    """Insert one generated chunk; returns the next free attachment id."""
    base = next_attachment_id
    rows["attachments"] = [(base + a[0],) + a[1:] for a in rows["attachments"]]
    rows["attachment_data"] = [(base + local, data) for local, data in rows["attachment_data"]]
    rows["attachment_comments"] = [c[:8] + (str(base + c[8]), base + c[8])
                                   for c in rows["attachment_comments"]]
    for table, sql in INSERTS.items():
        if rows[table]:
            conn.executemany(sql, rows[table])
    return base + len(rows["attachments"])


def bulk_indexes():
    """(name, CREATE statement) of schema.sql's secondary indexes on BULK_TABLES."""
    found = []
    for statement in split_script(schema_sql()):
        text = "\n".join(line for line in statement.splitlines()
                         if not line.strip().startswith("--")).strip()
        match = _INDEX.match(text)
        if match and match.group(2) in BULK_TABLES:
            found.append((match.group(1), text))
    return found


def seed(path, bugs, seed_value=1, jobs=None, out=sys.stderr):
    """Create the database at `path` (which must not exist) with `bugs` bugs.

    jobs: generating processes (default: one per core beyond the writer, at
    least one). Returns a dict of counts and timings.
    """
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} exists; remove it or use --force")
    path.parent.mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    config = Config(database=str(path), admin_email=ADMIN_EMAIL, admin_password=ADMIN_PASSWORD,
                    password_cost=ScryptCost())
    prepare_database(config, out=_Quiet()).close()
    now_text = time.strftime("%Y-%m-%d %H:%M:%S", time.gmtime(START - 30 * DAY))

    conn = sqlite3.connect(str(path), isolation_level=None)
    conn.execute("PRAGMA journal_mode = OFF")
    conn.execute("PRAGMA synchronous = OFF")
    conn.execute("PRAGMA cache_size = -262144")
    conn.execute("PRAGMA temp_store = MEMORY")
    conn.execute("BEGIN")
    catalogue = build_catalogue(conn, bugs, seed_value, now_text)
    indexes = bulk_indexes()
    for name, _ in indexes:
        conn.execute(f"DROP INDEX {name}")
    conn.execute("COMMIT")

    jobs = jobs or max(1, (os.cpu_count() or 1) - 1)
    firsts = list(range(1, bugs + 1, CHUNK))
    progress = Progress(bugs, "bugs", out)
    counts = {}
    next_attachment = 1
    with get_context("fork" if sys.platform != "win32" else "spawn").Pool(
            jobs, initializer=_init_worker, initargs=(catalogue,)) as pool:
        for rows in pool.imap(_generate_in_worker, firsts):
            conn.execute("BEGIN")
            next_attachment = write_chunk(conn, rows, next_attachment)
            conn.execute("COMMIT")
            for table, table_rows in rows.items():
                counts[table] = counts.get(table, 0) + len(table_rows)
            progress.advance(len(rows["bugs"]))
    progress.done()
    loaded = time.perf_counter()

    # Let SQLite's sorter use every core while it builds the indexes.
    conn.execute(f"PRAGMA threads = {min(8, os.cpu_count() or 1)}")
    index_progress = Progress(len(indexes), "indexes", out)
    for _, statement in indexes:
        conn.execute(statement)
        index_progress.advance(1)
    index_progress.done()
    # The comment text index trails the comments (schema.sql): the bulk
    # load left every comment to it.
    SQLITE.fill_comment_text_index(conn)
    conn.execute("PRAGMA journal_mode = WAL")
    conn.close()
    counts["comments"] += counts.pop("attachment_comments", 0)
    finished = time.perf_counter()
    return {"bugs": bugs, "seed": seed_value, "path": str(path), "rows": counts,
            "load_seconds": round(loaded - started, 1),
            "index_seconds": round(finished - loaded, 1),
            "total_seconds": round(finished - started, 1),
            "bytes": path.stat().st_size}


class _Quiet:
    def write(self, _):
        pass

    def flush(self):
        pass


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m bench.seed",
                                     description=__doc__.split("\n")[0])
    parser.add_argument("--bugs", type=int, required=True, help="number of bugs")
    parser.add_argument("--db", help="database file (default bench/data/bugs-N.sqlite)")
    parser.add_argument("--seed", type=int, default=1, help="random seed (default 1)")
    parser.add_argument("--jobs", type=int, help="generating processes (default: cores - 1)")
    parser.add_argument("--force", action="store_true", help="replace an existing file")
    args = parser.parse_args(argv)
    if args.bugs < 1:
        parser.error("--bugs must be at least 1")
    path = Path(args.db) if args.db else default_db_path(args.bugs)
    if args.force:
        for suffix in ("", "-wal", "-shm"):
            Path(str(path) + suffix).unlink(missing_ok=True)
    try:
        result = seed(path, args.bugs, args.seed, args.jobs)
    except FileExistsError as exc:
        print(f"bench.seed: {exc}", file=sys.stderr)
        return 2
    rows = result["rows"]
    print(f"{path}: {rows['bugs']:,} bugs, {rows['comments']:,} comments, "
          f"{rows['bug_activity']:,} history rows, {rows['bug_cc']:,} CC, "
          f"{rows['attachments']:,} attachments, {rows['bug_groups']:,} restricted bugs; "
          f"{result['bytes'] / 1e6:,.0f} MB in {result['total_seconds']}s "
          f"(load {result['load_seconds']}s, indexes {result['index_seconds']}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
