"""A serving process settles Python's cycle collector before it serves
(bugsvc/serving/server.py): start-up's garbage collected, its survivors
frozen out of later scans, the youngest generation's threshold raised."""

import gc
import weakref

import pytest

from bugsvc.serving.server import YOUNG_OBJECTS_BEFORE_COLLECTING, settle_collector


class _Node:
    pass


@pytest.fixture
def collector_restored():
    saved = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*saved)


def test_start_up_garbage_goes_and_survivors_are_frozen(collector_restored):
    older = gc.get_threshold()
    cycle = _Node()
    cycle.itself = cycle                    # garbage only the collector finds
    gone = weakref.ref(cycle)
    kept = _Node()
    del cycle
    settle_collector()
    assert gone() is None
    assert gc.get_freeze_count() > 0 and gc.is_tracked(kept)
    assert gc.get_threshold() == (YOUNG_OBJECTS_BEFORE_COLLECTING, *older[1:])


def test_cycles_made_while_serving_are_still_collected(collector_restored):
    settle_collector()
    refs = []
    for _ in range(YOUNG_OBJECTS_BEFORE_COLLECTING):   # enough to pass the threshold
        node = _Node()
        node.itself = node
        refs.append(weakref.ref(node))
        del node
    assert any(ref() is None for ref in refs)           # collected without gc.collect()
