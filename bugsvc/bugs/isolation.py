"""The parameter strict_isolation: while it is on, nobody is put on a bug of a
product they may not edit, and nobody links bugs they may not edit.

What it covers, like the reference:
- people: the assignee, the QA contact (while useqacontact is on) and the
  CC list must be able to edit bugs of the bug's product (be in every group
  with a `canedit` control on it). On a new bug every one of them is
  checked, and must also see the product (no Mandatory group they are
  outside of); on an update only the people added (CC) or changed
  (assignee, QA contact), so that a bug that already has such people can
  still be commented on and changed otherwise; when the update moves the
  bug to another product, those people must also see the new product.
  Error 504 names them.
- dependencies: every bug added to or removed from depends_on/blocks (on
  create: every bug named) must be in a product the caller may edit, even
  when the caller can see it. Error 32000.

Flag requestees are not covered: the reference does not check them either
(a requestee must only be able to see the bug).
"""

from dataclasses import replace

from ..accounts.caller import load_caller
from ..accounts.visibility import can_see_user
from ..catalogue import bug_fields, group_control
from ..errors import INVALID_USERNAME, USER_ERROR, ServiceError
from ..store.db import placeholders
from .permissions import can_edit_product


def is_on(ctx):
    return ctx.param_is_on("strict_isolation")


def check_people(ctx, product, user_ids, bug_id=None, must_see=False):
    """Errors: 504 when one of `user_ids` may not edit bugs of `product`
    (a product dict), or, with `must_see`, may not see it. bug_id: the bug
    being changed (None: a bug being filed)."""
    if not is_on(ctx):
        return
    refused, unnamed = [], 0
    for user_id in sorted({u for u in user_ids if u is not None}):
        other = load_caller(ctx.conn, user_id)
        as_other = replace(ctx, caller=other)
        if not can_edit_product(as_other, product["id"]) or (
                must_see and not group_control.can_see_product(as_other, product["id"])):
            # An account the caller may not see (a component's default CC or
            # assignee, with usevisibilitygroups on) is counted, not named.
            if can_see_user(ctx, user_id):
                refused.append(other.login)
            else:
                unnamed += 1
    total = len(refused) + unnamed
    if not total:
        return
    others = f"{unnamed} {'other ' if refused else ''}account{'s' if unnamed > 1 else ''}"
    if refused:
        who = f"User{'s' if len(refused) > 1 else ''} '{', '.join(refused)}'"
        who += f" and {others}" if unnamed else ""
    else:
        who = others[0].upper() + others[1:]
    who += " is" if total == 1 else " are"
    where = (f"for bug '{bug_id}'" if bug_id is not None
             else "and may not be included on a new bug")
    raise ServiceError(INVALID_USERNAME, f"{who} not able to edit the '{product['name']}' "
                                         f"product {where}.")


def check_dependencies(ctx, field, bug_ids):
    """Errors: 32000 when one of `bug_ids` (bugs added to or removed from
    `field`, depends_on or blocks) is in a product the caller may not edit."""
    if not is_on(ctx) or not bug_ids:
        return
    ids = sorted(set(bug_ids))
    product_ids = {row[0] for row in ctx.conn.execute(
        f"SELECT DISTINCT product_id FROM bugs WHERE id IN ({placeholders(ids)})", ids)}
    label = bug_fields.BY_API_NAME[field].label
    for product_id in sorted(product_ids):
        if not can_edit_product(ctx, product_id):
            raise ServiceError(USER_ERROR, f"You tried to change the {label} field but only a "
                                           "user allowed to edit both related bugs may change "
                                           "that field.")
