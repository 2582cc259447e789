"""Answers about bugs seen at one bug generation (bugs/seen_at.py): given
back only at that generation, forgotten at another and past the bound,
and counted at no less than the memory they take. (That they are right,
whoever asks and whatever changes: tests/bugs/test_object_cache.py.)"""

import gc
import tracemalloc

import pytest

from bugsvc.accounts.caller import Caller
from bugsvc.bugs.seen_at import ENTRY_BYTES, SeenAtGeneration


def test_answers_are_given_back_at_their_generation_and_scope_only():
    seen = SeenAtGeneration()
    revisions = seen.answers(7, "revisions")
    seen.add(revisions, {1: (3,), 2: (5,)})
    assert seen.answers(7, "revisions") == {1: (3,), 2: (5,)}
    assert seen.answers(7, ("sight", Caller(id=1))) == {}
    assert seen.answers(7, ("sight", Caller(id=1, group_ids=frozenset({4})))) == {}
    assert seen.answers(8, "revisions") == {}
    assert seen.answers(7, "revisions") == {}       # the older generation's are forgotten


def test_answers_past_the_bound_are_forgotten():
    seen = SeenAtGeneration(max_bytes=10 * ENTRY_BYTES + 100)
    revisions = seen.answers(1, "revisions")
    seen.add(revisions, {number: (1,) for number in range(10)})
    assert len(seen.answers(1, "revisions")) == 10
    objects = seen.answers(1, "objects")
    seen.add(objects, {1: (b"x" * 200, ())}, held=200)
    assert seen.size == 11 * ENTRY_BYTES + 200
    assert seen.answers(1, "revisions") == {} and seen.size == 0


SHAPES = {
    "revisions": lambda number: (number * 7,),
    "revisions and times": lambda number: (number * 7, f"2026-11-{number % 28 + 1:02d} "
                                                       f"12:{number % 60:02d}:{number % 60:02d}"),
    "tokens": lambda number: f"{1_700_000_000 + number}-{number:032x}",
    "sight": lambda number: number % 3 == 0,
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("count", [700, 1400, 5000, 20000])
def test_an_answer_is_counted_at_no_less_than_the_memory_it_takes(shape, count):
    """Answers of each shape object_cache.py keeps (a revision; a revision
    and a last change time; an update token; whether a caller may see the
    bug), by bug id, added 50 at a time as calls read them; the ids and
    values made anew, as if nothing else held them."""
    seen = SeenAtGeneration(max_bytes=1 << 40)
    value = SHAPES[shape]
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        answers = seen.answers(1, shape)
        for start in range(100_000, 100_000 + count, 50):
            seen.add(answers, {number: value(number) for number in range(start, start + 50)})
        gc.collect()
        taken = tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()
    assert len(answers) == count
    assert taken <= seen.size
    assert seen.size < 5 * taken          # a whether-seen answer takes the least


def test_every_write_that_moves_a_revision_moves_the_bug_generation():
    """What is kept at a bug generation stands only while no revision can
    move under it: every trigger moving a bug's revision (schema.sql's bug
    revisions) has one moving the bug generation on the same table and
    the same kind of write."""
    import re
    from pathlib import Path
    schema = (Path(__file__).resolve().parents[2] / "schema.sql").read_text(encoding="utf-8")
    revisions = set(re.findall(r"CREATE TRIGGER (\w+?)_(insert|update|delete)_moves_revision\b",
                               schema))
    generation = set(re.findall(r"CREATE TRIGGER (\w+?)_(insert|update|delete)_moves_bugs\b",
                                schema))
    assert len(revisions) >= 30
    assert revisions <= generation, sorted(revisions - generation)
