"""JSON Schema building blocks of the OpenAPI description: the interface's
objects (Product, User, Comment ...) as named schemas, and small helpers that
docs.py writes its entries with.

Answer schemas state types but require few keys and allow extra ones:
include_fields/exclude_fields may drop any field, and an object may gain
fields later without breaking the description.
"""

INT = {"type": "integer"}
STR = {"type": "string"}
BOOL = {"type": "boolean"}
NUMBER = {"type": "number"}
DATETIME = {"type": "string", "format": "date-time",
            "description": "UTC, YYYY-MM-DDTHH:MM:SSZ"}
NULLABLE_INT = {"type": ["integer", "null"]}
NULLABLE_STR = {"type": ["string", "null"]}
NULLABLE_DATETIME = {"type": ["string", "null"], "format": "date-time",
                     "description": "UTC, YYYY-MM-DDTHH:MM:SSZ, or null"}
ID_OR_NAME = {"type": ["integer", "string"], "description": "an id, or a name"}
DATETIME_IN = {"type": "string",
               "description": "YYYY-MM-DD, YYYY-MM-DD HH:MM:SS, or ISO 8601 with T and an "
                              "optional zone (Z, +0000); no zone means UTC (error 56 otherwise)"}


def described(schema, description):
    """`schema` with a description."""
    return {**schema, "description": description}


def arr(items, description=None):
    """An array of `items`."""
    schema = {"type": "array", "items": items}
    return described(schema, description) if description else schema


def obj(properties=None, required=(), description=None, values=None):
    """An object with `properties`; extra keys allowed (of schema `values`
    when given)."""
    schema = {"type": "object"}
    if properties:
        schema["properties"] = properties
    if required:
        schema["required"] = list(required)
    if values is not None:
        schema["additionalProperties"] = values
    if description:
        schema["description"] = description
    return schema


def ref(name):
    """A reference to the named schema in components/schemas."""
    return {"$ref": f"#/components/schemas/{name}"}


def ints(description):
    return arr(INT, description)


def strs(description):
    return arr(STR, description)


def one_or_many(items, description):
    """A parameter given once or as an array (query keys repeat)."""
    return {"anyOf": [items, arr(items)], "description": description}


def updated(key):
    """The answer of an update call: {key: [{"id", "changes"}]}."""
    return obj({key: arr(ref("Updated"))}, required=[key])


def created(description="The new object's id."):
    """The answer of a create call: {"id"}."""
    return obj({"id": described(INT, description)}, required=["id"])


def wrapped(schema):
    """A scalar answer as sent: {"result": value}."""
    return obj({"result": schema}, required=["result"])


def group_change_object(description):
    return obj({"add": arr(ID_OR_NAME), "remove": arr(ID_OR_NAME), "set": arr(ID_OR_NAME)},
               description=description)


def list_change_object(items, description):
    return obj({"add": arr(items), "remove": arr(items), "set": arr(items)},
               description=description)


_USER_DETAIL = obj({"id": INT, "real_name": STR, "name": STR, "email": STR})
_FLAG = obj({"id": INT, "name": STR, "type_id": INT, "creation_date": DATETIME,
             "modification_date": DATETIME, "status": {"type": "string", "enum": ["?", "+", "-"]},
             "setter": STR, "requestee": STR})
_VERSION = obj({"id": INT, "name": STR, "sort_key": INT, "is_active": BOOL})
_GROUP_CONTROL_VALUE = {"type": "string", "enum": ["NA", "Shown", "Default", "Mandatory"]}
_SEARCH = obj({"id": INT, "name": STR, "query": STR})

# Named schemas: the objects of the interface, with their fields.
SCHEMAS = {
    "Error": obj({
        "error": {"const": True},
        "code": described(INT, "the condition's number, as Bugzilla numbers it"),
        "message": STR,
        "documentation": described(STR, "where the interface is documented"),
    }, required=["error", "code", "message", "documentation"],
        description="Every failure: HTTP 400, 401 or 404 as the code maps (404 for unknown "
                    "objects and calls; 401 for missing rights; 400 otherwise)."),
    "Changes": obj(values=obj({"added": STR, "removed": STR}, required=["added", "removed"]),
                   description="Changed field -> {added, removed} as text; booleans \"1\"/\"0\", "
                               "lists joined with \", \"."),
    "Updated": obj({"id": INT, "changes": ref("Changes")}),
    "ProductFlagType": obj({
        "id": INT, "name": STR, "description": STR, "cc_list": STR, "sort_key": INT,
        "is_active": BOOL, "is_requestable": BOOL, "is_requesteeble": BOOL,
        "is_multiplicable": BOOL, "grant_group": NULLABLE_INT, "request_group": NULLABLE_INT}),
    "Component": obj({
        "id": INT, "name": STR, "description": STR, "default_assigned_to": STR,
        "default_qa_contact": described(STR, "\"\" when none"), "sort_key": INT,
        "is_active": BOOL,
        "flag_types": obj({"bug": arr(ref("ProductFlagType")),
                           "attachment": arr(ref("ProductFlagType"))})}),
    "Version": _VERSION,
    "Milestone": _VERSION,
    "GroupControl": obj({"membercontrol": _GROUP_CONTROL_VALUE,
                         "othercontrol": _GROUP_CONTROL_VALUE, "entry": BOOL, "canedit": BOOL,
                         "editcomponents": BOOL, "editbugs": BOOL, "canconfirm": BOOL}),
    "Product": obj({
        "id": INT, "name": STR, "description": STR, "is_active": BOOL,
        "default_milestone": STR, "has_unconfirmed": BOOL, "classification": STR,
        "components": arr(ref("Component")), "versions": arr(ref("Version")),
        "milestones": arr(ref("Milestone")),
        "group_controls": obj(values=ref("GroupControl"),
                              description="group name -> controls; editcomponents members, "
                                          "on request (include_fields=group_controls)")}),
    "Classification": obj({
        "id": INT, "name": STR, "description": STR, "sort_key": INT,
        "products": arr(obj({"id": INT, "name": STR, "description": STR}))}),
    "Keyword": obj({"id": INT, "name": STR, "description": STR, "is_active": BOOL}),
    "GroupMember": obj({"id": INT, "real_name": STR, "name": STR, "email": STR,
                        "can_login": BOOL, "email_enabled": BOOL, "login_denied_text": STR}),
    "Group": obj({"id": INT, "name": STR, "description": STR, "is_active": BOOL,
                  "is_bug_group": BOOL, "user_regexp": STR,
                  "membership": arr(ref("GroupMember"))}),
    "User": obj({
        "id": INT, "real_name": STR, "name": described(STR, "the login name"), "email": STR,
        "can_login": BOOL, "email_enabled": BOOL, "login_denied_text": STR,
        "groups": arr(obj({"id": INT, "name": STR, "description": STR})),
        "saved_searches": arr(_SEARCH), "saved_reports": arr(_SEARCH)}),
    "EmailSettings": obj({
        "user": STR, "email_enabled": BOOL, "global_watcher": BOOL,
        "flags": obj({"flag_requested": BOOL, "requested_flag": BOOL}),
        "relationships": obj(values=obj(values=BOOL), description=(
            "assignee, reporter, cc, qa_contact (while useqacontact is on), mentioned (@mentioned "
            "in a comment: comment, unconfirmed) -> event -> "
            "wanted; events: added_removed, bug_created, opened_closed, component, "
            "project_management, comment, attachment, attachment_data, keywords, cc, "
            "dependency, other, unconfirmed (also while UNCONFIRMED), changed_by_me (also my "
            "own changes)")),
        "watching": strs("logins this account watches"),
        "watchers": strs("logins watching this account"),
        "ignored_bugs": ints("bugs this account gets no mail about")}),
    "OutboxMessage": obj({
        "id": INT, "channel": {"type": "string", "enum": ["mail", "webhook"]}, "kind": STR,
        "bug_id": NULLABLE_INT, "recipient": NULLABLE_STR, "webhook_id": NULLABLE_INT,
        "state": {"type": "string", "enum": ["pending", "sent", "dropped", "parked"]},
        "attempts": INT, "last_error": STR, "created": DATETIME, "done": NULLABLE_DATETIME,
        "next_attempt": DATETIME}),
    "Webhook": obj({
        "id": INT, "creator": STR, "name": STR, "url": STR,
        "event": described(STR, "comma-separated events"),
        "product": described(STR, "Any for every product"),
        "component": described(STR, "Any for every component"),
        "enabled": BOOL, "errors": described(INT, "calls waiting after a failure, or parked"),
        "pending": described(INT, "calls waiting"), "disabled_reason": STR,
        "last_attempt": NULLABLE_DATETIME, "last_success": NULLABLE_DATETIME,
        "last_error": STR, "previous_secret_valid_until": NULLABLE_DATETIME}),
    "ApiKey": obj({"id": INT, "description": STR, "revoked": BOOL,
                   "last_used": NULLABLE_DATETIME, "created": DATETIME}),
    "FlagType": obj({
        "id": INT, "name": STR, "description": STR,
        "type": {"type": "string", "enum": ["bug", "attachment"]},
        "values": arr({"type": "string", "enum": ["X", "?", "+", "-"]},
                      "what the caller may set"),
        "is_active": BOOL, "is_requesteeble": BOOL, "is_multiplicable": BOOL,
        "inclusions": strs("components of this product the type is limited to"),
        "exclusions": strs("components of this product the type is kept from")}),
    "FieldValue": obj({
        "name": STR, "sort_key": INT, "sortkey": INT, "visibility_values": strs(None),
        "is_active": BOOL, "description": STR, "is_open": BOOL,
        "can_change_to": arr(obj({"name": STR, "comment_required": BOOL}))}),
    "BugField": obj({
        "id": INT, "name": STR, "display_name": STR,
        "type": described(INT, "0 plain, 1 free text, 2 single select, 3 multi select, "
                               "4 large text, 5 date-time, 6 bug id, 7 bug URLs, 8 keywords, "
                               "9 date, 10 integer"),
        "is_custom": BOOL, "is_mandatory": BOOL, "is_on_bug_entry": BOOL,
        "visibility_field": NULLABLE_STR, "visibility_values": strs(None),
        "value_field": NULLABLE_STR, "values": arr(ref("FieldValue"))}),
    "Comment": obj({
        "id": INT, "bug_id": INT, "attachment_id": NULLABLE_INT, "count": INT, "text": STR,
        "creator": STR, "time": DATETIME, "creation_time": DATETIME, "is_private": BOOL,
        "is_markdown": described(BOOL, "the text is Markdown (bugzilla.mozilla.org's field)"),
        "edits": described(INT, "how many times the text was edited"),
        "tags": strs(None)}),
    "LastVisit": obj({"id": described(INT, "the bug id"), "last_visit_ts": DATETIME}),
    "UserDetail": _USER_DETAIL,
    "Flag": _FLAG,
    "FlagChange": obj({
        "status": {"type": "string", "enum": ["?", "+", "-", "X"]}, "id": INT, "type_id": INT,
        "name": STR, "requestee": STR, "new": BOOL}, required=["status"],
        description="One flag to set: status ?, +, - or X (X removes it); the flag by id, "
                    "else its type by type_id or name; requestee only with ?; new forces "
                    "an additional flag."),
    "Bug": obj({
        "id": INT, "alias": strs(None), "summary": STR, "status": STR, "resolution": STR,
        "is_open": BOOL, "is_confirmed": BOOL, "dupe_of": NULLABLE_INT, "product": STR,
        "component": STR, "classification": STR, "version": STR, "target_milestone": STR,
        "platform": STR, "op_sys": STR, "priority": STR, "severity": STR, "url": STR,
        "whiteboard": STR, "keywords": strs(None), "blocks": arr(INT), "depends_on": arr(INT),
        "cc": strs(None), "cc_detail": arr(_USER_DETAIL), "assigned_to": STR,
        "assigned_to_detail": _USER_DETAIL, "creator": STR, "creator_detail": _USER_DETAIL,
        "qa_contact": STR, "qa_contact_detail": _USER_DETAIL, "groups": strs(None),
        "flags": arr(_FLAG), "see_also": strs(None), "creation_time": DATETIME,
        "last_change_time": DATETIME, "deadline": NULLABLE_STR,
        "is_cc_accessible": BOOL, "is_creator_accessible": BOOL,
        "estimated_time": NUMBER, "remaining_time": NUMBER, "actual_time": NUMBER,
        "update_token": STR, "tags": strs(None),
        "duplicates": ints("visible bugs marked duplicates of this one (extra field)")},
        description="Custom fields (cf_*) come as extra keys."),
    "Attachment": obj({
        "id": INT, "bug_id": INT, "file_name": STR, "summary": STR, "content_type": STR,
        "is_private": BOOL, "is_obsolete": BOOL, "is_patch": BOOL, "creator": STR,
        "creation_time": DATETIME, "last_change_time": DATETIME, "size": INT,
        "data": {"type": "string", "contentEncoding": "base64"}, "flags": arr(_FLAG)}),
}
