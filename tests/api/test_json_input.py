"""JSON bodies (api/json_input.py): bytes are read by orjson where that
gives what the json module gives, by the json module otherwise; either way
the value, or the error, is the json module's."""

import pytest

from bugsvc.api import json_input


def through_json_module(data, monkeypatch):
    """decode()'s answer for `data` read by the json module alone: its
    value, or ("refused", message)."""
    with monkeypatch.context() as patch:
        patch.setattr(json_input, "_fast_decode", lambda data: None)
        return decoded(data)


def decoded(data):
    try:
        return json_input.decode(data)
    except json_input.JsonInputError as exc:
        return ("refused", str(exc))


DEEP = b'{"a": ' * 64 + b"1" + b"}" * 64
TOO_DEEP = b"[" * 65 + b"]" * 65


@pytest.mark.parametrize("body", [
    b'{"comment": "Words", "is_private": false}',
    b'{"ids": [1, 2, 3], "fields": {"cc": {"add": ["a@example.com"]}}}',
    b'{"a": 1, "a": 2}',                                    # a key twice
    b'{"x": {"a": 1, "a": 1}}',                             # nested, twice
    b'{"a:b": 1, "c": "d:e", "f": ["g:h"]}',                # colons inside strings
    b'{"a": "x", "a": "b:c"}',                              # twice, a colon to make up for it
    b'{"a": 1, "b": {"c": ":"}, "b": 2}',
    b'{"a": "\\u003a", "a": 1}',                            # an escaped colon
    b'{"a": 1, "a": "\\u003a"}',                            # ... making up for the key
    b'{"s": "\\ud800"}',                                    # a lone surrogate
    b'{"s": "\\u00e9t\\u00e9"}',
    b'{"n": 1.5}', b'{"n": 1e400}', b'{"n": -0.0}', b'{"n": NaN}', b'{"n": Infinity}',
    b'{"n": 18446744073709551616}', b'{"n": -9223372036854775809}',
    b'{"n": 9223372036854775807}',
    b'\xef\xbb\xbf{"bom": true}',
    b'{"t": "caf\xc3\xa9"}', b'{"t": "\xff"}',
    b'[1, 2', b'', b'   ', b'null', b'"text"', b'12', b'{"a" 1}', b'{"a": 1,}',
    DEEP, TOO_DEEP,
], ids=repr)
def test_bytes_decode_as_the_json_module_decodes_them(body, monkeypatch):
    expected = through_json_module(body, monkeypatch)
    assert decoded(body) == expected
    assert repr(decoded(body)) == repr(expected)        # -0.0 and 0.0, 1 and 1.0 told apart
