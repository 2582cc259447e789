"""Flag changes on attachments: the bug flag rules
of flags.FlagEditor, with the attachment flag types of the bug's component,
and one more rule: the requestee of a flag on a private attachment must be
an insider."""

from dataclasses import replace

from ..accounts.caller import load_caller
from ..catalogue import flag_rules
from ..errors import USER_ERROR, ServiceError
from . import visibility
from .flags import FlagEditor


def types_for(conn, product_id, component_id):
    """Attachment flag types of the component (inactive ones included), in list order."""
    return flag_rules.matching_types(conn, product_id, component_id, "attachment")


class AttachmentFlagEditor(FlagEditor):
    """Applies flag change objects to `flags` of an attachment of `bug` (a
    bugs.record.BugRecord). is_private: the attachment's privacy after the call."""

    def __init__(self, ctx, bug, flags, is_private):
        super().__init__(ctx, bug, flags, types_for(ctx.conn, bug.product_id, bug.component_id))
        self.is_private = is_private

    def _requestee(self, flag, flag_type, status, requestee, old_requestee):
        user_id = super()._requestee(flag, flag_type, status, requestee, old_requestee)
        if user_id is not None and user_id != old_requestee and self.is_private:
            other = load_caller(self.ctx.conn, user_id)
            if other is None or not visibility.is_insider(replace(self.ctx, caller=other)):
                raise ServiceError(USER_ERROR, f"'{requestee}' cannot be asked about this "
                                               "attachment: it is private and they are not an "
                                               "insider.")
        return user_id
