"""Who may change what on a bug: the reference's field permissions (editbugs
members anything, assignee and QA contact most fields, the reporter fewer)."""

from ..catalogue import bug_fields
from ..catalogue.group_control import in_group_for_product
from ..errors import ILLEGAL_CHANGE, PRODUCT_EDIT_DENIED, ServiceError
from ..store.db import placeholders
from . import visibility


# The time-tracking fields, by the names of their changes and history.
TIME_FIELDS = tuple(field.history for field in bug_fields.STANDARD
                    if field.timetracking and field.history)
# Fields the reporter may not change (unless also assignee or QA contact).
_NOT_FOR_REPORTER = ("assigned_to", "qa_contact", "target_milestone", "is_confirmed")


def product_edit_sql(ctx, product_id_sql):
    """SQL condition (and its arguments, a new list) true when the caller is
    in every group marked `canedit` for the product whose id is the SQL
    expression `product_id_sql` (a placeholder or a column): what
    can_edit_product answers, for a query that reads more at once."""
    groups = sorted(ctx.caller.group_ids)
    condition = f" AND gc.group_id NOT IN ({placeholders(groups)})" if groups else ""
    return (f"NOT EXISTS (SELECT 1 FROM group_controls gc WHERE gc.product_id = {product_id_sql}"
            f" AND gc.canedit <> 0{condition})", groups)


def can_edit_product(ctx, product_id):
    """True when the caller is in every group marked `canedit` for the product."""
    condition, args = product_edit_sql(ctx, "?")
    return bool(ctx.conn.execute(f"SELECT {condition}", [product_id] + args).fetchone()[0])


def product_edit_denied(product_name):
    """The error 109 for a caller who may not edit bugs of the product."""
    return ServiceError(PRODUCT_EDIT_DENIED, f"You are not allowed to edit bugs in the "
                                             f"product '{product_name}'.")


def require_product_edit(ctx, product_id, product_name):
    """Errors: 109 when the caller may not edit bugs of the product."""
    if not can_edit_product(ctx, product_id):
        raise product_edit_denied(product_name)


def has_editbugs(ctx, product_id):
    """True when the caller holds editbugs on product `product_id`: a
    member of editbugs, or of a group whose control of the product gives it."""
    return in_group_for_product(ctx, "editbugs", product_id)


def can_confirm(ctx, product_id):
    """True when the caller may confirm bugs of product `product_id`
    (editbugs or canconfirm, each globally or through the product's controls)."""
    return (has_editbugs(ctx, product_id)
            or in_group_for_product(ctx, "canconfirm", product_id))


def _same(field, old, new):
    if isinstance(old, (list, tuple, set)) or isinstance(new, (list, tuple, set)):
        return sorted(map(str, old or [])) == sorted(map(str, new or []))
    if field in TIME_FIELDS and field != "deadline":
        try:
            return float(old or 0) == float(new or 0)
        except (TypeError, ValueError):
            return False
    old = "" if old is None else str(old).strip()
    new = "" if new is None else str(new).strip()
    return old == new


class FieldRights:
    """The caller's rights on one bug. `old` is the bug as stored; `bug` its
    state being changed (the assignee or QA contact may already differ)."""

    def __init__(self, ctx, old, is_open):
        self.ctx = ctx
        self.old = old
        self.is_open = is_open   # function: status name -> bool

    def can_change(self, field, old, new, bug):
        """True when the caller may change `field` (API name) from `old` to `new`."""
        if _same(field, old, new):
            return True
        if field in ("comment", "flagtypes.name"):
            return True
        ctx, caller = self.ctx, self.ctx.caller
        if field in TIME_FIELDS and not visibility.is_timetracker(ctx):
            return False
        if has_editbugs(ctx, self.old.product_id):
            return True
        if self._changes_confirmation(field, new):
            return in_group_for_product(ctx, "canconfirm", self.old.product_id)
        if caller.id in (bug.assigned_to, self.old.assigned_to):
            return True
        if ctx.param_is_on("useqacontact") and caller.id in (bug.qa_contact, self.old.qa_contact):
            return True
        if field in _NOT_FOR_REPORTER:
            return False
        if field == "priority" and not ctx.param_is_on("letsubmitterchoosepriority"):
            return False
        if field == "status" and self.is_open(old) and self.is_open(new):
            return False
        return caller.id == self.old.reporter

    def _changes_confirmation(self, field, new):
        if field == "is_confirmed":
            return True
        if field == "status":
            if self.old.is_confirmed:
                return new == "UNCONFIRMED"
            return self.is_open(new) and new != "UNCONFIRMED"
        return False

    def check(self, field, old, new, bug):
        """Errors: 115 when the caller may not make the change."""
        if not self.can_change(field, old, new, bug):
            raise ServiceError(ILLEGAL_CHANGE, f"You tried to change the '{field}' field, but "
                                               "you are not allowed to.")

    def can_edit(self, bug):
        """The reference's `canedit`: editbugs, assignee or QA contact (may
        remove other people from the CC list)."""
        caller = self.ctx.caller
        return (has_editbugs(self.ctx, self.old.product_id)
                or caller.id in (bug.assigned_to, self.old.assigned_to)
                or (self.ctx.param_is_on("useqacontact")
                    and caller.id in (bug.qa_contact, self.old.qa_contact)))
