"""Typed access to a call's parameters: the one place where values are coerced.

Parameters arrive as JSON values (REST bodies, JSON-RPC), as strings (query
strings, where a repeated key is a list) or as XML-RPC values. Services read
them through `Params`, so "1", 1 and true mean the same everywhere.
"""

import builtins
import re
from collections.abc import Container, Iterable, Mapping
from datetime import date
from typing import Any, overload

from ..errors import (
    ILLEGAL_DATE,
    NUMBER_TOO_LARGE,
    NUMBER_TOO_SMALL,
    OBJECT_NOT_SPECIFIED,
    PARAM_INVALID,
    PARAM_MUST_BE_NUMERIC,
    ServiceError,
)


_FALSE_STRINGS = {"", "0", "false", "no", "off"}
_INT64_MAX = 2**63 - 1
_INT64_MIN = -2**63
_INTEGER_TEXT = re.compile(r"[+-]?([0-9]+)")
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


def clean_text(value: str | None) -> str:
    """A one-line text as the reference cleans names: every run of control
    characters (CR and LF included) becomes one space, and surrounding
    spaces go. A real name or a product's name can then not forge lines in
    the mail others receive."""
    return _CONTROL.sub(" ", value or "").strip()


def as_day(text: str | None) -> str | None:
    """A YYYY-MM-DD date (its first ten characters, trimmed) as that text;
    None when empty. Errors: 56 not a date."""
    if not text or not text.strip():
        return None
    try:
        return date.fromisoformat(text.strip()[:10]).isoformat()
    except ValueError:
        raise ServiceError(ILLEGAL_DATE, f"'{text}' is not a date (YYYY-MM-DD).") from None


def as_bool(value: object) -> bool:
    """Coerce a parameter value to a boolean.

    Strings "0", "", "false", "no" and "off" (any case) are false, every other
    string is true; JSON booleans and numbers keep their truth value.
    """
    if isinstance(value, str):
        return value.strip().lower() not in _FALSE_STRINGS
    if isinstance(value, list):
        return as_bool(value[0]) if value else False
    return bool(value)


def as_list(value: object) -> list[Any]:
    """Return `value` as a list: None is [], a scalar is [scalar]."""
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return list(value)
    return [value]


def as_int(value: object, name: str) -> int:
    """Coerce one value to an int.

    Errors: 52 when it is not an integer; 54 when it does not fit 64 bits.
    """
    if isinstance(value, bool):
        raise ServiceError(PARAM_MUST_BE_NUMERIC,
                           f"Invalid parameter '{name}': '{value}' is not a number.")
    if isinstance(value, int):
        number = value
    elif isinstance(value, float) and value.is_integer():
        number = int(value)
    elif isinstance(value, str) and (whole := _INTEGER_TEXT.fullmatch(value.strip())):
        digits = whole.group(1).lstrip("0")
        # Decided on the digits: Python refuses to convert texts of over 4300.
        number = int(value.strip()) if len(digits) <= 19 else _INT64_MAX + 1
    else:
        raise ServiceError(PARAM_MUST_BE_NUMERIC,
                           f"Invalid parameter '{name}': '{_shown(value)}' is not a number.")
    if not _INT64_MIN <= number <= _INT64_MAX:
        raise ServiceError(NUMBER_TOO_LARGE,
                           f"Invalid parameter '{name}': {_shown(value)} is too large.")
    return number


def _shown(value: object) -> str:
    """A value as quoted in a message: at most 40 characters of it."""
    if isinstance(value, int) and abs(value) > 10**40:
        return "a number of over 40 digits"
    text = str(value)
    return text if len(text) <= 40 else text[:40] + "..."


def _not_an_id(name: str, value: int) -> ServiceError:
    return ServiceError(PARAM_MUST_BE_NUMERIC, f"Invalid parameter '{name}': '{value}' is not a "
                                               "valid id (a whole number, 0 or more).")


def as_str(value: object, name: str) -> str:
    """Coerce a scalar to a string; numbers become their decimal text.

    Errors: 53 when the value is an array or an object.
    """
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "1" if value else "0"
    if isinstance(value, (int, float)):
        return str(value)
    raise ServiceError(PARAM_INVALID, f"The parameter '{name}' must be a single value, not a list"
                                      " or an object.")


class Params:
    """Read-only typed view over a call's parameter dict.

    (The annotations say builtins.int and so on: the methods' own names
    would shadow the types inside the class.)"""

    def __init__(self, params: Mapping[str, Any] | None) -> None:
        self.raw = params if params is not None else {}

    def has(self, name: str) -> bool:
        """True when `name` was given at all (even as null or empty)."""
        return name in self.raw

    def get(self, name: str, default: Any = None) -> Any:
        """The value as given, uncoerced."""
        return self.raw.get(name, default)

    def bool(self, name: str, default: builtins.bool = False) -> builtins.bool:
        """`name` as a boolean; `default` when absent or null."""
        value = self.raw.get(name)
        return default if value is None else as_bool(value)

    @overload
    def int(self, name: str, default: builtins.int) -> builtins.int: ...

    @overload
    def int(self, name: str, default: None = None) -> builtins.int | None: ...

    def int(self, name: str, default: builtins.int | None = None) -> builtins.int | None:
        """`name` as an int; `default` when absent, null or "". Errors: 52, 54."""
        value = self.raw.get(name)
        if value is None or value == "":
            return default
        if isinstance(value, list):
            if not value:
                return default
            value = value[0]
        return as_int(value, name)

    def str(self, name: builtins.str,
            default: builtins.str | None = None) -> builtins.str | None:
        """`name` as a string; `default` when absent or null. Errors: 53."""
        value = self.raw.get(name)
        if value is None:
            return default
        if isinstance(value, list) and len(value) == 1:
            value = value[0]
        return as_str(value, name)

    def list(self, name: builtins.str) -> builtins.list[Any]:
        """`name` as a list of raw values ([] when absent)."""
        return as_list(self.raw.get(name))

    def str_list(self, name: builtins.str) -> builtins.list[builtins.str]:
        """`name` as a list of strings. Errors: 53."""
        return [as_str(v, name) for v in as_list(self.raw.get(name)) if v is not None]

    def int_list(self, name: builtins.str) -> builtins.list[builtins.int]:
        """`name` as a list of ints. Errors: 52, 54."""
        return [as_int(v, name) for v in as_list(self.raw.get(name)) if v is not None and v != ""]

    def id_list(self, name: builtins.str) -> builtins.list[builtins.int]:
        """`name` as a list of object ids: whole numbers, none negative. An id
        is checked as a number of 0 or more before anything is looked up (as
        the reference does), so -1 is refused like "abc" rather than
        reported missing. Errors: 52 not a whole number or negative; 54."""
        ids = self.int_list(name)
        for value in ids:
            if value < 0:
                raise _not_an_id(name, value)
        return ids

    def id(self, name: builtins.str,
           default: builtins.int | None = None) -> builtins.int | None:
        """`name` as one object id (see id_list); `default` when absent, null
        or "". Errors: 52, 54."""
        value = self.int(name)
        if value is None:
            return default
        if value < 0:
            raise _not_an_id(name, value)
        return value

    def dict(self, name: builtins.str) -> builtins.dict[builtins.str, Any]:
        """`name` as a dict ({} when absent or null). Errors: 53."""
        value = self.raw.get(name)
        if value is None:
            return {}
        if not isinstance(value, dict):
            raise ServiceError(PARAM_INVALID, f"The parameter '{name}' must be an object.")
        return value


def reject_unknown_keys(params: Iterable[str], allowed: Container[str], code: int) -> None:
    """Raise `code` (53 on creates, -32601 on updates, as the reference) when
    `params` holds a key that is not in `allowed`."""
    unknown = sorted(key for key in params if key not in allowed)
    if unknown:
        raise ServiceError(code, f"The parameter '{unknown[0]}' is not valid here.")


def required_str(p: Params, name: str, noun: str) -> str:
    """`name` of Params `p` as a string, required for creating a `noun`.
    Errors: 50 missing or null; 53."""
    value = p.str(name)         # None exactly when missing or null
    if value is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, f"You must specify the '{name}' of the {noun}.")
    return value


def bounded_int(p: Params, name: str, low: int, high: int, default: int = 0) -> int:
    """`name` of Params `p` as an int within [low, high]; `default` when
    absent. Errors: 52 not a number; 54/55 out of range."""
    value = p.int(name, default)
    if value > high:
        raise ServiceError(NUMBER_TOO_LARGE, f"The {name} {value} is larger than {high}.")
    if value < low:
        raise ServiceError(NUMBER_TOO_SMALL, f"The {name} {value} is smaller than {low}.")
    return value
