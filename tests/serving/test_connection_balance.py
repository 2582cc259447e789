"""Worker processes sharing one listening socket take new connections in
turn (workers.ConnectionBalance): a worker accepts only while no other
holds fewer connections, so keep-alive clients spread over the workers."""

import copy

from bugsvc.serving.workers import ConnectionBalance


def workers_of(count):
    """One balance as each of `count` forked workers sees it (the counts
    shared, each with its own slot)."""
    balance = ConnectionBalance(count)
    views = []
    for slot in range(count):
        view = copy.copy(balance)
        view.join(slot)
        views.append(view)
    return balance, views


def test_a_worker_holding_more_than_another_lets_the_other_accept():
    _, (first, second) = workers_of(2)
    assert first.may_accept(0) and second.may_accept(0)
    first.hold(1)
    assert not first.may_accept(1) and second.may_accept(0)
    second.hold(1)
    assert first.may_accept(1) and second.may_accept(1)
    second.hold(0)                  # a connection closed
    assert not first.may_accept(1) and second.may_accept(0)


def test_a_worker_gone_or_not_started_is_left_out():
    parent, (first, second, third) = workers_of(3)
    first.hold(5)
    second.hold(3)
    third.hold(4)
    assert second.may_accept(3) and not first.may_accept(5) and not third.may_accept(4)
    parent.leave(1)                 # the second died: the others share the connections
    assert third.may_accept(4) and not first.may_accept(5)
    parent.leave(2)
    assert first.may_accept(5)
    replacement = copy.copy(parent)
    replacement.join(1)             # holds none: it takes the next ones
    assert replacement.may_accept(0) and not first.may_accept(5)


def test_before_any_worker_joined_every_slot_is_absent():
    balance = ConnectionBalance(4)
    balance.join(2)
    assert balance.may_accept(100)
