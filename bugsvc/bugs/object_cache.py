"""Bug objects kept by a serving process, so that a search's answer is
made from the objects of the bugs that did not change since they were
last made, whatever the search (the answers themselves are kept by
answer_cache.py only while no bug at all changes).

An object is kept per bug and variant (whether addresses are shown without
their domains, whether the time tracking fields are shown) with the bug's
revision (schema.sql's bug revisions: moved by every change to the bug's
row and to its rows in the tables its object reads, whoever makes it) and
the credential generation (accounts' names), all read in the request's own
transaction; the keeping cache is the process's copy at the catalog
generation (names of products, keywords, flag types, groups, statuses,
fields: Context.cached). An object is used while all of these stand.

What differs between callers of one variant is which of the bugs a bug
depends on or blocks each may see: an object is kept with both lists
whole, and each caller's answer leaves out those it may not see (one
statement for all the bugs of an answer, when any of them has such a
list).

Only in read transactions, for the default fields (no field choice, no
update tokens, no tags or duplicates, no Bug ID custom field: each of
those is the caller's own); any other call makes its objects anew.

Bounded: at most MAX_ENTRIES objects and MAX_BYTES of memory in all (least
recently used first out), each counted as its JSON text and ENTRY_BYTES
for the entry around it. Objects are given as new values each time: as
orjson.Fragment values of the kept text where the way in writes the answer
out with orjson as it is (REST's JSON), else as new objects read from the
text.
"""

import orjson

from ..call.encoding import fragments_are_welcome
from ..catalogue.field_types import BUG_ID
from ..store import cache
from ..store.db import placeholders
from . import visibility
from .answer_cache import AnswerCache


MAX_ENTRIES = 16384
MAX_BYTES = 16 * 1024 * 1024
# The memory a kept object takes besides its JSON text: its key, revision,
# related bug ids and entry (measured with tracemalloc:
# tests/bugs/test_object_cache.py).
ENTRY_BYTES = 400
# Bug ids per statement reading revisions.
_CHUNK = 500


def applies(ctx, with_update_token, visible_only, wanted, custom):
    """True when bug_objects may take its objects from the kept ones (see
    the module's docstring): `wanted` the field names asked for, `custom`
    the custom fields shown."""
    return (not with_update_token and not visible_only and not ctx.writes
            and ctx.catalog_generation is not None and not ctx.fields.active
            and "tags" not in wanted and "duplicates" not in wanted
            and not any(field["type"] == BUG_ID for field in custom))


def objects(ctx, ids, variant, build):
    """{bug id: the caller's object} for `ids` (existing bugs the caller may
    see; an id missing from the answer is a bug that is gone): kept ones
    where the bug's revision and the credential generation stand, the
    others made by `build(ids)` (bug objects with depends_on and blocks
    whole) and kept. `variant`: what besides the bug the object depends on
    (hashable)."""
    conn = ctx.conn
    revisions = {}
    for start in range(0, len(ids), _CHUNK):
        chunk = ids[start:start + _CHUNK]
        revisions.update(conn.execute("SELECT bug_id, revision FROM bug_revisions"
                                      f" WHERE bug_id IN ({placeholders(chunk)})", chunk))
    seen = ctx.generations if ctx.generations is not None else cache.Generations(conn)
    credential = seen.credential
    kept = ctx.cached("bug objects", _new_cache)
    found, missing = {}, []
    for bug_id in ids:
        entry = kept.get((bug_id, variant), (revisions.get(bug_id, 0), credential))
        if entry is None:
            missing.append(bug_id)
        else:
            found[bug_id] = entry
    if missing:
        for obj in build(missing):
            bug_id = obj["id"]
            # Copied to bytes of their length: orjson's own hold the 16 KB
            # buffer it wrote into.
            text = memoryview(orjson.dumps(obj)).tobytes()
            related = tuple(dict.fromkeys(obj["depends_on"] + obj["blocks"]))
            kept.put((bug_id, variant), (revisions.get(bug_id, 0), credential), (text, related),
                     len(text) + ENTRY_BYTES)
            found[bug_id] = (text, related)
    named = {related for _, listed in found.values() for related in listed}
    hidden = named - visibility.visible_bug_ids(ctx, named) if named else set()
    as_text = fragments_are_welcome()
    result = {}
    for bug_id, (text, listed) in found.items():
        if hidden and not hidden.isdisjoint(listed):
            obj = orjson.loads(text)
            obj["depends_on"] = [other for other in obj["depends_on"] if other not in hidden]
            obj["blocks"] = [other for other in obj["blocks"] if other not in hidden]
            result[bug_id] = obj
        else:
            result[bug_id] = orjson.Fragment(text) if as_text else orjson.loads(text)
    return result


def _new_cache(conn):
    """The process's bug objects: (text, related ids) by (bug id, variant),
    bounded as search answers are."""
    return AnswerCache(MAX_ENTRIES, MAX_BYTES)
