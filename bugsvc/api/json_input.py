"""Decoding the JSON callers send (REST bodies, JSON-RPC requests): strict
about what JSON allows, and about what the service could not store or answer.

Refused, each with a message naming the problem: text that is not UTF-8,
malformed JSON, NaN and Infinity (not JSON, though Python's parser takes
them), numbers too large for a float (1e999), an object with the same key
twice (which value would win is not defined), nesting deeper than MAX_DEPTH,
and lone UTF-16 surrogates ("\\ud800"), which no UTF-8 database or answer can
carry. Integers of any size are kept: parameter coercion answers 54 for those
beyond 64 bits (call/params.py) and the Runner for any that reach SQL.

Most bodies are read by orjson (a comment's in about a tenth of the time);
any that it might read otherwise than the json module below (see
_fast_decode) is read by the json module, so values and errors are the same
either way.
"""

import json
import math
import re

import orjson


MAX_DEPTH = 64
_SURROGATE = re.compile("[\ud800-\udfff]")


class JsonInputError(ValueError):
    """The text is not JSON the service accepts; str() says why."""


def _reject_constant(name):
    raise JsonInputError(f"{name} is not a JSON value")


def _finite_float(text):
    number = float(text)
    if not math.isfinite(number):
        raise JsonInputError(f"the number {text[:40]} is too large")
    return number


def _unique_keys(pairs):
    result = dict(pairs)
    if len(result) != len(pairs):
        seen = set()
        for key, _ in pairs:
            if key in seen:
                raise JsonInputError(f"the key '{_shown(key)}' appears twice in one object")
            seen.add(key)
    return result


def _shown(text):
    return _SURROGATE.sub("\ufffd", text[:60])


def _check_tree(value):
    """Refuse nesting deeper than MAX_DEPTH and strings with lone surrogates."""
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, str):
            if _SURROGATE.search(item):
                raise JsonInputError("a string holds a lone UTF-16 surrogate (\\ud800-\\udfff), "
                                     "which is not a character")
            continue
        if not isinstance(item, (dict, list)):
            continue
        if depth > MAX_DEPTH:
            raise JsonInputError(f"it is nested deeper than {MAX_DEPTH} levels")
        if isinstance(item, dict):
            for key, child in item.items():
                stack.append((key, depth))
                stack.append((child, depth + 1))
        else:
            stack.extend((child, depth + 1) for child in item)


def _fast_decode(data):
    """The value of `data` (bytes) as orjson reads it, when that is exactly
    what the json module below would answer; None when it may not be.

    orjson keeps the last of a repeated key, gives numbers too large for an
    integer as floats and reads floats its own way; it refuses NaN, lone
    surrogates, a BOM and malformed text, with messages of its own. So the
    value is taken only without a float, without a \\u escape (the one way
    to write a surrogate, or a colon that is not one), within MAX_DEPTH, and
    with as many keys as the text has colons outside strings: a colon of
    JSON text is a key's or one inside a string, and without \\u escapes
    each one inside a string is one in the value.
    """
    if b"\\u" in data:
        return None
    try:
        value = orjson.loads(data)
    except orjson.JSONDecodeError:
        return None
    colons = data.count(b":")
    stack = [(value, 1)]
    while stack:
        item, depth = stack.pop()
        if isinstance(item, dict):
            colons -= len(item) + sum(key.count(":") for key in item)
            children = item.values()
        elif isinstance(item, list):
            children = item
        elif isinstance(item, str):
            colons -= item.count(":")
            continue
        elif isinstance(item, float):
            return None
        else:
            continue
        if depth > MAX_DEPTH:
            return None
        for child in children:
            if isinstance(child, str):
                colons -= child.count(":")
            elif isinstance(child, (dict, list)):
                stack.append((child, depth + 1))
            elif isinstance(child, float):
                return None
    return value if colons == 0 else None


def decode(data):
    """The value of the JSON text `data` (bytes in UTF-8, or str).

    Errors: JsonInputError (a ValueError) for everything refused above.
    """
    if isinstance(data, (bytes, bytearray)):
        value = _fast_decode(data)
        if value is not None:
            return value
        try:
            data = bytes(data).decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise JsonInputError(f"it is not valid UTF-8 (byte {exc.start})") from None
    try:
        value = json.loads(data, parse_constant=_reject_constant, parse_float=_finite_float,
                           object_pairs_hook=_unique_keys)
    except JsonInputError:
        raise
    except RecursionError:
        raise JsonInputError(f"it is nested deeper than {MAX_DEPTH} levels") from None
    except json.JSONDecodeError as exc:
        # The position is what lets the sender find the mistake: keep it
        # whole, however long the reason before it.
        raise JsonInputError(f"{exc.msg} at line {exc.lineno} column {exc.colno} "
                             f"(character {exc.pos})") from None
    except ValueError as exc:       # integers of over 4300 digits
        raise JsonInputError(_shown(str(exc))) from None
    _check_tree(value)
    return value
