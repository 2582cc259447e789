"""The sanity check (Bugzilla's sanitycheck.cgi): read-only checks of what
the database should hold and may not after an import, a hand edit or a
delivery worker that stopped, each with a repair where one is safe.
Running the checks changes nothing; a repair changes only what its check
found, in the one transaction of its call, so it is safe on a live
database. References between rows (flags and their types, dependencies,
CC lists) are foreign keys both engines enforce, so unlike Bugzilla's on
MySQL there is no check for dangling ones; bugsvc keeps no cached counts
(the search index follows the bugs by triggers), so there is none to
rebuild.
"""

import re
from dataclasses import dataclass
from datetime import timedelta
from typing import Callable

from .. import dates
from ..accounts.membership import GRANT_REGEXP, refresh_for_group
from ..catalogue import bug_fields
from ..errors import OBJECT_DOES_NOT_EXIST, ServiceError
from ..store import audit, outbox


# At most this many examples of what a check found.
SAMPLES = 20
# An event not yet turned into messages this long after it was written
# means no delivery worker runs.
STUCK_AFTER = timedelta(hours=1)


@dataclass(frozen=True)
class Check:
    """One check: name, title (what it looks for), find(ctx) -> (count,
    samples: bug ids or other ids), the kind of ids the samples are
    ("bug", "flag", "message", "group"), and repair(ctx) -> how many rows
    it fixed (None: nothing safe to do automatically; `advice` says what
    to do by hand)."""
    name: str
    title: str
    find: Callable
    samples_are: str
    repair: Callable | None = None
    advice: str = ""


def _count_and_samples(ctx, sql, args=()):
    """(count, first ids) of the ids `sql` selects (one column)."""
    ids = [row[0] for row in ctx.conn.execute(sql, args)]
    return len(ids), ids[:SAMPLES]


def _components_of_other_products(ctx):
    return _count_and_samples(ctx, "SELECT b.id FROM bugs b JOIN components c"
                                   " ON c.id = b.component_id WHERE c.product_id <> b.product_id"
                                   " ORDER BY b.id")


def _unknown_values(ctx):
    ids = set()
    for field, column in ((f.name, f.column) for f in bug_fields.SELECTS):
        ids.update(row[0] for row in ctx.conn.execute(
            f"SELECT b.id FROM bugs b WHERE NOT EXISTS (SELECT 1 FROM field_values v"
            f" JOIN fields f ON f.id = v.field_id WHERE f.name = ? AND v.value = b.{column})",
            (field,)))
    ordered = sorted(ids)
    return len(ordered), ordered[:SAMPLES]


def _unknown_versions_or_milestones(ctx):
    return _count_and_samples(
        ctx, "SELECT b.id FROM bugs b WHERE NOT EXISTS (SELECT 1 FROM versions v"
             " WHERE v.product_id = b.product_id AND v.name = b.version)"
             " OR NOT EXISTS (SELECT 1 FROM milestones m WHERE m.product_id = b.product_id"
             " AND m.name = b.target_milestone) ORDER BY b.id")


def _regexp_mismatches(ctx):
    """Ids of the groups whose regexp memberships differ from what their
    regexp says."""
    wrong = []
    users = ctx.conn.execute("SELECT id, login FROM users").fetchall()
    for group_id, pattern in ctx.conn.execute("SELECT id, user_regexp FROM groups"
                                              " ORDER BY id").fetchall():
        stored = {row[0] for row in ctx.conn.execute(
            "SELECT user_id FROM user_groups WHERE group_id = ? AND grant_type = ?",
            (group_id, GRANT_REGEXP))}
        compiled = re.compile(pattern, re.IGNORECASE) if pattern else None
        wanted = {user_id for user_id, login in users if compiled and compiled.search(login)}
        if stored != wanted:
            wrong.append(group_id)
    return wrong


def _regexp_groups(ctx):
    wrong = _regexp_mismatches(ctx)
    return len(wrong), wrong[:SAMPLES]


def _rederive_regexp_groups(ctx):
    wrong = _regexp_mismatches(ctx)
    for group_id in wrong:
        refresh_for_group(ctx.conn, group_id)
    return len(wrong)


def _parked_mail(ctx):
    return _count_and_samples(ctx, "SELECT id FROM outbox_messages WHERE state = ?"
                                   " ORDER BY id", (outbox.PARKED,))


def _send_parked_mail_again(ctx):
    ids = [row[0] for row in ctx.conn.execute("SELECT id FROM outbox_messages WHERE state = ?"
                                              " ORDER BY id", (outbox.PARKED,))]
    return len(outbox.resend(ctx.conn, ids, ctx.now))


def _stuck_events(ctx):
    return _count_and_samples(ctx, "SELECT bug_id FROM outbox_events WHERE expanded_at IS NULL"
                                   " AND created_at < ? ORDER BY id",
                              (dates.to_db(ctx.now - STUCK_AFTER),))


def _open_bugs_where_none_may_be_filed(ctx):
    return _count_and_samples(
        ctx, "SELECT b.id FROM bugs b JOIN products p ON p.id = b.product_id"
             " JOIN components c ON c.id = b.component_id"
             " JOIN field_values v ON v.value = b.status"
             " JOIN fields f ON f.id = v.field_id AND f.name = 'bug_status'"
             " WHERE v.is_open = 1 AND (p.is_active = 0 OR c.is_active = 0) ORDER BY b.id")


CHECKS = (
    Check("component_product", "Bugs whose component belongs to another product",
          _components_of_other_products, "bug",
          advice="Move each bug to a component of its product on its page."),
    Check("unknown_values", "Bugs with a status, resolution, priority, severity, platform "
                            "or OS that is not a value of its field",
          _unknown_values, "bug",
          advice="Add the value on the field values page, or change the bugs."),
    Check("unknown_versions", "Bugs whose version or target milestone is not one of their "
                              "product's", _unknown_versions_or_milestones, "bug",
          advice="Add the version or milestone to the product, or change the bugs."),
    Check("regexp_groups", "Groups whose members by regular expression are out of date",
          _regexp_groups, "group", repair=_rederive_regexp_groups),
    Check("parked_mail", "Mail and webhook calls that failed too often and wait for an "
                         "administrator", _parked_mail, "message",
          repair=_send_parked_mail_again),
    Check("stuck_events", "Changes not turned into mail an hour after they were made "
                          "(no delivery worker runs?)", _stuck_events, "bug",
          advice="Start the delivery worker (bugsvc serve runs one)."),
    Check("inactive_products", "Open bugs in a product or component closed for new bugs",
          _open_bugs_where_none_may_be_filed, "bug",
          advice="Nothing is wrong; close or move the bugs if the product is retired."),
)
BY_NAME = {check.name: check for check in CHECKS}


def run(ctx):
    """Every check's findings, changing nothing: [{name, title, count,
    samples, samples_are, repairable, advice}]."""
    results = []
    for check in CHECKS:
        count, samples = check.find(ctx)
        results.append({"name": check.name, "title": check.title, "count": count,
                        "samples": samples, "samples_are": check.samples_are,
                        "repairable": check.repair is not None, "advice": check.advice})
    return results


def repair(ctx, name):
    """Repair what check `name` finds; returns how many rows it fixed.
    Audited as class SanityCheck (field: the check). Errors: 51 unknown
    check or one without a repair."""
    check = BY_NAME.get(name) if isinstance(name, str) else None
    if check is None or check.repair is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no sanity check with a repair "
                                                  f"called '{name}'.")
    fixed = check.repair(ctx)
    if fixed:
        audit.record(ctx, "SanityCheck", 0, check.name, "", str(fixed), name=check.name)
    return fixed
