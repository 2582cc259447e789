"""Search answers kept by a serving process, so that the same search asked
again by the same caller is answered without searching.

An answer is kept for one caller (the account, with the groups it was a
member of when the answer was made; every anonymous caller alike: nothing
a logged-out caller sees depends on who it is), one set of search
parameters (only those of KEPT_PARAMS: fields compared with values, limit
and offset, whose answer depends on nothing else, not the time, not the
order of the caller's own choosing), and one include/exclude choice. It is
kept with the generations it was made at: the catalog generation (the
parameters, fields, products, components, groups ...), the credential
generation (accounts' names, memberships) and the bug generation (every
change to a bug and to what its object shows: schema.sql's bug generation
section), all three read in the request's own transaction. A kept answer
is used only while all three are what that transaction sees, so a change
committed by any process, however it was made (a call, the importer, a
command, a repair by hand in SQL), is seen by the next request of every
process.

Only where the engine keeps a bug generation (SQLite: a counter, as its
writers take turns; PostgreSQL: a count of the committed transactions
that moved it; see the dialect's keeps_bug_generation) and only
in read transactions: a call that writes searches anew.

Bounded: at most MAX_ENTRIES answers and MAX_BYTES of memory in all
(least recently used first out). An answer is kept as the JSON text of
each of its values (the list of {"bugs": [...]}), which takes about the
memory of the text: counted as its length and ENTRY_BYTES for the entry
around it (measured with tracemalloc), where the objects the answer was
made of take 3.5 times the text's bytes.

A kept answer is given as new values each time, so no way in can change
it for another: as orjson.Fragment values, the text written out as it was
made, where the way in writes the answer out with orjson as it is (REST's
JSON, call/encoding.py) and there is no field choice; else as new objects
read from the text (XML-RPC, JSON-RPC, the pages, and a field choice, which
the Runner trims in place).
"""

import threading
from collections import OrderedDict

import orjson

from ..call.encoding import fitted, fragments_are_welcome
from ..store import cache


MAX_ENTRIES = 512
MAX_BYTES = 16 * 1024 * 1024
# The memory a kept answer takes besides its JSON text: its key (the
# caller, the parameters), generations and entry (measured with
# tracemalloc: tests/bugs/test_answer_cache.py).
ENTRY_BYTES = 2048
# An answer larger than this is not kept (a search of hundreds of bugs).
MAX_ANSWER_BYTES = 2 * 1024 * 1024
# Parameters a kept answer may have been asked with: fields compared with
# the values given (the default operator), limit and offset. A search with
# any other parameter (operators, relative dates, quicksearch, order,
# count_only ...) is made anew each time.
KEPT_PARAMS = frozenset({
    "product", "component", "classification", "status", "bug_status", "resolution",
    "priority", "severity", "bug_severity", "version", "target_milestone", "platform",
    "rep_platform", "op_sys", "limit", "offset"})
# Longest text of parameter values a kept answer's key holds.
MAX_KEY_CHARS = 2000


class AnswerCache:
    """The answers one process keeps (see the module's docstring), or any
    other values kept by key at a stamp the same way (the bug objects of
    object_cache.py)."""

    def __init__(self, max_entries=MAX_ENTRIES, max_bytes=MAX_BYTES):
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self._entries = OrderedDict()       # key -> (generations, answer, size counted)
        self._bytes = 0
        self._lock = threading.Lock()

    def __len__(self):
        return len(self._entries)

    @property
    def size(self):
        """Memory the answers kept take, as counted by put()."""
        return self._bytes

    def get(self, key, generations):
        """The answer kept for `key` at `generations`, or None."""
        with self._lock:
            return self._take(key, generations)

    def get_many(self, wanted):
        """[the answer kept for each (key, generations) of `wanted`, or None]
        (get() of each, under one hold of the lock)."""
        with self._lock:
            return [self._take(key, generations) for key, generations in wanted]

    def _take(self, key, generations):
        """get() with the lock held: the answer counted as used, or None
        (one kept at other generations dropped)."""
        entry = self._entries.get(key)
        if entry is None:
            return None
        if entry[0] != generations:
            self._drop(key)
            return None
        self._entries.move_to_end(key)
        return entry[1]

    def peek(self, key):
        """The answer kept for `key` whatever its generations (not counted
        as a use), or None: a guess, never an answer to give."""
        entry = self._entries.get(key)
        return None if entry is None else entry[1]

    def peek_generations(self, key):
        """The generations the answer kept for `key` was made at (not
        counted as a use), or None."""
        entry = self._entries.get(key)
        return None if entry is None else entry[0]

    def put(self, key, generations, answer, size=None):
        """Keep `answer` for `key` made at `generations`, counted as `size`
        bytes of memory (its length when None); the least recently used
        answers go to make room."""
        size = len(answer) if size is None else size
        if size > min(MAX_ANSWER_BYTES, self.max_bytes):
            return
        with self._lock:
            if key in self._entries:
                self._drop(key)
            self._entries[key] = (generations, answer, size)
            self._bytes += size
            while len(self._entries) > self.max_entries or self._bytes > self.max_bytes:
                self._drop(next(iter(self._entries)))

    def _drop(self, key):
        self._bytes -= self._entries.pop(key)[2]


def answer(ctx, params, make):
    """make() (a search's answer: a dict of JSON values), or the answer
    kept for this caller, `params` and field choice at the generations the
    call's transaction sees, given as new values (see the module's
    docstring)."""
    key = _key(ctx, params)
    if key is None:
        return make()
    answers = ctx.cached("search answers", _new_cache)
    seen = ctx.generations if ctx.generations is not None else cache.Generations(ctx.conn)
    generations = (ctx.catalog_generation, seen.bug, seen.credential)
    kept = answers.get(key, generations)
    if kept is not None:
        if not ctx.fields.active and fragments_are_welcome():
            return {name: orjson.Fragment(text) for name, text in kept}
        return {name: orjson.loads(text) for name, text in kept}
    result = make()
    try:
        kept = tuple((name, fitted(orjson.dumps(value)))
                     for name, value in result.items())
    except TypeError:
        return result           # not JSON (cannot be): never kept
    answers.put(key, generations, kept, sum(len(text) for _, text in kept) + ENTRY_BYTES)
    return result


def _new_cache(conn):
    return AnswerCache()


def _key(ctx, params):
    """The key a search's answer is kept by, or None when it is not to be
    kept (see the module's docstring)."""
    if (ctx.writes or ctx.catalog_generation is None
            or not ctx.conn.dialect.keeps_bug_generation):
        return None
    items = plain_params(params, KEPT_PARAMS)
    if items is None:
        return None
    caller = ctx.caller
    return (caller.id, caller.group_ids, ctx.fields.choice, items)


def plain_params(params, names):
    """`params` as a key: its (name, value) items in order of name, lists as
    tuples; None when a name is not among `names`, a value is not plain
    (None, text, a number, a boolean, or a list of them) or their text
    passes MAX_KEY_CHARS."""
    items, chars = [], 0
    for name, value in params.items():
        if name not in names:
            return None
        if isinstance(value, list):
            if not all(_plain(v) for v in value):
                return None
            value = tuple(value)
        elif not _plain(value):
            return None
        chars += len(repr(value))
        items.append((name, value))
    if chars > MAX_KEY_CHARS:
        return None
    return tuple(sorted(items))


def _plain(value):
    return value is None or type(value) in (str, int, bool)
