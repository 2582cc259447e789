"""The REGEXP function of searches (operators regexp, notregexp, anywords)
and the time budget its matching runs within, on both engines: SQLite calls
sql_regexp for `value REGEXP ?`; PostgreSQL matches with its own regular
expressions and cancels a statement that goes over its budget
(postgres/dialect.py bounds it). A tighter limit of a `work_time_limit`
block (PostgreSQL's bounded_work) may bound that statement instead."""

import functools
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

import regex

from .dialect import WorkBudgetExceeded


# Regular expressions of searches run on the `regex` engine: the syntax of
# Python's `re` (lookarounds and backreferences included, as MySQL 8 and
# PostgreSQL have them) plus POSIX classes such as [[:alpha:]], and, unlike
# `re`, a time limit for each match and matching without the interpreter lock,
# so a pattern that backtracks exponentially cannot hold a serving thread, nor
# every other request with it.
_REGEXP_FLAGS = regex.IGNORECASE | regex.VERSION0
# What a statement may spend matching regular expressions: this much ...
REGEXP_SECONDS = 0.5
# ... plus this much per value matched (a few times what an ordinary pattern
# takes on an ordinary summary or comment), so a search scanning many rows
# with a plain pattern is never cut short, while a pattern slow on every row
# or very slow on one row is stopped after about REGEXP_SECONDS. No single
# match runs longer than REGEXP_SECONDS.
REGEXP_SECONDS_PER_VALUE = 10e-6
_regexp_state = threading.local()
_clock = time.perf_counter


class RegexpTooSlow(Exception):
    """A statement spent its time budget matching regular expressions.

    SQLite reports an exception raised inside its call of REGEXP only as
    sqlite3.OperationalError, PostgreSQL its cancelled statement as
    QueryCanceled; `regexp_budget` tells those apart from other failures.
    pattern: the pattern being matched when the budget ran out.
    """

    def __init__(self, pattern: str) -> None:
        super().__init__(f"matching {pattern!r} took too long")
        self.pattern = pattern


class RegexpBudget:
    """The matching time left to the statements of one `regexp_budget` block."""

    def __init__(self, seconds: float, per_value: float) -> None:
        self.seconds = seconds
        self.per_value = per_value
        self.spent = 0.0
        self.values = 0
        self.exceeded: str | None = None    # the pattern that ran out of time
        self.patterns: list[str] = []       # patterns of statements the engine itself bounds
        self.bounded = False                # the engine bounds the statement's time itself
        self.work_limited = False           # ... to a work_time_limit block's time

    def match(self, compiled: regex.Pattern[str], text: str) -> bool:
        """True when `compiled` matches `text`. Raises RegexpTooSlow."""
        self.values += 1
        left = self.seconds + self.values * self.per_value - self.spent
        if left <= 0:
            self.exceeded = compiled.pattern
            raise RegexpTooSlow(compiled.pattern)
        start = _clock()
        try:
            return compiled.search(text, timeout=min(left, self.seconds),
                                   concurrent=True) is not None
        except TimeoutError:
            self.exceeded = compiled.pattern
            raise RegexpTooSlow(compiled.pattern) from None
        finally:
            self.spent += _clock() - start


class StatementTooSlow(Exception):
    """A statement in a `regexp_budget` block went over the block's time
    (PostgreSQL bounds the whole statement, whatever takes the time)."""


class RegexpInvalid(Exception):
    """The engine refused a search pattern as not valid in its syntax.
    pattern: the pattern (the first of the statement's, when it had several)."""

    def __init__(self, pattern: str) -> None:
        super().__init__(f"{pattern!r} is not a valid regular expression here")
        self.pattern = pattern


@contextmanager
def _for_the_block(name: str, value: object) -> Iterator[None]:
    """This thread's state `name` is `value` within the block, as it was after."""
    previous = getattr(_regexp_state, name, None)
    setattr(_regexp_state, name, value)
    try:
        yield
    finally:
        setattr(_regexp_state, name, previous)


@contextmanager
def work_time_limit(milliseconds: int) -> Iterator[None]:
    """Bound the time of each statement this thread runs in the block to
    `milliseconds`, where the engine bounds its statements' time itself
    (PostgreSQL's bounded_work: the lower of this and a `regexp_budget`
    block's time, current_work_limit); a statement stopped by this limit
    leaves a `regexp_budget` block as WorkBudgetExceeded."""
    with _for_the_block("work_limit", milliseconds):
        yield


def current_work_limit() -> int | None:
    """The milliseconds of the `work_time_limit` block this thread is in, or None."""
    return getattr(_regexp_state, "work_limit", None)


def current_regexp_budget() -> RegexpBudget | None:
    """The budget of the `regexp_budget` block this thread is in, or None."""
    return getattr(_regexp_state, "budget", None)


@contextmanager
def outside_regexp_budget() -> Iterator[None]:
    """Run the block's statements outside the budget of the `regexp_budget`
    block this thread is in (statements a search's statement makes run
    before it: Connection.before_next_statement's)."""
    with _for_the_block("budget", None):
        yield


@contextmanager
def regexp_budget(seconds: float | None = None,
                  per_value: float | None = None) -> Iterator[RegexpBudget]:
    """Bound the time REGEXP spends in the statements this thread runs
    within the block (all of them together): `seconds` (default
    REGEXP_SECONDS) plus `per_value` (default REGEXP_SECONDS_PER_VALUE) for
    each value matched. A statement that goes over stops, and leaves the
    block as RegexpTooSlow (WorkBudgetExceeded when a work_time_limit
    stopped it); a pattern the engine refuses leaves it as RegexpInvalid.
    Outside such a block each match has REGEXP_SECONDS on its own."""
    previous = getattr(_regexp_state, "budget", None)
    budget = _regexp_state.budget = RegexpBudget(
        REGEXP_SECONDS if seconds is None else seconds,
        REGEXP_SECONDS_PER_VALUE if per_value is None else per_value)
    try:
        yield budget
    except RegexpTooSlow:
        raise
    except Exception as exc:
        if budget.exceeded is not None:
            raise RegexpTooSlow(budget.exceeded) from None
        state = getattr(exc, "sqlstate", None)
        if state == _CANCELLED and budget.bounded:
            if budget.work_limited:
                raise WorkBudgetExceeded() from None
            if budget.patterns:
                raise RegexpTooSlow(budget.patterns[0]) from None
            raise StatementTooSlow() from None
        if budget.patterns and state == _INVALID_REGEXP:
            raise RegexpInvalid(budget.patterns[0]) from None
        raise
    finally:
        _regexp_state.budget = previous


# SQLSTATEs of a statement cancelled by its time limit, and of a pattern
# the engine's own regular expressions refuse.
_CANCELLED = "57014"
_INVALID_REGEXP = "2201B"


@functools.lru_cache(maxsize=256)
def _compiled(pattern: str) -> regex.Pattern[str]:
    return regex.compile(pattern, _REGEXP_FLAGS)


def compile_regexp(pattern: str) -> regex.Pattern[str]:
    """The compiled form of `pattern` as REGEXP runs it. Errors: regex.error
    (and RecursionError, OverflowError for extreme nesting or counts)."""
    return _compiled(pattern)


def sql_regexp(pattern: str | None, value: object) -> int | None:
    """SQL `value REGEXP pattern` (search operators regexp/notregexp/anywords):
    a case-insensitive search, as MySQL's REGEXP, within the time budget of
    `regexp_budget`. Patterns are checked by the caller; NULL matches
    nothing. Raises RegexpTooSlow when the budget is spent."""
    if pattern is None or value is None:
        return None
    try:
        compiled = _compiled(pattern)
    except regex.error:
        return 0
    budget = getattr(_regexp_state, "budget", None) or RegexpBudget(REGEXP_SECONDS, 0.0)
    return 1 if budget.match(compiled, value if isinstance(value, str) else str(value)) else 0
