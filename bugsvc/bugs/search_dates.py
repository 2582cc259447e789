"""Dates in search criteria: absolute dates and the reference's relative
forms (`-3d`, `2w`, `1ms`, `now` ...), as stored text 'YYYY-MM-DD HH:MM:SS'."""

import calendar
import re
from datetime import datetime, timedelta, timezone

from .. import dates
from ..errors import ILLEGAL_DATE, ServiceError


_RELATIVE = re.compile(r"^([-+])?(\d+)([hdwmy])(s?)$", re.IGNORECASE)
_FORMAT = "%Y-%m-%d %H:%M:%S"


def sql_date(value, now):
    """The moment `value` names, as stored text.

    value: '' or 'now' (today's start, as the reference), `[+-]N` followed by
    h, d, w, m or y (N units ago; a trailing 's' means the start of that
    unit, `+` counts forward), or an absolute date/datetime.
    now: the call's time (aware UTC). Errors: 56 when unparsable.
    """
    if isinstance(value, datetime):
        return dates.to_db(value)
    text = str(value).strip() if value is not None else ""
    now = now.astimezone(timezone.utc).replace(tzinfo=None, microsecond=0)
    if text == "" or text.lower() == "now":
        return now.strftime("%Y-%m-%d 00:00:00")
    match = _RELATIVE.match(text)
    if match is None:
        return dates.to_db(dates.parse_datetime(text, "date"))
    sign, amount, unit, start_of = match.groups()
    amount = int(amount) * (-1 if sign == "+" else 1)
    unit, start_of = unit.lower(), bool(start_of) or amount == 0
    try:
        return _relative(now, amount, unit, start_of).strftime(_FORMAT)
    except (OverflowError, ValueError):
        raise ServiceError(ILLEGAL_DATE, f"'{text}' is not a legal date.") from None


def _relative(now, amount, unit, start_of):
    if unit == "h":
        moment = now - timedelta(hours=amount)
        return moment.replace(minute=0, second=0) if start_of else moment
    if unit in ("d", "w"):
        days = amount * 7 if unit == "w" else amount
        if unit == "w" and start_of:
            days += (now.weekday() + 1) % 7    # weeks start on Sunday
        moment = now - timedelta(days=days)
        return moment.replace(hour=0, minute=0, second=0) if start_of else moment
    if unit == "m":
        months = now.year * 12 + now.month - 1 - amount
        year, month = divmod(months, 12)
        if start_of:
            return datetime(year, month + 1, 1)
        day = min(now.day, calendar.monthrange(year, month + 1)[1])
        return now.replace(year=year, month=month + 1, day=day)
    year = now.year - amount
    if start_of:
        return datetime(year, 1, 1)
    day = min(now.day, calendar.monthrange(year, now.month)[1])
    return now.replace(year=year, day=day)
