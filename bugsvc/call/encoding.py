"""Whether the way in serving the current request writes the call's answer
out with orjson as it is (REST's JSON and JSONP answers): a service may then
answer with orjson.Fragment values, JSON text made before (the search
answers a process keeps, bugs/answer_cache.py), which orjson writes out
byte for byte as they were made. Every other way in (XML-RPC, JSON-RPC,
the web pages, REST's HTML answer) gets plain values."""

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager


_WELCOME = contextvars.ContextVar("fragments_welcome", default=False)


@contextmanager
def fragments_welcome(welcome: bool = True) -> Iterator[None]:
    """Within the block (one request's call, in its thread), fragments are
    welcome in answers when `welcome`."""
    token = _WELCOME.set(bool(welcome))
    try:
        yield
    finally:
        _WELCOME.reset(token)


def fragments_are_welcome() -> bool:
    """True when the current request's answer may hold orjson.Fragment values."""
    return _WELCOME.get()


def fitted(text: bytes) -> bytes:
    """A copy of `text` (orjson's output) that takes only its length:
    orjson's own bytes hold the buffer it grew while writing (4 KB at
    least), which something kept would hold as long."""
    return memoryview(text).tobytes()
