"""The team lead's two summaries beside reports: the most duplicated bugs
(Bugzilla's duplicates.cgi) and the hours worked per bug and person
(summarize_time.cgi). Both count in SQL, and only what the caller may see:
a duplicate counts only when the caller may see it and the bug it
duplicates; hours only on bugs the caller may see, for the members of the
time-tracking group only.
"""

from ..errors import USER_ERROR, ServiceError
from ..store.db import placeholders
from . import visibility


MOST_ROWS = 1000
MOST_BUGS = 1000
# duplicates.cgi's sortby values -> SQL over the answer's columns.
DUPLICATE_ORDER = {"dup_count": "dupes", "delta": "delta", "bug_id": "t.id",
                   "component": "lower(co.name)", "bug_severity": "t.severity",
                   "op_sys": "t.op_sys", "target_milestone": "t.target_milestone",
                   "short_desc": "lower(t.summary)", "bug_status": "t.status",
                   "resolution": "t.resolution", "product": "lower(p.name)"}


def most_duplicated(ctx, products=(), bug_ids=(), since=None, open_only=False,
                    sort="dup_count", reverse=False, limit=20):
    """[{"id", "count", "delta", "product", "component", "severity",
    "op_sys", "target_milestone", "summary", "status", "resolution"}] of
    the bugs with the most duplicates the caller may see, among those it
    may see: `products` (names) and `bug_ids` narrow them, `since` (a
    database time) counts the duplicates marked since then as "delta",
    `open_only` leaves out closed bugs; sorted by `sort` (DUPLICATE_ORDER's
    keys; largest first for counts, as the reference, unless `reverse`).
    Errors: 32000 an unknown sort."""
    if sort not in DUPLICATE_ORDER:
        raise ServiceError(USER_ERROR, f"sortby must be one of {', '.join(DUPLICATE_ORDER)}.")
    dupe_visible, dupe_args = visibility.bug_visibility_sql(ctx, "d", scan=True)
    target_visible, target_args = visibility.bug_visibility_sql(ctx, "t", scan=True)
    where, args = [target_visible], list(target_args)
    if products:
        where.append(f"p.name IN ({placeholders(products)})")
        args += list(products)
    if bug_ids:
        where.append(f"t.id IN ({placeholders(bug_ids)})")
        args += list(bug_ids)
    if open_only:
        where.append("t.status IN (SELECT fv.value FROM field_values fv JOIN fields f"
                     " ON f.id = fv.field_id WHERE f.name = 'bug_status' AND fv.is_open = 1)")
    descending = sort in ("dup_count", "delta")
    direction = "ASC" if descending == bool(reverse) else "DESC"
    sql = (
        "SELECT t.id, counted.dupes, counted.delta, p.name, co.name, t.severity, t.op_sys,"
        " t.target_milestone, t.summary, t.status, t.resolution FROM"
        " (SELECT d.dupe_of AS target, COUNT(*) AS dupes,"
        "  SUM(CASE WHEN EXISTS (SELECT 1 FROM bug_activity a WHERE a.bug_id = d.id"
        "   AND a.field = 'resolution' AND a.added = 'DUPLICATE' AND a.changed_at >= ?)"
        "   THEN 1 ELSE 0 END) AS delta"
        f"  FROM bugs d WHERE d.dupe_of IS NOT NULL AND {dupe_visible} GROUP BY d.dupe_of)"
        " counted JOIN bugs t ON t.id = counted.target"
        " JOIN products p ON p.id = t.product_id JOIN components co ON co.id = t.component_id"
        f" WHERE {' AND '.join(where)}"
        f" ORDER BY {DUPLICATE_ORDER[sort]} {direction}, t.id LIMIT ?")
    rows = ctx.conn.execute(sql, [since or "9999-12-31 23:59:59"] + list(dupe_args) + args
                            + [min(max(int(limit), 1), MOST_ROWS)]).fetchall()
    return [{"id": row[0], "count": row[1], "delta": int(row[2] or 0), "product": row[3],
             "component": row[4], "severity": row[5], "op_sys": row[6],
             "target_milestone": row[7], "summary": row[8], "status": row[9],
             "resolution": row[10]} for row in rows]


def with_dependencies(ctx, bug_ids):
    """`bug_ids` and every bug they depend on, directly or not, that the
    caller may see (at most MOST_BUGS). Errors: 32000 more than that."""
    found, frontier = set(bug_ids), list(bug_ids)
    while frontier:
        batch, frontier = frontier[:500], frontier[500:]
        for (depends_on,) in ctx.conn.execute(
                f"SELECT depends_on FROM dependencies WHERE blocked IN ({placeholders(batch)})",
                batch).fetchall():
            if depends_on not in found:
                found.add(depends_on)
                frontier.append(depends_on)
        if len(found) > MOST_BUGS:
            raise ServiceError(USER_ERROR, f"A time summary covers at most {MOST_BUGS} bugs.")
    return sorted(found)


def hours_worked(ctx, bug_ids, start=None, end=None):
    """[{"bug_id", "summary", "login", "real_name", "hours"}] of the hours
    worked on the bugs `bug_ids` the caller may see, per bug and person,
    between database times `start` and `end` (either may be None), by bug
    then login. Only bugs the caller may see are counted."""
    if not bug_ids:
        return []
    visible, visible_args = visibility.bug_visibility_sql(ctx, "b")
    sql = ("SELECT b.id, b.summary, u.login, u.real_name, SUM(c.work_time) FROM comments c"
           " JOIN bugs b ON b.id = c.bug_id JOIN users u ON u.id = c.author_id"
           f" WHERE b.id IN ({placeholders(bug_ids)}) AND c.work_time <> 0 AND {visible}")
    args = list(bug_ids) + list(visible_args)
    if start:
        sql += " AND c.created_at >= ?"
        args.append(start)
    if end:
        sql += " AND c.created_at <= ?"
        args.append(end)
    sql += " GROUP BY b.id, b.summary, u.login, u.real_name ORDER BY b.id, lower(u.login)"
    return [{"bug_id": row[0], "summary": row[1], "login": row[2], "real_name": row[3],
             "hours": round(float(row[4]), 2)} for row in ctx.conn.execute(sql, args)]
