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
tags or duplicates, no Bug ID custom field: each of those is the caller's
own); any other call makes its objects anew. An update token (GET
/rest/bug/{id}) is the caller's own too: made anew for each answer from
what is read with the revisions.

Bounded: at most MAX_ENTRIES objects and MAX_BYTES of memory in all (least
recently used first out), each counted as its JSON text and ENTRY_BYTES
for the entry around it. Objects are given as new values each time: as
orjson.Fragment values of the kept text where the way in writes the answer
out with orjson as it is (REST's JSON), else as new objects read from the
text.
"""

import orjson

from ..call.encoding import fitted, fragments_are_welcome
from ..catalogue.field_types import BUG_ID
from ..store import cache
from ..store.db import IN_LIST_CHUNK, placeholders, rows_for_ids
from . import visibility
from .answer_cache import AnswerCache
from .seen_at import SeenAtGeneration
from .token import token_key, update_tokens


# About 11,000 bug objects of the seeded data (2.2 KB each with its entry):
# with them a process peaked at 110 MB at a million bugs (bench.scale,
# docs/benchmark.md), under the 150 MB each may take.
MAX_ENTRIES = 16384
MAX_BYTES = 24 * 1024 * 1024
# The memory a kept object takes besides its JSON text: its key, revision,
# related bug ids and entry (measured with tracemalloc:
# tests/bugs/test_object_cache.py).
ENTRY_BYTES = 400


def applies(ctx, wanted, custom):
    """True when bug_objects may take its objects from the kept ones (see
    the module's docstring): `wanted` the field names asked for, `custom`
    the custom fields shown."""
    return (not ctx.writes and ctx.catalog_generation is not None and not ctx.fields.active
            and "tags" not in wanted and "duplicates" not in wanted
            and not any(field["type"] == BUG_ID for field in custom))


def objects(ctx, ids, variant, build, with_tokens=False, visible_only=False, alone=False):
    """{bug id: the caller's object} for `ids` (bugs gone, and with
    `visible_only` those the caller may not see, left out): kept ones
    where the bug's revision and the credential generation stand, the
    others made by `build(ids)` (bug objects with depends_on and blocks
    whole, no update token; `build(ids, read)`: see ReadWithObjects) and
    kept. `variant`: what besides the bug the object depends on
    (hashable). with_tokens: each object gets the caller's `update_token`
    (made from the revision and the last change time read with it).
    alone: the call reads nothing else for its answer, so while every bug
    has an object kept the revisions may be read ahead of its transaction
    (Connection.execute_ahead): when each object is still the bug's, the
    call runs no transaction (on PostgreSQL, a BEGIN and a COMMIT fewer);
    when some must be made anew, they are read again in the transaction,
    on the snapshot the making reads; when none has an object kept, or
    every one kept is stale, the objects are made by one statement that
    reads everything else too (_made_at_once). Where the bug generation
    the transaction sees costs no round trip (SQLite; on PostgreSQL after
    a search's statement carried it), what was read about a bug at that
    generation is taken as read (_objects_at_generation)."""
    conn = ctx.conn
    kept = ctx.cached("bug objects", _new_cache)
    seen = ctx.generations if ctx.generations is not None else cache.Generations(conn)
    keyed = hashable(ctx.caller)
    if (not conn.dialect.statements_are_round_trips or seen.bug_at_hand) and keyed:
        return _objects_at_generation(ctx, kept, seen, ids, variant, build, with_tokens,
                                      visible_only)
    if alone and keyed:
        answer = _answer_if_latest(ctx, kept, seen, ids, variant, build, with_tokens,
                                   visible_only)
        if answer is not None:
            return answer
    # Where a statement is a round trip (not SQLite), whether the caller
    # may see the bugs the kept objects name (most are still theirs) is
    # read with the revisions.
    guessed = set()
    unkept = kept_any = False
    # While no bug has an object kept that is still its own, a call that
    # reads nothing else makes them by one statement.
    at_once = alone and keyed and conn.dialect.keeps_bug_generation
    if not conn.dialect.reads_lists_apart:
        for bug_id in ids:
            entry = kept.peek((bug_id, variant))
            if entry is None:
                unkept = True
            else:
                kept_any = True
                guessed.update(entry[1])
        if at_once and not kept_any:
            return _made_at_once(ctx, kept, seen, ids, variant, build, with_tokens,
                                 visible_only)
    # Ahead of the transaction only while each bug has an object kept (at
    # whatever revision): one with none is made in the transaction anyway.
    # For a call whose statements see one snapshot, where the statement has
    # room for it, the bug generation is read with the stamps, and what
    # was read is kept at it (seen_at.py).
    with_bug = alone and keyed
    stamps, visible, ahead = _stamps(ctx, ids, with_tokens, visible_only, guessed,
                                     alone and not unkept, with_bug=with_bug)
    at = None
    if seen.bug_at_hand and keyed:
        at = _keep_read(ctx, seen.bug, ids, stamps, visible, guessed, with_tokens,
                        visible_only)
    credential = seen.credential
    found, missing = _kept(kept, ids, variant, stamps, credential)
    if missing and ahead and at_once and not found:
        # Every object kept is of an older revision: made as if none were.
        return _made_at_once(ctx, kept, seen, ids, variant, build, with_tokens, visible_only)
    if missing and ahead:
        # Read again in the transaction, on a snapshot of its own.
        seen.forget_bug()
        at = None
        stamps, visible, _ = _stamps(ctx, ids, with_tokens, visible_only, guessed,
                                     with_bug=with_bug)
        if seen.bug_at_hand and keyed:
            at = _keep_read(ctx, seen.bug, ids, stamps, visible, guessed, with_tokens,
                            visible_only)
        found, missing = _kept(kept, ids, variant, stamps, credential)
    if missing:
        found.update(_kept_made(kept, build(missing), variant, stamps, credential))
    named = {related for _, listed in found.values() for related in listed}
    unknown = named - guessed
    if unknown:
        visible |= visibility.visible_bug_ids(ctx, unknown)
    return _with_tokens(ctx, seen, at, found, stamps, named - visible, with_tokens)


class ReadWithObjects:
    """What the statement making bug objects reads besides them, where a
    statement is a round trip (`build`'s second argument: view._made):
    given the SQL of the generations' columns it carries last (`carried`,
    cache.Generations.carried_with_bug: `carried_columns` of them), whether
    the last change time is wanted with the revision (`with_time`) and
    whether only the bugs the caller may see are read (`visible_only`), it
    leaves each bug's stamp in `stamps`, the bugs its depends_on and blocks
    name that the caller may see in `visible`, and the carried values in
    `generations` (None while no bug was read)."""

    __slots__ = ("carried", "carried_columns", "with_time", "visible_only", "stamps", "visible",
                 "generations")

    def __init__(self, carried, carried_columns, with_time, visible_only):
        self.carried = carried
        self.carried_columns = carried_columns
        self.with_time = with_time
        self.visible_only = visible_only
        self.stamps = {}
        self.visible = set()
        self.generations = None


def _made_at_once(ctx, kept, seen, ids, variant, build, with_tokens, visible_only):
    """objects() of a call that reads nothing else for its answer, where a
    statement is a round trip and none of its bugs has an object kept:
    the objects, their stamps, whether the caller may see the bugs they
    name and the generations with the bug generation, all read by the one
    statement making them (ReadWithObjects), ahead of the transaction where
    it may run there (the call then sends no BEGIN and no COMMIT); what it
    read is kept at that bug generation (seen_at.py). With no bug read,
    the assumed generations are checked as if nothing carried them."""
    # Catalog, credential and bug generations (the engine keeps the last).
    read = ReadWithObjects(seen.carried_with_bug(always=True), 3, with_tokens, visible_only)
    made = list(build(ids, read))
    if read.generations is None:
        seen.settle_later()
        return {}
    seen.confirm(*read.generations)
    found = _kept_made(kept, made, variant, read.stamps, seen.credential)
    named = {related for _, listed in found.values() for related in listed}
    at = _keep_read(ctx, seen.bug, ids, read.stamps, read.visible, named, with_tokens,
                    visible_only)
    return _with_tokens(ctx, seen, at, found, read.stamps, named - read.visible, with_tokens)


def _with_tokens(ctx, seen, at, found, stamps, hidden, with_tokens):
    """objects()' answer (_answers) of `found` at their `stamps`, the bugs
    of `hidden` left out of their lists; with_tokens: with the caller's
    update tokens (_tokens: kept in `at`, a SeenAtGeneration or None, at the
    bug generation `seen`, a Generations, holds)."""
    tokens = _tokens(ctx, at, seen.bug if at is not None else None, found,
                     stamps) if with_tokens else {}
    return _answers(found, hidden, tokens)


def _tokens(ctx, at, generation, found, stamps):
    """{bug id: the caller's update token} for the bugs of `found` at their
    `stamps`: those kept in `at` (a SeenAtGeneration) at bug `generation`
    taken, the others made and added to them; with `at` None, all made."""
    key = token_key(ctx)
    if at is None:
        return update_tokens(key, ctx.caller.id, {bug_id: stamps[bug_id] for bug_id in found})
    tokens_seen = at.answers(generation, ("tokens", ctx.caller.id, key))
    tokens = {bug_id: tokens_seen[bug_id] for bug_id in found if bug_id in tokens_seen}
    unmade = {bug_id: stamps[bug_id] for bug_id in found if bug_id not in tokens}
    if unmade:
        made = update_tokens(key, ctx.caller.id, unmade)
        at.add(tokens_seen, made)
        tokens.update(made)
    return tokens


def _keep_read(ctx, generation, ids, stamps, visible, guessed, with_tokens, visible_only):
    """Keep what _stamps read for objects() of `ids` at bug `generation`
    (carried by its statement): see _add_read; returns the
    SeenAtGeneration."""
    at = _answers_seen(ctx)
    _add_read(at, *_read_at(at, generation, ctx.caller, with_tokens), ids, stamps, visible,
              guessed, visible_only)
    return at


def _add_read(at, stamps_seen, sight, ids, stamps, visible, guessed, visible_only):
    """Add to `stamps_seen` and `sight` (answers of `at`, a
    SeenAtGeneration) what _stamps read for `ids`: their `stamps`, and
    whether the caller may see the bugs of `ids` (with `visible_only`: those
    with a stamp) and of `guessed` (those of `visible`)."""
    at.add(stamps_seen, stamps)
    read_sight = {bug_id: bug_id in stamps for bug_id in ids} if visible_only else {}
    read_sight.update((bug_id, bug_id in visible) for bug_id in guessed)
    at.add(sight, read_sight)


def _read_at(at, generation, caller, with_tokens):
    """(the stamps, `caller`'s sight of bugs) kept in `at` (a
    SeenAtGeneration) at bug `generation`: the answers _stamps gives, the
    stamps with the last change time where update tokens are made."""
    stamps_scope = "revisions and times" if with_tokens else "revisions"
    return at.answers(generation, stamps_scope), at.answers(generation, ("sight", caller))


def _answers_seen(ctx):
    """The process's SeenAtGeneration of bug objects' reads (at the
    catalog generation, as the kept objects)."""
    return ctx.cached("bug answers seen", _new_seen)


def _answer_if_latest(ctx, kept, seen, ids, variant, build, with_tokens, visible_only):
    """objects() of a call that reads nothing else for its answer, where a
    statement is a round trip and the generations are assumed, when every
    part of its answer was read at the newest bug generation the process
    saw: the generations and the bug generation read by one statement
    ahead of the transaction (Connection.execute_ahead, no transaction
    then), and the answer when that is still the bug generation; else None
    (nothing read, or the bug generation forgotten: the transaction's
    reads are of a snapshot of its own)."""
    at = _answers_seen(ctx)
    latest = at.latest
    if latest is None or not seen.unconfirmed or not ctx.conn.dialect.keeps_bug_generation:
        return None
    answer = _objects_at_generation(ctx, kept, seen, ids, variant, build, with_tokens,
                                    visible_only, generation=latest)
    if answer is None:
        return None
    carried = seen.carried_with_bug()
    cursor = ctx.conn.execute_ahead(f"SELECT {carried}", ())
    if cursor is None:
        seen.settle_later()
        return None
    seen.confirm(*cursor.fetchone())
    if seen.bug == latest:
        return answer
    seen.forget_bug()
    return None


def _objects_at_generation(ctx, kept, seen, ids, variant, build, with_tokens, visible_only,
                           generation=None):
    """objects() where the bug generation costs no round trip (`seen`: the
    transaction's Generations): what was read about a bug at the bug
    generation the transaction sees (its stamp, whether the caller may see
    it, the caller's update token) is taken as read then (seen_at.py), the
    rest read and added. Where a statement is a round trip, whether the
    caller may see the bugs the kept objects name is read with the
    stamps, as objects() does. generation: instead, the answer as at that
    bug generation when everything in it was read then (no statement), or
    None."""
    at = _answers_seen(ctx)
    may_read = generation is None
    generation = seen.bug if may_read else generation
    credential = seen.credential
    stamps_seen, sight = _read_at(at, generation, ctx.caller, with_tokens)
    if visible_only:
        ids = [bug_id for bug_id in ids if sight.get(bug_id, True)]
    unsure = [bug_id for bug_id in ids
              if bug_id not in stamps_seen or (visible_only and bug_id not in sight)]
    if unsure and not may_read:
        return None
    if unsure:
        guessed = ()
        if not ctx.conn.dialect.reads_lists_apart:
            guessed = {related for bug_id in unsure
                       for related in (kept.peek((bug_id, variant)) or ((), ()))[1]
                       if related not in sight}
        read, visible, _ = _stamps(ctx, unsure, with_tokens, visible_only, guessed)
        _add_read(at, stamps_seen, sight, unsure, read, visible, guessed, visible_only)
    stamps = {bug_id: stamps_seen[bug_id] for bug_id in ids if bug_id in stamps_seen
              and (not visible_only or sight[bug_id])}
    found, missing = _kept(kept, stamps, variant, stamps, credential)
    if missing and not may_read:
        return None
    if missing:
        found.update(_kept_made(kept, build(missing), variant, stamps, credential))
    named = {related for _, listed in found.values() for related in listed}
    if not may_read and not all(related in sight for related in named):
        return None
    tokens = _tokens(ctx, at, generation, found, stamps) if with_tokens else {}
    return _answers(found, named - _visible_at(ctx, at, sight, named), tokens)


def hashable(value):
    """True when `value` may be a key (a frozen Caller is; a test's stand-in
    may not be)."""
    try:
        hash(value)
    except TypeError:                   # a caller that cannot be a key (not a frozen Caller)
        return False
    return True


def _kept_made(kept, objects, variant, stamps, credential):
    """{bug id: (text, related ids)} of bug `objects` just made (as
    objects()' `build` makes them), kept at their `stamps` and
    `credential`."""
    made = {}
    for obj in objects:
        bug_id = obj["id"]
        text = fitted(orjson.dumps(obj))
        related = tuple(dict.fromkeys(obj["depends_on"] + obj["blocks"]))
        kept.put((bug_id, variant), (stamps[bug_id][0], credential), (text, related),
                 len(text) + ENTRY_BYTES)
        made[bug_id] = (text, related)
    return made


def _answers(found, hidden, tokens=None):
    """{bug id: the answer's object} of `found` ({bug id: (text, related
    ids)}): the bugs of `hidden` left out of depends_on and blocks, each
    token of `tokens` ({bug id: update token}) added as update_token.
    JSON text (orjson.Fragment) where the way in writes it out as it is
    and nothing changes, else new objects."""
    tokens = tokens or {}
    as_text = fragments_are_welcome()
    result = {}
    for bug_id, (text, listed) in found.items():
        token = tokens.get(bug_id)
        filtered = hidden and not hidden.isdisjoint(listed)
        if as_text and not filtered:
            result[bug_id] = orjson.Fragment(text if token is None else _with_token(text, token))
            continue
        obj = orjson.loads(text)
        if filtered:
            obj["depends_on"] = [other for other in obj["depends_on"] if other not in hidden]
            obj["blocks"] = [other for other in obj["blocks"] if other not in hidden]
        if token is not None:
            obj["update_token"] = token
        result[bug_id] = obj
    return result


def _visible_at(ctx, at, known, ids):
    """The ids of `ids` the caller may see (visibility.visible_bug_ids),
    those answered in `known` (the caller's sight of bugs kept in `at`, a
    SeenAtGeneration, at the call's bug generation) taken as answered, the
    others read and added to it (what the answer reads is the bugs' and
    the caller's, a value that never changes: visibility.bug_visibility_sql)."""
    if not ids:
        return set()
    visible = {bug_id for bug_id in ids if known.get(bug_id)}
    unknown = [bug_id for bug_id in ids if bug_id not in known]
    if unknown:
        answered = visibility.visible_bug_ids(ctx, unknown)
        at.add(known, {bug_id: bug_id in answered for bug_id in unknown})
        visible |= answered
    return visible


def _with_token(text, token):
    """The JSON text of object `text` with `update_token` added as its last
    member, as orjson writes the object with it added (the token's
    characters, digits, letters and a dash, need no escaping)."""
    return b"".join((text[:-1], b',"update_token":"', token.encode(), b'"}'))


def _kept(kept, ids, variant, stamps, credential):
    """({bug id: its kept (text, related ids)}, [ids of bugs with no object
    kept at their stamp]) for the bugs of `ids` that have `stamps`."""
    ids = [bug_id for bug_id in ids if bug_id in stamps]
    entries = kept.get_many([((bug_id, variant), (stamps[bug_id][0], credential))
                             for bug_id in ids])
    found, missing = {}, []
    for bug_id, entry in zip(ids, entries, strict=True):
        if entry is None:
            missing.append(bug_id)
        else:
            found[bug_id] = entry
    return found, missing


def _stamps(ctx, ids, with_tokens, visible_only, related=(), ahead=False, with_bug=False):
    """({bug id: (revision,) or, with_tokens, (revision, last change
    time)}, the ids of `related` the caller may see,
    whether they were read ahead of the transaction), the first for the
    bugs of `ids` that exist (and, with `visible_only`, that the caller may
    see). Bugs a search found (neither flag) exist: only their revisions
    are read (a bug with no row is at 0). Both in one statement (UNION ALL)
    while the lists fit one: a round trip fewer on PostgreSQL. ahead: one
    statement may run ahead of the transaction (Connection.execute_ahead)."""
    conn = ctx.conn
    related = list(related)
    together = related and len(ids) + len(related) <= IN_LIST_CHUNK
    # Each row: 0, the bug's id and its stamp's columns (1 and an id the
    # caller may see, for the rows of `related`).
    if not with_tokens and not visible_only:
        columns = ["revision"]
        sql = "SELECT 0, bug_id, revision FROM bug_revisions WHERE bug_id IN ({ids})"
        args = []
        stamps = dict.fromkeys(ids, (0,))
    else:
        columns = ["COALESCE(r.revision, 0)"]
        if with_tokens:
            columns.append("b.last_change_time")
        where, args = "", []
        if visible_only:
            condition, args = visibility.bug_visibility_sql(ctx, "b")
            where = f" AND {condition}"
        sql = (f"SELECT 0, b.id, {', '.join(columns)} FROM bugs b"
               f" LEFT JOIN bug_revisions r ON r.bug_id = b.id WHERE b.id IN ({{ids}}){where}")
        stamps = {}
    visible = set()
    statement = None
    if together:
        condition, seen_args = visibility.bug_visibility_sql(ctx, "b")
        statement = (sql.format(ids=placeholders(ids))
                     + f" UNION ALL SELECT 1, b.id{', NULL' * len(columns)} FROM bugs b"
                       f" WHERE b.id IN ({placeholders(related)}) AND {condition}",
                     [*ids, *args, *related, *seen_args])
    elif not related and len(ids) <= IN_LIST_CHUNK:
        statement = sql.format(ids=placeholders(ids)), [*ids, *args]
    # The statement carries the generations the call assumed, if it has
    # not checked them yet (a row 2, catalog, credential:
    # cache.Generations.carried).
    # With a spare column (the last change time's), the bug generation
    # too, where the engine keeps one (cache.Generations.carried_with_bug).
    carried, carried_columns = None, 2
    if statement is not None and ctx.generations is not None:
        if len(columns) > 1 and conn.dialect.keeps_bug_generation:
            carried, carried_columns = ctx.generations.carried_with_bug(with_bug), 3
        else:
            carried = ctx.generations.carried()
    if carried is not None:
        padding = ", NULL" * (len(columns) + 1 - carried_columns)
        statement = (f"{statement[0]} UNION ALL SELECT 2, {carried}{padding}", statement[1])
    rows = conn.execute_ahead(*statement) if ahead and statement is not None else None
    read_ahead = rows is not None
    if statement is None:
        rows = rows_for_ids(conn, sql, ids, args)
        if related:
            visible = visibility.visible_bug_ids(ctx, related)
    elif rows is None:
        rows = conn.execute(*statement)
    generations = None
    for row in rows:
        if not row[0]:
            stamps[row[1]] = tuple(row[2:])
        elif row[0] == 1:
            visible.add(row[1])
        else:
            generations = row[1:1 + carried_columns]
    if carried is not None:
        ctx.generations.confirm(*generations)
    return stamps, visible, read_ahead


def _new_cache(conn):
    """The process's bug objects: (text, related ids) by (bug id, variant),
    bounded as search answers are."""
    return AnswerCache(MAX_ENTRIES, MAX_BYTES)


def _new_seen(conn):
    return SeenAtGeneration()
