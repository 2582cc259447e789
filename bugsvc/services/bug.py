"""Bugs: get, create, update, history, possible duplicates. The behaviour
lives in bugsvc.bugs."""

from .. import dates
from ..bugs import create as bug_create, tags, update as bug_update, view
from ..bugs.duplicates import MAX_RESULTS, possible_duplicates as find_duplicates
from ..bugs.edit_options import edit_options as bug_edit_options
from ..bugs.groups import of_bugs as bug_groups_of, offered_for_new_bug
from ..bugs.history import histories
from ..bugs.lookup import MAX_BUG_ID, numeric_bug_id, visible_bug_id
from ..bugs.requests import (
    QUEUE_LIMIT,
    QUEUE_STATUSES,
    REQUEST_LIMIT,
    queued_type_names,
    request_queue as queue_of_requests,
    requests_of_caller,
)
from ..bugs.values import enterable_product
from ..call import standing
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, USER_ERROR, ServiceError, require_login


def get(ctx, params):
    """Bugs by id or alias.

    params: ids (array of ids/aliases, in order), permissive (boolean: skip
    failing ids and report them in faults), include_fields/exclude_fields.
    Returns {"bugs": [Bug], "faults": [{id, faultString, faultCode}]};
    update_token is added for logged-in callers; the extra fields `tags`
    and `duplicates` (the visible bugs marked duplicates of the bug) only
    when include_fields names them.
    Errors: 50 no ids; 100 malformed id or unknown alias; 101 unknown id;
    102 bug not visible.
    """
    p = Params(params)
    values = p.list("ids")
    if not values:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the ids of the bugs to get.")
    permissive = p.bool("permissive")
    numbers = [numeric_bug_id(value) for value in values]
    if all(number is not None and number < MAX_BUG_ID for number in numbers):
        # Bugs named by number, read with their visibility in one query (a
        # round trip less on PostgreSQL): when the caller sees every one,
        # that is the answer, and nothing else is read for it (alone); else
        # each is looked up in turn below, for its error, and read again.
        bugs = view.bug_objects(ctx, numbers, with_update_token=True, visible_only=True,
                                alone=True)
        if len(bugs) == len(numbers):
            # Kept objects, seen by the caller at the generations read:
            # the same answer while they stand (call/standing.py).
            standing.note(ctx)
            return {"bugs": bugs, "faults": []}
    bug_ids, faults = [], []
    for value in values:
        try:
            bug_ids.append(visible_bug_id(ctx, value))
        except ServiceError as error:
            if not permissive:
                raise
            faults.append({"id": value, "faultString": error.message, "faultCode": error.code})
    return {"bugs": view.bug_objects(ctx, bug_ids, with_update_token=True), "faults": faults}


def create(ctx, params):
    """File a bug; the caller is its reporter.

    params: product, component, summary, version (required); description,
    comment_is_private, is_markdown (the description is Markdown; also
    comment_is_markdown), op_sys, platform, priority, severity, status,
    resolution, alias, assigned_to, qa_contact, cc, groups, keywords,
    depends_on, blocks, see_also, target_milestone, url, whiteboard,
    deadline, estimated_time, is_cc_accessible, is_creator_accessible,
    flags, cf_*. op_sys, platform, priority and severity default to the
    parameters defaultopsys, defaultplatform, defaultpriority and
    defaultseverity.
    Returns {"id"}.
    Errors: 410 logged out; 50 product/version/op_sys/platform missing;
    51 unknown component, version, milestone, value, keyword, user, flag
    type; 53 unknown parameter; 56 bad deadline; 103 bad alias; 104 summary
    too long; 105 component missing; 106 product not enterable; 107 summary
    missing; 112 bad See Also; 113 private description by a non-insider;
    114 description too long; 116 dependency loop; 120 group not allowed;
    121/122 resolution; 123 status not allowed; 129-134 flags; 504 unknown
    cc, or (strict_isolation) an assignee, QA contact or cc who may not
    edit or see the product; 32000 inactive value, mandatory custom field,
    flag rules, (strict_isolation) a dependency on a bug of a product the
    caller may not edit. The whiteboard, See Also and target milestone are
    taken whatever usestatuswhiteboard, use_see_also and
    letsubmitterchoosemilestone say (those only hide the fields on the web
    pages, as in the reference).
    """
    require_login(ctx)
    return {"id": bug_create.create(ctx, params)}


def update(ctx, params):
    """Change bugs (path value or body `ids`).

    params: ids, and any of these fields: summary,
    platform, severity, priority, op_sys, version, component,
    target_milestone, url, whiteboard, deadline, product, status,
    resolution, dupe_of, assigned_to, qa_contact, reset_assigned_to,
    reset_qa_contact, is_cc_accessible, is_creator_accessible,
    estimated_time, remaining_time, work_time, comment {body, is_private, is_markdown},
    comment_is_private {id: bool}, alias, blocks, depends_on, cc, groups,
    keywords, see_also, flags, cf_*; update_token (from Bug.get: the
    change is refused when the bug changed since, a mid-air collision).
    Other keys are ignored.
    Returns {"bugs": [{id, alias, last_change_time, changes}]}.
    Errors: 410; 50 no ids or empty assignee; 51 unknown value; 100/101/102
    bad, unknown or invisible bug; 103 alias; 104 summary too long; 106
    product not enterable; 109 product not editable; 112 See Also; 113 not
    insider; 115 change not permitted; 116 dependency loop; 117 comment not
    on the bug; 118 duplicate loop; 119 DUPLICATE without dupe_of; 120
    group; 121 resolution missing; 122 resolution on an open bug; 123
    status transition; 129-134 flags; 504 (strict_isolation) an added cc,
    new assignee or new QA contact who may not edit the product (or see
    it, when the bug moves there); 32000 comment required, milestone
    required, open dependencies, cc removal denied, several duplicates,
    inactive value, (strict_isolation) a
    dependency added or removed on a bug of a product the caller may not
    edit; 32000 an update_token that is not the bug's current one, or one
    given for several bugs.
    """
    require_login(ctx)
    return {"bugs": bug_update.update(ctx, params)}


def history(ctx, params):
    """The history of bugs.

    params: ids (ids/aliases), new_since (datetime: only later changes).
    Returns {"bugs": [{id, alias, history: [{when, who, changes:
    [{field_name, removed, added, attachment_id?}]}]}]}.
    Errors: 50 no ids; 56 bad new_since; 100/101/102.
    """
    p = Params(params)
    values = p.list("ids")
    if not values:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the ids of the bugs.")
    new_since = None
    if p.get("new_since") not in (None, ""):
        new_since = dates.parse_datetime(p.str("new_since"), "new_since")
    return {"bugs": histories(ctx, values, new_since)}


def possible_duplicates(ctx, params):
    """Bugs whose summaries resemble a new summary.

    params: summary (required), products (array of product names the
    caller can file bugs in; none = all), limit (default and maximum 25).
    Returns {"bugs": [Bug]} (duplicates replaced by the bug they duplicate).
    Errors: 50 no summary; 52 non-numeric limit; 106 product not enterable.
    """
    p = Params(params)
    summary = p.str("summary", "")
    if not summary.strip():
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify a summary.")
    product_ids = [enterable_product(ctx, name)["id"] for name in p.str_list("products")]
    limit = p.int("limit", MAX_RESULTS) or MAX_RESULTS
    limit = min(max(limit, 1), MAX_RESULTS)
    bug_ids = find_duplicates(ctx, summary, product_ids, limit)
    return {"bugs": view.bug_objects(ctx, bug_ids, with_update_token=True)}


def update_see_also(ctx, params):
    """Add and remove See Also links (JSON-RPC/XML-RPC only, as the reference).

    params: ids, add (array of URLs, or bug numbers or aliases of this
    installation), remove (array of URLs or bug numbers/aliases; unknown
    ones are ignored); removals are applied first. Returns {"changes":
    {bug id: {"see_also": {"added": [...], "removed": [...]}}}}.
    Errors: 410; 50 no ids, or neither add nor remove; 100 a word that is
    no visible bug's number or alias; 101/102; 109; 112 invalid URL; 115
    change not permitted.
    """
    require_login(ctx)
    p = Params(params)
    if not p.has("add") and not p.has("remove"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify 'add' or 'remove'.")
    changes = bug_update.change_see_also(ctx, p.list("ids"), p.list("remove"), p.list("add"))
    return {"changes": {str(bug_id): {"see_also": change}
                        for bug_id, change in changes.items()}}


def update_tags(ctx, params):
    """Add and remove the caller's personal tags (JSON-RPC/XML-RPC only).

    params: ids, tags {add: [...], remove: [...]} (removals first).
    Returns {"changes": {bug id: {"tags": {"added": [...], "removed": [...]}}}}.
    Errors: 410; 50 no ids or no tags; 100/101/102; 32000 empty or too
    long tag name.
    """
    require_login(ctx)
    p = Params(params)
    if not p.list("ids"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the ids of the bugs.")
    if p.get("tags") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the tags to change.")
    spec = Params(p.dict("tags"))
    changes = tags.change(ctx, p.list("ids"), spec.str_list("remove"), spec.str_list("add"))
    return {"changes": {str(bug_id): {"tags": change} for bug_id, change in changes.items()}}


def edit_options(ctx, params):
    """What the caller may do to bugs now (a bugsvc addition, for forms).

    params: ids (ids or aliases); product (optional: a product the bugs
    would move to; "groups" are then those the bugs would have there).
    Returns {"bugs": [{"id", "can_comment", "can_remove_cc" (others from the
    CC list), "statuses": [{"name", "is_open", "comment_required"}] (the
    current one first when it is not a transition of its own), "fields":
    [API names of the fields the caller may change], "resolutions":
    [names], "groups": [{"id", "name", "description", "is_on", "can_change"}]
    (the groups the bug is in or the caller may restrict it to)}]}.
    Logged-out callers, and callers who may not edit the bug's product,
    may change nothing: only the current status is listed.
    Errors: 50 no ids; 100/101/102 bad, unknown or invisible bug; 106 a
    product the caller may not file bugs in.
    """
    p = Params(params)
    values = p.list("ids")
    if not values:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the ids of the bugs.")
    bug_ids = list(dict.fromkeys(visible_bug_id(ctx, value) for value in values))
    product = p.str("product") if p.has("product") else None
    return {"bugs": [bug_edit_options(ctx, bug_id, product) for bug_id in bug_ids]}


def groups_in(ctx, params):
    """The groups visible bugs are in, with their ids, for anyone who may
    see the bugs (a page's read: Bugzilla 5.2's bug XML names each group of
    a bug with its id to every viewer; it has no call for it).

    params: ids (ids or aliases). Returns {"bugs": [{"id", "groups":
    [{"id", "name"}] (by name)}]}, in the order asked.
    Errors: 50 no ids; 100/101/102 bad, unknown or invisible bug.
    """
    p = Params(params)
    values = p.list("ids")
    if not values:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the ids of the bugs.")
    bug_ids = list(dict.fromkeys(visible_bug_id(ctx, value) for value in values))
    found = bug_groups_of(ctx, bug_ids)
    return {"bugs": [{"id": bug_id, "groups": found[bug_id]} for bug_id in bug_ids]}


def new_bug_groups(ctx, params):
    """The groups the new-bug form of a product offers the caller (a page's
    read: Bugzilla 5.2's enter_bug.cgi shows them; it has no call for it).

    params: product (name). Returns {"groups": [{"id", "name",
    "description", "is_default"}] to tick or not (Default ones ticked at
    first), "mandatory": [{"id", "name", "description"}] every new bug of
    the caller's in the product is put in}.
    Errors: 50 no product; 106 a product the caller may not file bugs in.
    """
    product = enterable_product(ctx, Params(params).get("product"))
    return offered_for_new_bug(ctx, product)


def request_types(ctx, params):
    """The flag types the request queue may be filtered by: those some
    flag has (a bugsvc addition: the menu of request.cgi).

    params: none. Returns {"types": [names]}. Errors: 410 logged out.
    """
    require_login(ctx)
    return {"types": queued_type_names(ctx)}


def request_queue(ctx, params):
    """The request queue: flags by whom they were asked of or set by, by
    product, component, flag type and status (a bugsvc addition: the
    reference's request.cgi?action=queue).

    params: requester, requestee (logins; requestee "-": flags asked of
    nobody in particular); do_union (boolean: flags of the requester or
    the requestee, rather than both); product, component; type (a flag
    type's name; "all" or empty: any); status ("?" by default, "+", "-",
    "+-" (granted or denied), or "all"); limit (default and at most 1000).
    Returns {"requests": [{"id", "name", "type_id", "status", "bug_id",
    "bug_summary", "product", "component", "attachment_id",
    "attachment_summary", "requester", "requestee", "creation_date",
    "modification_date"}]}, by product, component and bug: only on bugs the
    caller may see, and on attachments the caller may see.
    Errors: 410 logged out; 52 a limit that is not a number; 32000 an
    unknown status.
    """
    require_login(ctx)
    p = Params(params)
    status = p.str("status", "") or "?"
    if status not in QUEUE_STATUSES + ("all",):
        raise ServiceError(USER_ERROR, f"Unknown flag status '{status}': use ?, +, -, +- or "
                                       "all.")
    type_name = p.str("type", "")
    limit = p.int("limit", QUEUE_LIMIT) or QUEUE_LIMIT
    return {"requests": queue_of_requests(
        ctx, requester=p.str("requester", "").strip(), requestee=p.str("requestee", "").strip(),
        either=p.bool("do_union"), product=p.str("product"), component=p.str("component"),
        type_name=None if type_name in ("", "all") else type_name,
        status=None if status == "all" else status, limit=min(max(limit, 1), QUEUE_LIMIT))}


def flag_requests(ctx, params):
    """The flags requested of the caller (a bugsvc addition: the
    reference's "My Requests" page).

    params: limit (default and at most 100).
    Returns {"requests": [{"id", "name", "type_id", "status" ("?"),
    "bug_id", "attachment_id" (null for a bug's own flag), "setter",
    "requestee", "creation_date", "modification_date"}]}, newest first:
    only on bugs the caller may see, and on attachments the caller may see.
    Errors: 410 logged out; 52 a limit that is not a number.
    """
    require_login(ctx)
    limit = Params(params).int("limit", REQUEST_LIMIT) or REQUEST_LIMIT
    return {"requests": requests_of_caller(ctx, min(max(limit, 1), REQUEST_LIMIT))}
