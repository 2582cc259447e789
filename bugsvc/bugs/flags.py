"""Flag changes on bugs: finding the flag or type a
change names, checking it with the type's rules and the caller's groups,
and the `flagtypes.name` text of history. Written for bug-level flags; the
same rules hold for attachment flags (pass that attachment's types and
flags)."""

from dataclasses import replace

from ..accounts.caller import load_caller
from ..accounts.visibility import can_see_user
from ..catalogue import catalog, flag_rules
from ..errors import (
    FLAG_NOT_UNIQUE,
    FLAG_REQUESTEE_DISABLED,
    FLAG_STATUS_INVALID,
    FLAG_TYPE_INACTIVE,
    FLAG_TYPE_NOT_UNIQUE,
    FLAG_UPDATE_DENIED,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    USER_ERROR,
    ServiceError,
)
from . import visibility


STATUSES = ("X", "?", "+", "-")


def types_for(conn, product_id, component_id):
    """Flag types for bugs of the component (inactive ones included), in list order."""
    return flag_rules.matching_types(conn, product_id, component_id, "bug")


def user_can_see_bug(ctx, user_id, bug_id):
    """True when account `user_id` may see bug `bug_id` as stored."""
    other = load_caller(ctx.conn, user_id)
    return other is not None and bool(visibility.visible_bug_ids(replace(ctx, caller=other),
                                                                 [bug_id]))


class FlagEditor:
    """Applies flag change objects to `flags` (a list of flag dicts, changed
    in place) of bug `bug` (a BugRecord already stored, or being updated)."""

    def __init__(self, ctx, bug, flags, types):
        self.ctx = ctx
        self.bug = bug
        self.flags = flags
        self.types = types
        self.types_by_id = {t["id"]: t for t in types}

    def apply(self, changes):
        """Apply a list of flag change objects.

        Errors: 50 no id/type_id/name; 51 unknown flag, type, or requestee;
        129 bad status or '?' on a non-requestable type; 130 not allowed by
        the type's grant/request group; 131 requestee on a type that takes
        none; 132 several flags match; 133 several types match; 134 new
        flag of an inactive type; 32000 second flag of a non-multiplicable
        type, requestee disabled or unable to see the bug.
        """
        if changes is None:
            return
        if not isinstance(changes, list):
            changes = [changes]
        for change in changes:
            if not isinstance(change, dict):
                raise ServiceError(USER_ERROR, "Each flag change must be an object.")
            self._apply_one(change)

    def _apply_one(self, change):
        status = change.get("status")
        flag, flag_type = self._target(change)
        if flag is None:
            if status == "X":
                return   # removing a flag that does not exist: nothing to do
            if not flag_type["is_active"]:
                raise ServiceError(FLAG_TYPE_INACTIVE, f"The flag type '{flag_type['name']}' is "
                                                       "inactive and cannot take new flags.")
            if not flag_type["is_multiplicable"] and any(
                    f["type_id"] == flag_type["id"] for f in self.flags):
                raise ServiceError(USER_ERROR, f"The flag type '{flag_type['name']}' is not "
                                               "multiplicable: this bug already has one.")
            flag = {"id": None, "type_id": flag_type["id"], "status": "", "setter_id": None,
                    "requestee_id": None, "created_at": None, "modified_at": None}
            self.flags.append(flag)
        self._set(flag, flag_type, status, change.get("requestee"))

    def _target(self, change):
        """(existing flag or None, its type) named by the change."""
        flag_id, type_id, name = change.get("id"), change.get("type_id"), change.get("name")
        new = bool(change.get("new"))
        if flag_id not in (None, ""):
            found = [f for f in self.flags if f["id"] is not None and str(f["id"]) == str(flag_id)]
            if not found:
                raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no flag with the id "
                                                          f"'{flag_id}' on this bug.")
            return found[0], self._type_of(found[0])
        if type_id not in (None, ""):
            flag_type = self.types_by_id.get(_int(type_id))
            if flag_type is None:
                raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no flag type with the id "
                                                          f"'{type_id}' for this bug.")
            return self._existing(flag_type, new, str(type_id)), flag_type
        if name not in (None, ""):
            matches = [t for t in self.types if t["name"] == str(name)]
            if not matches:
                raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no flag type named "
                                                          f"'{name}' for this bug.")
            if len(matches) > 1:
                raise ServiceError(FLAG_TYPE_NOT_UNIQUE, f"Several flag types are named '{name}'; "
                                                         "name the one you mean by type_id.")
            return self._existing(matches[0], new, str(name), by_name=True), matches[0]
        raise ServiceError(OBJECT_NOT_SPECIFIED, "A flag change needs an id, a type_id or a name.")

    def _existing(self, flag_type, new, label, by_name=False):
        if new:
            return None
        if by_name:
            names = {t["id"] for t in self.types if t["name"] == flag_type["name"]}
            found = [f for f in self.flags if f["type_id"] in names]
        else:
            found = [f for f in self.flags if f["type_id"] == flag_type["id"]]
        if len(found) > 1:
            raise ServiceError(FLAG_NOT_UNIQUE, f"This bug has several '{label}' flags; name "
                                                "the one you mean by its id, or add one with new.")
        return found[0] if found else None

    def _type_of(self, flag):
        flag_type = self.types_by_id.get(flag["type_id"])
        if flag_type is None:
            flag_type = flag_rules.load_types(self.ctx.conn, [flag["type_id"]])[0]
        return flag_type

    def _set(self, flag, flag_type, status, requestee):
        ctx = self.ctx
        old_status, old_requestee = flag["status"], flag["requestee_id"]
        if status not in STATUSES or (status == "?" and old_status != "?"
                                      and not flag_type["is_requestable"]):
            raise ServiceError(FLAG_STATUS_INVALID, f"'{status}' is not a valid status for the "
                                                    f"flag '{flag_type['name']}'.")
        flag["status"] = status
        flag["requestee_id"] = self._requestee(flag, flag_type, status, requestee, old_requestee)
        if status != old_status or flag["requestee_id"] != old_requestee:
            allowed = (status == "X"
                       or (status == "?" and flag_rules.can_request_flag(ctx.caller, flag_type))
                       or flag_rules.can_set_flag(ctx.caller, flag_type))
            if not allowed:
                raise ServiceError(FLAG_UPDATE_DENIED, f"You tried to set the flag "
                                                       f"'{flag_type['name']}' to '{status}', but "
                                                       "you are not allowed to.")
            if not (status == "?" and old_status == "?"):
                flag["setter_id"] = ctx.caller.id
            flag["modified_at"] = None   # marks it changed; store.py sets the time
        if status == "X":
            self.flags.remove(flag)

    def _requestee(self, flag, flag_type, status, requestee, old_requestee):
        if status != "?" or requestee in (None, ""):
            return None
        account = catalog.user_by_login(self.ctx.conn, requestee)
        if account is None or not can_see_user(self.ctx, account["id"]):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user account '{requestee}'.")
        if account["id"] == old_requestee:
            return old_requestee
        if not flag_type["is_requesteeble"]:
            raise ServiceError(FLAG_REQUESTEE_DISABLED, f"The flag type '{flag_type['name']}' "
                                                        "does not allow asking a particular "
                                                        "person.")
        if account["disabled_text"]:
            raise ServiceError(USER_ERROR, f"'{account['login']}' cannot be asked: the account "
                                           "is disabled.")
        bug = self.bug
        involved = (account["id"] in (bug.assigned_to, bug.qa_contact)
                    or (bug.is_cc_accessible and account["id"] in bug.cc))
        if not involved and not user_can_see_bug(self.ctx, account["id"], bug.id):
            raise ServiceError(USER_ERROR, f"'{account['login']}' cannot be asked about this "
                                           "bug: they cannot see it.")
        return account["id"]


def _int(value):
    try:
        return int(value)
    except (TypeError, ValueError):
        return None


def retarget(conn, flags, types):
    """After a move to another product/component: keep each flag whose type
    still applies, move it to an active type of the same name that applies,
    or drop it. Changes `flags` in place."""
    type_ids = {t["id"] for t in types}
    known = {t["id"]: t for t in flag_rules.load_types(conn, {f["type_id"] for f in flags})}
    for flag in list(flags):
        if flag["type_id"] in type_ids:
            continue
        name = known[flag["type_id"]]["name"] if flag["type_id"] in known else None
        twins = [t for t in types if t["name"] == name and t["is_active"]]
        if twins:
            flag["type_id"] = twins[0]["id"]
        else:
            flags.remove(flag)


def summaries(conn, flags):
    """The `flagtypes.name` text of each flag: name+status, and
    (requestee login) for requests, in list order."""
    if not flags:
        return []
    types = {t["id"]: t for t in flag_rules.load_types(conn, {f["type_id"] for f in flags})}
    logins = catalog.logins_of(conn, [f["requestee_id"] for f in flags])
    ordered = sorted(flags, key=lambda f: (types[f["type_id"]]["sort_key"],
                                           types[f["type_id"]]["name"].lower(), f["type_id"],
                                           f["id"] is None, f["id"] or 0))
    result = []
    for flag in ordered:
        text = types[flag["type_id"]]["name"] + flag["status"]
        if flag["requestee_id"] is not None:
            text += f"({logins[flag['requestee_id']]})"
        result.append(text)
    return result
