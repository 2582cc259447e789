"""Finding a bug by id or alias, as the caller is allowed to.

No oracles: a bug the caller may not see and a bug that does not
exist answer alike. A numeric id answers 102 ("not authorized") for both,
except to a caller who can see every bug, who is told the truth (101); an
alias of a hidden bug answers 100 like an unknown alias.
"""

from ..errors import BUG_ACCESS_DENIED, BUG_DOES_NOT_EXIST, IMPROPER_BUG_ID, ServiceError
from . import visibility


# No bug id reaches 2**63 (SQLite integers); longer numbers are never looked up.
MAX_BUG_ID = 2**63


def _text(value):
    """`value` as stripped text without a leading '#' ('' for None and booleans)."""
    if isinstance(value, bool) or value is None:
        return ""
    text = str(value).strip()
    return text[1:] if text.startswith("#") else text


def numeric_bug_id(value):
    """The number `value` names (an int, digits or '#digits'), or None when it
    is not a number. Numbers past any possible id come back as 2**63."""
    text = _text(value)
    if not (text.isdigit() and text.isascii()):
        return None
    # Past 19 digits no id exists (and Python will not convert 4300).
    return int(text) if len(text.lstrip("0")) <= 19 else MAX_BUG_ID


def _exists(ctx, bug_id):
    return bug_id < MAX_BUG_ID and ctx.conn.execute("SELECT 1 FROM bugs WHERE id = ?",
                                                    (bug_id,)).fetchone() is not None


def _visibility(ctx, bug_id):
    """True when bug `bug_id` exists and the caller may see it, False when it
    exists hidden, None when there is no such bug (one query)."""
    if bug_id >= MAX_BUG_ID:
        return None
    condition, args = visibility.bug_visibility_sql(ctx)
    row = ctx.conn.execute(f"SELECT {condition} FROM bugs b WHERE b.id = ?",
                           args + [bug_id]).fetchone()
    return None if row is None else bool(row[0])


def _alias_target(ctx, text):
    row = ctx.conn.execute("SELECT bug_id FROM bug_aliases WHERE lower(alias) = lower(?)",
                           (text,)).fetchone()
    return None if row is None else row[0]


def _unknown_alias(text):
    if not text:
        # An empty id names no bug at all: the reference's "missing bug id".
        return ServiceError(IMPROPER_BUG_ID, "You must enter a valid bug number!")
    return ServiceError(IMPROPER_BUG_ID, f"'{text[:100]}' is not a valid bug number nor an alias "
                                         "to a bug.")


def _denied(ctx, number):
    """102 for bug `number` (its digits, shortened like the reference's)."""
    shown = (str(number).lstrip("0") or "0")[:40]
    if ctx.caller.is_logged_in:
        return ServiceError(BUG_ACCESS_DENIED, f"You are not authorized to access bug #{shown}.")
    return ServiceError(BUG_ACCESS_DENIED, f"You are not authorized to access bug #{shown}. "
                                           "To see this bug, you must first log in.")


def bug_id_of(ctx, value):
    """The id of the bug named by `value` (an int, digits, '#digits' or an alias).

    Does not check visibility, and its errors tell the truth: use it only
    where neither the id nor the error reaches the caller (see
    `visible_bug_id`). Errors: 100 malformed value or unknown alias; 101
    unknown numeric id.
    """
    text = _text(value)
    number = numeric_bug_id(text)
    if number is not None:
        if _exists(ctx, number):
            return number
        raise ServiceError(BUG_DOES_NOT_EXIST, f"Bug #{text[:40]} does not exist.")
    bug_id = _alias_target(ctx, text) if text else None
    if bug_id is None:
        raise _unknown_alias(text)
    return bug_id


def visible_bug_id(ctx, value):
    """The id of the bug named by `value`, which the caller must be able to see.

    Errors: 100 malformed value, unknown alias, or the alias of a bug the
    caller cannot see; 102 a numeric id of a bug the caller cannot see, or
    of none at all unless the caller sees every bug; 101 an unknown numeric
    id, for a caller who sees every bug.
    """
    text = _text(value)
    memo = ctx.memo
    if memo is not None and ("visible bug", text) in memo:
        return memo[("visible bug", text)]
    number = numeric_bug_id(text)
    if number is None:
        bug_id = _alias_target(ctx, text) if text else None
        if bug_id is None or not visibility.visible_bug_ids(ctx, [bug_id]):
            raise _unknown_alias(text)
        if memo is not None:
            memo[("visible bug", text)] = bug_id
        return bug_id
    visible = _visibility(ctx, number)
    if visible:
        if memo is not None:
            memo[("visible bug", text)] = number
        return number
    if visible is not None:
        raise _denied(ctx, number)
    if visibility.sees_every_bug(ctx):
        raise ServiceError(BUG_DOES_NOT_EXIST, f"Bug #{text[:40]} does not exist.")
    raise _denied(ctx, text)
