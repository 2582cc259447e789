"""When the caller last visited bugs: recording visits of the bugs it is
involved in, and reading them (the calls are services/last_visit.py's)."""

from .. import dates
from ..errors import USER_ERROR, ServiceError
from ..store.db import placeholders
from .lookup import bug_id_of, visible_bug_id
from .visibility import bug_visibility_sql


RECENT_LIMIT = 20


def _record(bug_id, when):
    return {"id": bug_id, "last_visit_ts": dates.from_db(when)}


def _is_involved(ctx, bug_id):
    """Reporter, assignee, QA contact (while useqacontact) or on the CC list."""
    user_id = ctx.caller.id
    qa = " OR b.qa_contact = ?" if ctx.param_is_on("useqacontact") else ""
    args = [bug_id, user_id, user_id] + ([user_id] if qa else []) + [user_id]
    row = ctx.conn.execute(
        f"SELECT 1 FROM bugs b WHERE b.id = ? AND (b.reporter = ? OR b.assigned_to = ?{qa}"
        " OR EXISTS (SELECT 1 FROM bug_cc cc WHERE cc.bug_id = b.id AND cc.user_id = ?))",
        args).fetchone()
    return row is not None


def record_visits(ctx, values):
    """Record now as the caller's last visit of each bug of `values` (ids
    or aliases). Returns the Last-visit records ({id, last_visit_ts}) in
    the order asked.
    Errors: 100/101/102 a bug; 32000 the caller is not involved in a bug
    (reporter, assignee, QA contact, CC). Nothing is stored unless every
    bug is accepted.
    """
    bug_ids = []
    for value in values:
        bug_id = visible_bug_id(ctx, value)
        if not _is_involved(ctx, bug_id):
            raise ServiceError(USER_ERROR, f"You are not involved in bug #{bug_id}, so its last "
                                           "visit is not recorded.")
        if bug_id not in bug_ids:
            bug_ids.append(bug_id)
    when = dates.to_db(ctx.now)
    for bug_id in bug_ids:
        ctx.conn.execute("DELETE FROM bug_user_last_visit WHERE user_id = ? AND bug_id = ?",
                         (ctx.caller.id, bug_id))
        ctx.conn.execute("INSERT INTO bug_user_last_visit (user_id, bug_id, last_visit_ts)"
                         " VALUES (?, ?, ?)", (ctx.caller.id, bug_id, when))
    return [_record(bug_id, when) for bug_id in bug_ids]


def visits(ctx, values=None):
    """The caller's last visits ({id, last_visit_ts}), most recent first:
    of the bugs of `values` (ids or aliases), or, when None, the
    RECENT_LIMIT most recent. Bugs the caller cannot see, unknown ids and
    bugs never visited are left out."""
    visible, args = bug_visibility_sql(ctx)
    sql = ("SELECT v.bug_id, v.last_visit_ts FROM bug_user_last_visit v"
           f" JOIN bugs b ON b.id = v.bug_id WHERE v.user_id = ? AND {visible}")
    args = [ctx.caller.id] + args
    limit = ""
    if values is not None:
        bug_ids = _known_ids(ctx, values)
        if not bug_ids:
            return []
        sql += f" AND v.bug_id IN ({placeholders(bug_ids)})"
        args += bug_ids
    else:
        limit = f" LIMIT {RECENT_LIMIT}"
    rows = ctx.conn.execute(sql + " ORDER BY v.last_visit_ts DESC, v.bug_id DESC" + limit,
                            args).fetchall()
    return [_record(row[0], row[1]) for row in rows]


def _known_ids(ctx, values):
    """Bug ids named by `values` (ids or aliases); unknown ones are skipped."""
    bug_ids = []
    for value in values:
        try:
            bug_id = bug_id_of(ctx, value)
        except ServiceError:
            continue
        if bug_id not in bug_ids:
            bug_ids.append(bug_id)
    return bug_ids
