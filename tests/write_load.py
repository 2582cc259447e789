"""A write load through a real server (many client threads creating
bugs, commenting on them and changing their summaries), a ledger of what
the server acknowledged, and the checks of what a database holds after it.
Used by the concurrency, crash-safety and backup tests.

Every write carries a unique tag, so what is stored can be matched to what
was sent. A write is acknowledged when its 2xx answer arrived; a write whose
answer never came (the server was killed) is "in flight": it may be stored
or not, but never in part.
"""

import http.client
import itertools
import random
import sqlite3
import threading
import time
from collections import Counter
from contextlib import closing

from bugsvc.store.location import Location, open_database


ADMIN = "load-admin@example.com"
ADMIN_PASSWORD = "load admin password"
ADMIN_ENV = {"BUGSVC_ADMIN_EMAIL": ADMIN, "BUGSVC_ADMIN_PASSWORD": ADMIN_PASSWORD}


def writer_keys(server, count=2):
    """API keys, made through the server, of the administrator and of
    `count` plain accounts it creates."""
    status, body, _ = server.call("POST", "/rest/api_key", {"Bugzilla_login": ADMIN,
                                                            "Bugzilla_password": ADMIN_PASSWORD},
                                  {"description": "load"})
    assert status == 201, body
    keys = [body["api_key"]]
    for n in range(count):
        login = f"writer{n}@example.com"
        status, body, _ = server.call("POST", "/rest/user", {"Bugzilla_api_key": keys[0]},
                                      {"email": login, "full_name": f"Writer {n}"})
        assert status == 201, body
        status, body, _ = server.call("POST", "/rest/api_key", {"Bugzilla_api_key": keys[0]},
                                      {"user": login, "description": "load"})
        assert status == 201, body
        keys.append(body["api_key"])
    return keys


def history_reader(server, key):
    def call(method, path, query):
        status, body, _ = server.call(method, path, {**query, "Bugzilla_api_key": key})
        return status, body
    return call


def wait_for_writes(ledger, count, limit=60):
    """Wait (real time: a real server is loaded) until `count` writes are acknowledged."""
    deadline = time.monotonic() + limit
    while ledger.acknowledged() < count:
        assert time.monotonic() < deadline, f"the load stalled: {ledger.figures()}"
        time.sleep(0.01)


def report(record_property, label, figures):
    for name, value in figures.items():
        record_property(name, value)
    print(f"\n{label}: {figures}")


NEW_BUG = {"product": "TestProduct", "component": "TestComponent", "version": "unspecified",
           "op_sys": "All", "platform": "All"}


class Ledger:
    """What the load sent and what the server answered (thread-safe)."""

    def __init__(self):
        self.lock = threading.Lock()
        self.bugs = {}            # bug id -> (summary, description) as created
        self.comments = {}        # comment id -> (bug id, text)
        self.updates = []         # (bug id, summary sent, `changes` answered)
        self.in_flight = []       # (kind, tag, bug id or None) without an answer
        self.answers = Counter()  # HTTP status -> count
        self.errors = []          # (status, body) of every answer that is not a 2xx
        self.duplicate_ids = []   # ids acknowledged twice for different writes
        self.tried = 0

    def bug_ids(self):
        with self.lock:
            return list(self.bugs)

    def acknowledged(self):
        with self.lock:
            return self.acknowledged_unlocked()

    def acknowledged_unlocked(self):
        return len(self.bugs) + len(self.comments) + len(self.updates)

    def figures(self):
        return {"requests tried": self.tried,
                "answers by status": dict(sorted(self.answers.items())),
                "bugs created": len(self.bugs), "comments added": len(self.comments),
                "summaries changed": len(self.updates),
                "in flight at a failure": len(self.in_flight)}


def kinds_of_writes(seed):
    """The kinds ("bug", "comment", "update") of a writer's writes, endless:
    a bug first (so that there is one to comment on and change), then 40%
    bugs, 30% comments and 30% summary changes, drawn from `seed` alone, so
    the same seed gives the same mix on any machine."""
    rng = random.Random(seed)
    yield "bug"
    while True:
        roll = rng.random()
        yield "bug" if roll < 0.4 else "comment" if roll < 0.7 else "update"


class WriteLoad:
    """Client threads writing through `server` (or a list of servers sharing
    one database: thread i writes through server i modulo their number);
    `keys` are the API keys they use (round robin). The threads start their
    writes together, then write until stop(), or run(writes) has each of
    them do exactly that many."""

    def __init__(self, server, keys, threads=8, seed=7, ledger=None):
        self.servers = server if isinstance(server, list) else [server]
        self.keys = keys
        self.ledger = ledger or Ledger()
        self.stop_event = threading.Event()
        self.writes = None
        self.ready = threading.Barrier(threads)
        self.threads = [threading.Thread(target=self._write, args=(
            self.servers[i % len(self.servers)], keys[i % len(keys)], seed + i, f"t{seed}.{i}"),
            daemon=True) for i in range(threads)]

    def start(self):
        for thread in self.threads:
            thread.start()
        return self

    def stop(self, timeout=60):
        self.stop_event.set()
        for thread in self.threads:
            thread.join(timeout)
        assert not any(thread.is_alive() for thread in self.threads), "a writer did not stop"
        return self.ledger

    def run(self, writes, timeout=300):
        """Each thread does `writes` writes (all of them at once, as many as
        there are threads, at any moment); returns the ledger. Fails, with
        the figures so far, when they are not all answered within `timeout`
        seconds (a generous bound: the machine's speed decides nothing else)."""
        self.writes = writes
        self.start()
        deadline = time.monotonic() + timeout
        for thread in self.threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        if any(thread.is_alive() for thread in self.threads):
            self.stop_event.set()
            raise AssertionError(f"the writers did not finish {writes} writes each within "
                                 f"{timeout} s: {self.ledger.figures()}")
        return self.ledger

    def _write(self, server, key, seed, name):
        client = server.client(key, timeout=60)
        rng = random.Random(seed)
        kinds = kinds_of_writes(seed)
        if self.writes is not None:
            kinds = itertools.islice(kinds, self.writes)
        ledger = self.ledger
        count = 0
        try:
            self.ready.wait(60)
        except threading.BrokenBarrierError:
            pass
        for kind in kinds:
            if self.stop_event.is_set():
                break
            count += 1
            tag = f"{name}.{count}"
            bug_ids = ledger.bug_ids()
            if not bug_ids:         # this writer's first bug was in flight when a server died
                kind = "bug"
            if kind == "bug":
                bug_id = None
                method, path = "POST", "/rest/bug"
                body = {**NEW_BUG, "summary": f"load {tag}", "description": f"description {tag}"}
            elif kind == "comment":
                bug_id = rng.choice(bug_ids)
                method, path = "POST", f"/rest/bug/{bug_id}/comment"
                body = {"comment": f"comment {tag}"}
            else:
                bug_id = rng.choice(bug_ids)
                method, path = "PUT", f"/rest/bug/{bug_id}"
                body = {"summary": f"load {tag} renamed"}
            try:
                status, answer = client.call(method, path, body=body)
            except (OSError, http.client.HTTPException, ValueError):
                with ledger.lock:
                    ledger.in_flight.append((kind, tag, bug_id))
                time.sleep(0.02)  # the server is gone; do not spin
                continue
            with ledger.lock:
                ledger.tried += 1
                ledger.answers[status] += 1
                if status not in (200, 201):
                    ledger.errors.append((status, answer))
                elif kind == "bug":
                    new_id = answer["id"]
                    if new_id in ledger.bugs:
                        ledger.duplicate_ids.append(("bug", new_id))
                    ledger.bugs[new_id] = (body["summary"], body["description"])
                elif kind == "comment":
                    if answer["id"] in ledger.comments:
                        ledger.duplicate_ids.append(("comment", answer["id"]))
                    ledger.comments[answer["id"]] = (bug_id, body["comment"])
                else:
                    changes = answer["bugs"][0]["changes"]
                    ledger.updates.append((bug_id, body["summary"], changes))
        client.close()


# Checks of a database file ------------------------------------------------------

def open_read_only(location):
    """A read-only connection (SQLite) or one outside any transaction
    (PostgreSQL), closed when the `with` block ends (an open SQLite reader
    would hold up the WAL recovery of a server started later)."""
    if not Location.of(location).is_file:
        return closing(open_database(location).connect())
    conn = sqlite3.connect(f"file:{location}?mode=ro", uri=True)
    conn.row_factory = sqlite3.Row
    return closing(conn)


def integrity(location):
    """[("ok",)] when the database checks out: SQLite's integrity_check;
    on PostgreSQL, amcheck's check of every B-tree index against its table."""
    if Location.of(location).is_file:
        with closing(sqlite3.connect(location)) as conn:
            return conn.execute("PRAGMA integrity_check").fetchall()
    with open_read_only(location) as conn:
        conn.execute("CREATE EXTENSION IF NOT EXISTS amcheck")
        indexes = [row[0] for row in conn.execute(
            "SELECT c.oid FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid"
            " JOIN pg_am a ON a.oid = c.relam WHERE a.amname = 'btree'"
            " AND c.relnamespace = CAST(current_schema() AS regnamespace)")]
        problems = []
        for index in indexes:
            try:
                conn.execute("SELECT bt_index_check(CAST(? AS oid), true)", (index,))
            except Exception as exc:      # noqa: BLE001 - reported as a finding
                problems.append((str(exc),))
        return problems or [("ok",)]


def check_whole(conn):
    """Invariants no write may break, even half-way: every bug has its
    description (comment 0); comments are numbered 0, 1, 2 ... per bug with no
    gap or repeat; no comment without its bug, and none newer than its bug's
    last change time (a comment moves it). Returns the list of problems."""
    problems = []
    for row in conn.execute("SELECT b.id FROM bugs b WHERE NOT EXISTS (SELECT 1 FROM comments c"
                            " WHERE c.bug_id = b.id AND c.count = 0)"):
        problems.append(f"bug {row['id']} has no comment 0")
    for row in conn.execute("SELECT bug_id, COUNT(*) AS n, MAX(count) AS top FROM comments"
                            " GROUP BY bug_id HAVING MAX(count) + 1 <> COUNT(*)"):
        problems.append(f"bug {row['bug_id']}: {row['n']} comments numbered up to {row['top']}")
    for row in conn.execute("SELECT c.id FROM comments c LEFT JOIN bugs b ON b.id = c.bug_id"
                            " WHERE b.id IS NULL"):
        problems.append(f"comment {row['id']} has no bug")
    for row in conn.execute("SELECT c.id, c.bug_id FROM comments c JOIN bugs b ON b.id = c.bug_id"
                            " WHERE c.created_at > b.last_change_time"):
        problems.append(f"comment {row['id']} is newer than bug {row['bug_id']}'s last change")
    return problems


def check_acknowledged(conn, ledger, exact=True):
    """Every acknowledged write is stored exactly once, as sent. exact: also
    no load write is stored that was neither acknowledged nor in flight.
    Returns the list of problems."""
    problems = []
    bugs = {row["id"]: row for row in conn.execute("SELECT id, summary FROM bugs")}
    descriptions = {row["bug_id"]: row["body"] for row in conn.execute(
        "SELECT bug_id, body FROM comments WHERE count = 0")}
    for bug_id, (summary, description) in ledger.bugs.items():
        if bug_id not in bugs:
            problems.append(f"acknowledged bug {bug_id} ({summary}) is missing")
        elif descriptions.get(bug_id) != description:
            problems.append(f"bug {bug_id} has description {descriptions.get(bug_id)!r}")
    stored_comments = {}
    for row in conn.execute("SELECT id, bug_id, body FROM comments WHERE count > 0"):
        stored_comments.setdefault(row["body"], []).append((row["id"], row["bug_id"]))
    for comment_id, (bug_id, text) in ledger.comments.items():
        if stored_comments.get(text) != [(comment_id, bug_id)]:
            problems.append(f"acknowledged comment {comment_id} on bug {bug_id} is stored as "
                            f"{stored_comments.get(text)}")
    tags = Counter(row["summary"] for row in bugs.values())
    for summary, times in tags.items():
        if times > 1:
            problems.append(f"{times} bugs have the summary {summary!r}")
    if exact:
        sent = {text for _, text in ledger.comments.values()}
        sent |= {f"comment {tag}" for kind, tag, _ in ledger.in_flight if kind == "comment"}
        for text in stored_comments:
            if text.startswith("comment t") and text not in sent:
                problems.append(f"a comment nobody sent is stored: {text!r}")
    return problems


def check_summary_history(server_call, ledger, bug_ids, current_summaries):
    """Summary history of each bug, read through GET /rest/bug/{id}/history:
    a chain from the summary the bug was created with to its current one
    (each change removes what the previous one added), holding every
    acknowledged `changes` answer exactly once. Returns the list of problems."""
    problems = []
    acknowledged = Counter()
    for bug_id, _, changes in ledger.updates:
        if "summary" in changes:
            acknowledged[(bug_id, changes["summary"]["removed"], changes["summary"]["added"])] += 1
    ids = sorted(bug_ids)
    for start in range(0, len(ids), 100):
        batch = ids[start:start + 100]
        status, body = server_call("GET", f"/rest/bug/{batch[0]}/history", {"ids": batch[1:]})
        assert status == 200, body
        for bug in body["bugs"]:
            bug_id = bug["id"]
            chain = [(change["removed"], change["added"]) for entry in bug["history"]
                     for change in entry["changes"] if change["field_name"] == "summary"]
            summary = ledger.bugs[bug_id][0] if bug_id in ledger.bugs else None
            for removed, added in chain:
                if summary is not None and removed != summary:
                    problems.append(f"bug {bug_id}: history removes {removed!r} after {summary!r}")
                summary = added
                if acknowledged[(bug_id, removed, added)]:
                    acknowledged[(bug_id, removed, added)] -= 1
                elif not any(kind == "update" and b == bug_id and added == f"load {tag} renamed"
                             for kind, tag, b in ledger.in_flight):
                    problems.append(f"bug {bug_id}: history has {removed!r} -> {added!r} that "
                                    "no answer reported")
            if summary is not None and summary != current_summaries.get(bug_id):
                problems.append(f"bug {bug_id}: history ends at {summary!r}, the bug says "
                                f"{current_summaries.get(bug_id)!r}")
    for (bug_id, removed, added), left in acknowledged.items():
        if left:
            problems.append(f"bug {bug_id}: acknowledged change {removed!r} -> {added!r} is not "
                            "in its history")
    return problems
