"""Search statements kept by a serving process (bugs/search.py,
`_statement`): a search of plain field=value parameters (with or without
their operators) asked again by the same caller at the same catalog
generation is not parsed and compiled again, even where its answer is not
kept (an operator given, or bugs changed since); it still finds what a
search compiled anew finds, for every caller, after every kind of change,
and a statement that read the time (a relative date) is made anew each
time. Both engines."""

from datetime import datetime, timedelta, timezone

import pytest

from bug_changes import CALLERS, CHANGES, MEMBER, PAM, PAT, SEARCH, change_is_seen
from bug_rows import ADMIN, add_bug, add_product
from bugsvc.bugs import answer_cache, search as search_module
from bugsvc.services import bug as bug_service, bug_search


# The benchmark's search made anew: its operator spelt out, so no answer is kept.
WITH_OPERATOR = dict(SEARCH, status_type="anyexact")


@pytest.fixture
def world(callers_world):
    """bug_changes' world: {name: bug id} of the four bugs."""
    return callers_world


@pytest.fixture
def compiled(monkeypatch):
    """The searches parsed and compiled (their params), as they happen."""
    made = []
    compile_ = search_module._compiled

    def counting(ctx, params, count_only):
        made.append(dict(params))
        return compile_(ctx, params, count_only)
    monkeypatch.setattr(search_module, "_compiled", counting)
    return made


def search(services, who, params=WITH_OPERATOR, now=None):
    return services.call(bug_search.search, dict(params), as_user=who, now=now)


def made_anew(services, who, params=WITH_OPERATOR, now=None):
    """The answer of the search compiled and made without anything kept."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(search_module, "STATEMENT_PARAMS", frozenset())
        patch.setattr(answer_cache, "KEPT_PARAMS", frozenset())
        return search(services, who, params, now)


def ids(answer):
    return [bug["id"] for bug in answer["bugs"]]


def test_the_same_search_is_compiled_once(services, world, compiled):
    fresh = made_anew(services, PAT)
    compiled.clear()
    first = search(services, PAT)
    assert search(services, PAT) == first == fresh
    assert ids(first) == sorted([world["open"], world["other"], world["reported"]])
    assert len(compiled) == 1
    # Counted, the same parameters are another statement, kept apart.
    count = dict(WITH_OPERATOR, count_only=1)
    assert search(services, PAT, count) == search(services, PAT, count) == {"bug_count": 3}
    assert len(compiled) == 2


def test_no_caller_is_given_a_statement_kept_for_another(services, world):
    fresh = {who: made_anew(services, who) for who in CALLERS}
    for order in (CALLERS, tuple(reversed(CALLERS))):
        for who in order:
            assert search(services, who) == fresh[who], who
    assert ids(fresh[None]) == ids(fresh[PAM]) == sorted([world["open"], world["other"]])
    assert world["reported"] in ids(fresh[PAT])
    assert ids(fresh[MEMBER]) == sorted(world.values())


@pytest.mark.parametrize("change", sorted(CHANGES))
def test_after_each_kind_of_change_the_search_finds_what_one_made_anew_finds(services, world,
                                                                            change):
    change_is_seen(services, world, change, search, made_anew)


def test_a_new_product_is_found_by_a_search_kept_before_it_existed(services, world, compiled):
    """The product's name was looked up when the statement was made: a
    catalogue change (the product added) makes it anew."""
    params = {"product": "Later", "product_type": "anyexact", "limit": 50}
    assert search(services, ADMIN, params)["bugs"] == []
    assert search(services, ADMIN, params)["bugs"] == []
    assert len(compiled) == 1
    add_product(services, "Later")
    later = add_bug(services, summary="In a product made later", product="Later")
    assert ids(search(services, ADMIN, params)) == [later]
    assert len(compiled) == 2


def test_a_statement_that_read_the_time_is_made_anew_each_time(services, world, compiled):
    changed_at = datetime(2026, 3, 1, 12, 0, tzinfo=timezone.utc)
    services.call(bug_service.update, {"ids": [world["open"]], "status": "IN_PROGRESS"},
                  as_user=ADMIN, now=changed_at)
    params = {"product": "TestProduct", "status": "-1h", "status_type": "changedafter"}
    soon, later = changed_at + timedelta(minutes=30), changed_at + timedelta(hours=2)
    assert ids(search(services, ADMIN, params, soon)) == [world["open"]]
    assert search(services, ADMIN, params, later)["bugs"] == []
    assert len(compiled) == 2
    assert search(services, ADMIN, params, later) == made_anew(services, ADMIN, params, later)
    assert len(compiled) == 4


@pytest.mark.parametrize("params", [
    dict(SEARCH, summary="open"), dict(SEARCH, order="priority"), {"quicksearch": "crash"},
    dict(SEARCH, creation_ts="-1d"), dict(WITH_OPERATOR, product=["TestProduct", {"a": 1}])])
def test_searches_of_other_parameters_are_compiled_each_time(services, world, compiled,
                                                            params):
    for _ in range(2):
        try:
            search(services, ADMIN, params)
        except Exception:                   # noqa: BLE001 - refused alike both times
            pass
    assert len(compiled) == 2
