"""Finding a bug by id or alias, as the caller is allowed to (bugs.md section 3)."""

from ..access import visible_bug_ids
from ..errors import ServiceError

IMPROPER_BUG_ID = 100
BUG_DOES_NOT_EXIST = 101
BUG_ACCESS_DENIED = 102


def bug_id_of(ctx, value):
    """The id of the bug named by `value` (an int, digits, '#digits' or an alias).

    Errors: 100 malformed value or unknown alias; 101 unknown numeric id.
    Does not check visibility (see `visible_bug_id`).
    """
    text = str(value).strip() if not isinstance(value, bool) and value is not None else ""
    if text.startswith("#"):
        text = text[1:]
    if text.isdigit() and text.isascii():
        # Past 19 digits no id exists (and Python will not convert 4300).
        bug_id = int(text) if len(text.lstrip("0")) <= 19 else 2**63
        if bug_id < 2**63 and ctx.conn.execute("SELECT 1 FROM bugs WHERE id = ?",
                                               (bug_id,)).fetchone():
            return bug_id
        raise ServiceError(BUG_DOES_NOT_EXIST, f"Bug #{text[:40]} does not exist.")
    if text:
        row = ctx.conn.execute("SELECT bug_id FROM bug_aliases WHERE lower(alias) = lower(?)",
                               (text,)).fetchone()
        if row is not None:
            return row[0]
    raise ServiceError(IMPROPER_BUG_ID, f"'{text[:100]}' is not a valid bug number nor an alias "
                                        "to a bug.")


def visible_bug_id(ctx, value):
    """Like `bug_id_of`, and the caller must be able to see the bug.

    Errors: 100, 101 as bug_id_of; 102 the bug is not visible to the caller.
    """
    bug_id = bug_id_of(ctx, value)
    if bug_id not in visible_bug_ids(ctx, [bug_id]):
        if ctx.caller.is_logged_in:
            raise ServiceError(BUG_ACCESS_DENIED, f"You are not authorized to access bug #{bug_id}.")
        raise ServiceError(BUG_ACCESS_DENIED, f"You are not authorized to access bug #{bug_id}. "
                                              "To see this bug, you must first log in.")
    return bug_id
