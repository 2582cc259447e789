"""The load run's scenarios: which requests each sends, built from what a
seeded database holds (visible bug ids, products, statuses, writers' API
keys). Each scenario becomes a request file that wrk (bench/requests.lua)
or the fallback driver cycles through at random."""

import json
import random
from dataclasses import dataclass, field
from datetime import datetime, timezone
from urllib.parse import urlencode

from bugsvc.accounts import auth
from bugsvc.store.location import open_database

from . import corpus


REQUESTS_PER_FILE = 10000
# Reads are anonymous, as most traffic of a public tracker, unless a run puts
# keys on them (keyed: bench.paired and bench.ab do by default); writes use
# API keys of accounts in editbugs; the home page is a signed-in one's (a
# session).
WRITERS = 8
# The page scenarios: a bug with this many comments, lists of this many bugs.
BIG_BUG_COMMENTS = 1000
LIST_SIZE = 500
# In a request file, an "API key" starting with this is a session cookie.
SESSION_PREFIX = "session:"
QUICKSEARCH_WORDS = ("crashes", "hangs", "leaks", "flickers", "deadlocks", "truncates",
                     "Startup", "Clipboard", "offline", "unicode")


@dataclass
class Workload:
    """What the requests are made of."""
    bug_ids: list            # visible (not restricted) bugs
    products: list           # names of products that have bugs
    statuses: list
    keys: list = field(default_factory=list)   # API keys of writers
    sessions: list = field(default_factory=list)   # login tokens of the writers
    big_bug: int = 0         # a visible bug with BIG_BUG_COMMENTS comments
    list_product: str = ""   # a product with at least LIST_SIZE visible bugs

    @classmethod
    def from_db(cls, path, rng, sample=20000):
        """Read ids and names from the database at `path` (an SQLite file or
        a PostgreSQL URL) and create API keys for WRITERS accounts (stored
        in it, like any key)."""
        db = open_database(str(path))
        try:
            with db.transaction() as conn:
                top = conn.execute("SELECT MAX(id) FROM bugs").fetchone()[0] or 0
                candidates = sorted({rng.randint(1, top) for _ in range(sample)}) if top else []
                restricted = set()
                for start in range(0, len(candidates), 500):
                    chunk = candidates[start:start + 500]
                    marks = ", ".join("?" for _ in chunk)
                    restricted |= {row[0] for row in conn.execute(
                        f"SELECT bug_id FROM bug_groups WHERE bug_id IN ({marks})", chunk)}
                    restricted |= set(chunk) - {row[0] for row in conn.execute(
                        f"SELECT id FROM bugs WHERE id IN ({marks})", chunk)}
                bug_ids = [bug_id for bug_id in candidates if bug_id not in restricted]
                products = [row[0] for row in conn.execute(
                    "SELECT p.name FROM products p WHERE EXISTS"
                    " (SELECT 1 FROM bugs b WHERE b.product_id = p.id) ORDER BY p.id")]
                statuses = [row[0] for row in conn.execute(
                    "SELECT v.value FROM field_values v JOIN fields f ON f.id = v.field_id"
                    " WHERE f.name = 'bug_status' ORDER BY v.sort_key")]
                writers = [row[0] for row in conn.execute(
                    "SELECT u.id FROM users u JOIN user_groups ug ON ug.user_id = u.id"
                    " JOIN groups g ON g.id = ug.group_id WHERE g.name = 'editbugs'"
                    " AND ug.is_bless = 0 AND u.disabled_text = '' ORDER BY u.id LIMIT ?",
                    (WRITERS,))]
        finally:
            db.close()
        db = open_database(str(path))
        now = datetime.now(timezone.utc)
        try:
            with db.transaction(write=True) as write_conn:
                keys = [auth.create_api_key(write_conn, user_id, "bench.run", now)[1]
                        for user_id in writers]
                sessions = [auth.create_token(write_conn, user_id, None, now)
                            for user_id in writers]
                big_bug = _big_bug(write_conn, bug_ids, now)
                list_product = write_conn.execute(
                    "SELECT p.name FROM products p JOIN bugs b ON b.product_id = p.id"
                    " GROUP BY p.id, p.name ORDER BY COUNT(*) DESC, p.id LIMIT 1").fetchone()
                list_product = list_product[0] if list_product else ""
        finally:
            db.close()
        return cls(bug_ids=bug_ids, products=products, statuses=statuses, keys=keys,
                   sessions=sessions, big_bug=big_bug, list_product=list_product)


def _big_bug(conn, bug_ids, now):
    """A visible bug with BIG_BUG_COMMENTS comments: one that has them
    already, or the first of `bug_ids`, given the missing ones (written like
    the seed writes comments, each with a reference to another bug, as a
    real discussion has)."""
    row = conn.execute("SELECT bug_id FROM comments GROUP BY bug_id HAVING COUNT(*) >= ?"
                       " AND bug_id NOT IN (SELECT bug_id FROM bug_groups) ORDER BY bug_id"
                       " LIMIT 1", (BIG_BUG_COMMENTS,)).fetchone()
    if row is not None or not bug_ids:
        return row[0] if row is not None else 0
    bug_id = bug_ids[0]
    count, author = conn.execute("SELECT COUNT(*), MIN(author_id) FROM comments"
                                 " WHERE bug_id = ?", (bug_id,)).fetchone()
    rng = random.Random(bug_id)
    stamp = now.strftime("%Y-%m-%d %H:%M:%S")
    conn.executemany(
        "INSERT INTO comments (bug_id, count, author_id, created_at, body, is_private, work_time,"
        " kind) VALUES (?, ?, ?, ?, ?, 0, 0, 0)",
        [(bug_id, number, author, stamp,
          " ".join(rng.choice(corpus.SENTENCES) for _ in range(rng.randint(1, 4)))
          + f" See bug {rng.choice(bug_ids)}.")
         for number in range(count, BIG_BUG_COMMENTS)])
    return bug_id


# Requests: (method, path with query, API key or "", JSON body text or "").

def version(w, rng):
    return ("GET", "/rest/version", "", "")


def bug_get(w, rng):
    return ("GET", f"/rest/bug/{rng.choice(w.bug_ids)}", "", "")


def bug_get_key(w, rng):
    return ("GET", f"/rest/bug/{rng.choice(w.bug_ids)}", rng.choice(w.keys), "")


def search(w, rng):
    query = urlencode({"product": rng.choice(w.products), "status": rng.choice(w.statuses),
                       "limit": 50})
    return ("GET", f"/rest/bug?{query}", "", "")


def search_anew(w, rng):
    """The search of `search` with its operator spelt out (the default one,
    so the same SQL and the same answer): a search with an operator is never
    answered from the answers a process keeps (bugsvc/bugs/answer_cache.py),
    so every request searches anew and builds its answer, from the bug
    objects the process keeps while their bugs do not change
    (bugsvc/bugs/object_cache.py)."""
    query = urlencode({"product": rng.choice(w.products), "status": rng.choice(w.statuses),
                       "status_type": "anyexact", "limit": 50})
    return ("GET", f"/rest/bug?{query}", "", "")


def quicksearch(w, rng):
    query = urlencode({"quicksearch": rng.choice(QUICKSEARCH_WORDS), "limit": 50})
    return ("GET", f"/rest/bug?{query}", "", "")


def quicksearch_two(w, rng):
    query = urlencode({"quicksearch": " ".join(rng.sample(QUICKSEARCH_WORDS, 2)), "limit": 50})
    return ("GET", f"/rest/bug?{query}", "", "")


def comments(w, rng):
    return ("GET", f"/rest/bug/{rng.choice(w.bug_ids)}/comment", "", "")


def comment_add(w, rng):
    text = " ".join(rng.choice(corpus.SENTENCES) for _ in range(rng.randint(1, 3)))
    return ("POST", f"/rest/bug/{rng.choice(w.bug_ids)}/comment", rng.choice(w.keys),
            json.dumps({"comment": text}))


def bug_update(w, rng):
    if rng.random() < 0.5:
        change = {"whiteboard": f"[load-{rng.randint(1, 10 ** 6)}]"}
    else:
        change = {"priority": rng.choice(("Highest", "High", "Normal", "Low", "Lowest", "---"))}
    return ("PUT", f"/rest/bug/{rng.choice(w.bug_ids)}", rng.choice(w.keys), json.dumps(change))


# The web pages, beside the REST calls that show the same.

def page_bug(w, rng):
    return ("GET", f"/show_bug.cgi?id={rng.choice(w.bug_ids)}", "", "")


def page_bug_1000(w, rng):
    return ("GET", f"/show_bug.cgi?id={w.big_bug}", "", "")


def bug_get_1000(w, rng):
    return ("GET", f"/rest/bug/{w.big_bug}", "", "")


def comments_1000(w, rng):
    return ("GET", f"/rest/bug/{w.big_bug}/comment", "", "")


def page_list_500(w, rng):
    query = urlencode({"product": w.list_product, "limit": LIST_SIZE,
                       "offset": rng.randint(0, 4) * LIST_SIZE, "order": "bug_id"})
    return ("GET", f"/buglist.cgi?{query}", "", "")


def search_500(w, rng):
    query = urlencode({"product": w.list_product, "limit": LIST_SIZE,
                       "offset": rng.randint(0, 4) * LIST_SIZE, "order": "bug_id"})
    return ("GET", f"/rest/bug?{query}", "", "")


# Reports: bugs counted by two fields in one GROUP BY, over one product's
# bugs or over every bug of the instance.
REPORT_AXES = (("bug_status", "priority"), ("component", "bug_severity"),
               ("assigned_to", "resolution"), ("keywords", "bug_status"))


def report(w, rng):
    x, y = rng.choice(REPORT_AXES)
    query = urlencode({"product": rng.choice(w.products[:3]), "x_axis_field": x,
                       "y_axis_field": y})
    return ("GET", f"/rest/report?{query}", "", "")


def report_all(w, rng):
    x, y = rng.choice((("product", "bug_status"), ("bug_severity", "priority")))
    return ("GET", f"/rest/report?{urlencode({'x_axis_field': x, 'y_axis_field': y})}", "", "")


def page_report(w, rng):
    x, y = rng.choice(REPORT_AXES)
    query = urlencode({"product": rng.choice(w.products[:3]), "x_axis_field": x,
                       "y_axis_field": y, "format": "table", "action": "wrap"})
    return ("GET", f"/report.cgi?{query}", "", "")


def page_report_bar(w, rng):
    query = urlencode({"product": rng.choice(w.products[:3]), "x_axis_field": "bug_status",
                       "y_axis_field": "priority", "format": "bar", "action": "wrap"})
    return ("GET", f"/report.cgi?{query}", "", "")


def page_home(w, rng):
    return ("GET", "/index.cgi", SESSION_PREFIX + rng.choice(w.sessions), "")


@dataclass(frozen=True)
class Scenario:
    name: str
    title: str
    kind: str                 # "read", "write" or "mixed"
    make: object = None       # make(workload, rng) -> request tuple (None for mixed)


SCENARIOS = (
    Scenario("version", "GET /rest/version", "read", version),
    Scenario("bug_get", "GET /rest/bug/{id} (random ids)", "read", bug_get),
    Scenario("bug_get_key", "GET /rest/bug/{id} with an API key (random ids)", "read",
             bug_get_key),
    Scenario("search", "GET /rest/bug?product=..&status=..&limit=50 (answers kept by the"
             " process: the same product x status again)", "read", search),
    Scenario("search_anew", "GET /rest/bug?product=..&status=..&status_type=anyexact&limit=50"
             " (the same searches, never answered from kept answers)", "read", search_anew),
    Scenario("quicksearch", "GET /rest/bug?quicksearch=WORD&limit=50", "read", quicksearch),
    Scenario("quicksearch_two", "GET /rest/bug?quicksearch=WORD WORD&limit=50 (few bugs have both)",
             "read", quicksearch_two),
    Scenario("comments", "GET /rest/bug/{id}/comment", "read", comments),
    Scenario("comment_add", "POST /rest/bug/{id}/comment", "write", comment_add),
    Scenario("bug_update", "PUT /rest/bug/{id} (whiteboard or priority)", "write", bug_update),
    Scenario("mixed", "90% reads / 10% writes", "mixed"),
    Scenario("page_bug", "GET /show_bug.cgi?id={id} (random ids, anonymous)", "read", page_bug),
    Scenario("page_bug_1000", f"GET /show_bug.cgi of a bug with {BIG_BUG_COMMENTS:,} comments",
             "read", page_bug_1000),
    Scenario("bug_get_1000", "GET /rest/bug/{id} of that bug", "read", bug_get_1000),
    Scenario("comments_1000", "GET /rest/bug/{id}/comment of that bug", "read", comments_1000),
    Scenario("page_list_500", f"GET /buglist.cgi, {LIST_SIZE} bugs of a product", "read",
             page_list_500),
    Scenario("search_500", f"GET /rest/bug?product=..&limit={LIST_SIZE} (the same bugs)", "read",
             search_500),
    Scenario("page_home", "GET /index.cgi, a signed-in user's work (session cookie)", "read",
             page_home),
    Scenario("report", "GET /rest/report, a product's bugs by two fields", "read", report),
    Scenario("report_all", "GET /rest/report, every bug by two fields", "read", report_all),
    Scenario("page_report", "GET /report.cgi, a product's bugs by two fields (table)", "read",
             page_report),
    Scenario("page_report_bar", "GET /report.cgi, a product's bugs as a bar chart (SVG)",
             "read", page_report_bar),
)
# The pages and the REST calls they are compared with.
PAGE_PAIRS = (("page_bug", "bug_get"), ("page_bug_1000", "bug_get_1000"),
              ("page_bug_1000", "comments_1000"), ("page_list_500", "search_500"),
              ("page_home", None))
BY_NAME = {scenario.name: scenario for scenario in SCENARIOS}
# Shares in the mixed load (reads add up to 90, writes to 10).
MIXED_READS = {"bug_get": 40, "comments": 20, "search": 20, "quicksearch": 10}
MIXED_WRITES = {"comment_add": 6, "bug_update": 4}


def mixed_shares(available):
    """{scenario name: share} of the mixed load over the available scenarios,
    reads scaled to 90% and writes to 10% (all reads if no write is available)."""
    reads = {n: s for n, s in MIXED_READS.items() if n in available}
    writes = {n: s for n, s in MIXED_WRITES.items() if n in available}
    shares = {}
    read_total = 90.0 if writes else 100.0
    for group, total in ((reads, read_total), (writes, 100.0 - read_total)):
        weight = sum(group.values())
        for name, share in group.items():
            shares[name] = total * share / weight
    return shares


def requests_for(name, workload, seed, available=(), count=REQUESTS_PER_FILE):
    """`count` request tuples of scenario `name`."""
    rng = random.Random(seed)
    if name != "mixed":
        make = BY_NAME[name].make
        return [make(workload, rng) for _ in range(count)]
    shares = mixed_shares(available)
    result = []
    for part, share in shares.items():
        result += [BY_NAME[part].make(workload, rng) for _ in range(round(count * share / 100))]
    rng.shuffle(result)
    return result


def keyed(requests, keys, seed):
    """`requests` with an API key on each that carries none (writes keep
    theirs; a session cookie stays): reads as an API client that signs
    every request sends them. The key of each is one of `keys` (the
    writers'), picked at random with `seed`."""
    if not keys:
        raise ValueError("no API keys to put on the requests: the database has no writer")
    rng = random.Random(seed)
    return [(method, target, key or rng.choice(keys), body)
            for method, target, key, body in requests]


def simulate(client, request):
    """Send `request` (a request tuple) through falcon's test `client`, in
    process; returns the answer's body bytes. Errors: RuntimeError for an
    answer of 300 or more."""
    method, target, key, body = request
    headers = {"X-BUGZILLA-API-KEY": key} if key else {}
    if body:
        headers["Content-Type"] = "application/json"
    path, _, query = target.partition("?")
    answer = client.simulate_request(method, path, query_string=query, headers=headers,
                                     body=body or None)
    if answer.status_code >= 300:
        raise RuntimeError(f"{method} {target}: {answer.status_code} {answer.text[:200]}")
    return answer.content


def write_request_file(path, requests):
    """One request per line: METHOD, path, API key, body, separated by tabs."""
    with open(path, "w", encoding="utf-8") as handle:
        for method, target, key, body in requests:
            handle.write(f"{method}\t{target}\t{key}\t{body}\n")
    return path
