"""Date and time in and out: UTC inside, `YYYY-MM-DDTHH:MM:SSZ` outside."""

import functools
import re
from datetime import datetime, timedelta, timezone

from .errors import ILLEGAL_DATE, ServiceError


_DB_FORMAT = "%Y-%m-%d %H:%M:%S"
_INPUT = re.compile(
    r"^\s*(\d{4})-?(\d{2})-?(\d{2})"
    r"(?:[T ](\d{2}):?(\d{2})(?::?(\d{2})(?:\.\d+)?)?)?"
    r"\s*(Z|[+-]\d{2}:?\d{2})?\s*$"
)


@functools.lru_cache(maxsize=1024)
def to_db(moment):
    """Store form of an aware or naive-UTC datetime: 'YYYY-MM-DD HH:MM:SS' in UTC.
    (Kept for the last 1,024 moments: a call stamps its rows with one
    `now` several times. Equal aware moments give the same form whatever
    their zone; a naive one never equals an aware one.)"""
    if moment.tzinfo is not None:
        moment = moment.astimezone(timezone.utc)
    if moment.year >= 1000:
        # isoformat writes the same at half strftime's cost (and, when
        # aware, the zone after it); strftime gives years before 1000
        # fewer than four digits.
        return moment.isoformat(" ", "seconds")[:19]
    return moment.replace(tzinfo=None).strftime(_DB_FORMAT)


def minute_to_db(moment):
    """The minute of to_db(moment): 'YYYY-MM-DD HH:MM' (kept per minute, as
    to_db keeps its moments; `moment`'s zone must be a whole number of
    minutes from UTC, as every zone in use is)."""
    return to_db(moment.replace(second=0, microsecond=0))[:16]


def from_db(text):
    """Wire form of a stored time: 'YYYY-MM-DDTHH:MM:SSZ', or None for None."""
    if text is None:
        return None
    return text[:10] + "T" + text[11:19] + "Z"


def format_datetime(moment):
    """Wire form of a datetime: 'YYYY-MM-DDTHH:MM:SSZ' in UTC."""
    return from_db(to_db(moment))


def parse_datetime(value, name="date"):
    """Parse a date or datetime parameter into an aware UTC datetime.

    Accepts YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, ISO 8601 with T and an optional
    zone (Z, +0000, +00:00) and XML-RPC's compact form; a value without zone
    is UTC. Errors: 56 when unparsable.
    """
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=timezone.utc)
    match = _INPUT.match(value) if isinstance(value, str) else None
    if not match:
        raise ServiceError(ILLEGAL_DATE, f"'{value}' is not a legal date for '{name}'.")
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        moment = datetime(int(year), int(month), int(day), int(hour or 0), int(minute or 0),
                          int(second or 0), tzinfo=timezone.utc)
    except ValueError:
        raise ServiceError(ILLEGAL_DATE, f"'{value}' is not a legal date for '{name}'.") from None
    if zone and zone != "Z":
        sign = 1 if zone[0] == "+" else -1
        digits = zone[1:].replace(":", "")
        moment -= sign * timedelta(hours=int(digits[:2]), minutes=int(digits[2:]))
    return moment
