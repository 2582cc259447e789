"""Decoding the JSON callers send (REST bodies, JSON-RPC requests): strict
about what JSON allows, and about what the service could not store or answer.

Refused, each with a message naming the problem: text that is not UTF-8,
malformed JSON, NaN and Infinity (not JSON, though Python's parser takes
them), numbers too large for a float (1e999), an object with the same key
twice (which value would win is not defined), nesting deeper than MAX_DEPTH,
and lone UTF-16 surrogates ("\\ud800"), which no UTF-8 database or answer can
carry. Integers of any size are kept: parameter coercion answers 54 for those
beyond 64 bits (call/params.py) and the Runner for any that reach SQL.
"""

import json
import math
import re


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


def decode(data):
    """The value of the JSON text `data` (bytes in UTF-8, or str).

    Errors: JsonInputError (a ValueError) for everything refused above.
    """
    if isinstance(data, (bytes, bytearray)):
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
