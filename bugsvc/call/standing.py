"""Whether the current request's answer stands while three generations do.

A way in that keeps whole answers (web/rest/kept_responses.py) watches a
request; the service that answers it notes the generations its transaction
saw (catalog, credential and bug: store/cache.py) when its answer is made of
nothing else than what those generations cover for its caller (the bug
objects kept by object_cache.py are), and any code that reads what they do
not cover spoils the answer. An answer noted and not spoiled is the same
answer for the same request while all three generations stand."""

import contextvars
from typing import Any


class Standing:
    """What one watched request's answer stands on: `at`, the generations
    (catalog, credential, bug) noted last, or None; `spoiled`: something
    the answer holds is not covered by them."""

    __slots__ = ("at", "spoiled")

    def __init__(self) -> None:
        self.at: tuple[Any, Any, Any] | None = None
        self.spoiled = False

    @property
    def stands(self) -> tuple[Any, Any, Any] | None:
        """The generations the answer stands on, or None (none noted, or spoiled)."""
        return None if self.spoiled else self.at


_WATCHED: contextvars.ContextVar[Standing | None] = contextvars.ContextVar("standing",
                                                                           default=None)


def watch() -> tuple[Standing, contextvars.Token[Standing | None]]:
    """Watch the current request (in its thread) until unwatch(token):
    (the Standing its notes and spoils go to, the token)."""
    standing = Standing()
    return standing, _WATCHED.set(standing)


def unwatch(token: contextvars.Token[Standing | None]) -> None:
    """Stop the watch watch() began (`token`: its second value)."""
    _WATCHED.reset(token)


def note(ctx: Any) -> None:
    """The answer of the call in `ctx` is made of what the generations its
    transaction saw cover: noted when all three were read (a watched
    request only); spoiled when they were not."""
    standing = _WATCHED.get()
    if standing is None:
        return
    at = ctx.generations.at_hand() if ctx.generations is not None else None
    if at is None:
        standing.spoiled = True
    else:
        standing.at = at


def spoil() -> None:
    """The current request's answer holds something its generations do not
    cover (it stands on nothing)."""
    standing = _WATCHED.get()
    if standing is not None:
        standing.spoiled = True
