"""The MCP tools: each a name, a description written for a model, a JSON
schema of its arguments, and the operations of the table it runs (through
the Runner, as the caller the request's API key names: the same login
rules, visibility, rate limits and transactions as REST). No tool holds a
permission rule of its own; it only chooses which operations to run and
shapes their answers for a model.

Tools that write are offered only to a signed-in caller on an installation
whose administrator turned on `mcp_allow_write`.
"""

from dataclasses import dataclass
from typing import Callable

from ...api.operations import OPERATIONS
from ...errors import USER_ERROR, ServiceError


# How many bugs a search returns unless asked, and at most.
SEARCH_LIMIT, MAX_SEARCH_LIMIT = 20, 100
# How many comments get_bug returns unless asked, and at most.
COMMENT_LIMIT, MAX_COMMENT_LIMIT = 50, 200
# The fields of a bug in a search's answer (a get_bug has them all).
SEARCH_FIELDS = ["id", "summary", "status", "resolution", "product", "component",
                 "assigned_to", "priority", "severity", "keywords", "last_change_time"]


@dataclass(frozen=True)
class Tool:
    """One tool. run(call, arguments) -> a dict for the model; writes: it
    changes something (offered only when writing is allowed)."""
    name: str
    title: str
    description: str
    schema: dict
    run: Callable
    writes: bool = False

    def listing(self):
        """The tool as tools/list describes it."""
        return {"name": self.name, "title": self.title, "description": self.description,
                "inputSchema": self.schema,
                "annotations": {"title": self.title, "readOnlyHint": not self.writes,
                                "destructiveHint": False, "idempotentHint": not self.writes,
                                "openWorldHint": False}}


class ToolCall:
    """What a tool runs its operations with: the Runner, the request's
    credential headers and address; `operations` collects the names run
    (for the log line)."""

    def __init__(self, runner, headers, remote_ip):
        self.runner = runner
        self.headers = headers
        self.remote_ip = remote_ip
        self.operations = []

    def run(self, name, params):
        """The answer of operation `name` for `params`. Errors: its ServiceErrors."""
        self.operations.append(name)
        return self.runner.run(OPERATIONS[name], dict(params), self.headers, self.remote_ip)

    def run_many(self, calls):
        """The answers of reading operations [(name, params)], in one snapshot."""
        self.operations.extend(name for name, _ in calls)
        return self.runner.run_many([(OPERATIONS[name], dict(params)) for name, params in calls],
                                    self.headers, self.remote_ip)


def _argument_error(message):
    return ServiceError(USER_ERROR, message)


def _limit(arguments, name, default, most):
    value = arguments.get(name, default)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise _argument_error(f"'{name}' must be a whole number of 1 or more.")
    return min(value, most)


def _offset(arguments, name="offset"):
    value = arguments.get(name, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise _argument_error(f"'{name}' must be a whole number of 0 or more.")
    return value


def _bug_id(arguments):
    value = arguments.get("id")
    if isinstance(value, bool) or not isinstance(value, (int, str)) or value == "":
        raise _argument_error("'id' must be a bug number or alias.")
    return value


def _words(arguments, name):
    """A string argument, or a list of strings, as a list (None when absent)."""
    value = arguments.get(name)
    if value is None:
        return None
    values = value if isinstance(value, list) else [value]
    if not all(isinstance(item, str) for item in values):
        raise _argument_error(f"'{name}' must be a string or a list of strings.")
    return values


# Reading -----------------------------------------------------------------------------

_SEARCH_FILTERS = {
    "product": "product", "component": "component", "status": "status",
    "resolution": "resolution", "assigned_to": "assigned_to", "creator": "creator",
    "keywords": "keywords", "priority": "priority", "severity": "severity",
}


def search_bugs(call, arguments):
    params = {}
    if arguments.get("query") is not None:
        if not isinstance(arguments["query"], str):
            raise _argument_error("'query' must be a string.")
        params["quicksearch"] = arguments["query"]
    if arguments.get("summary") is not None:
        if not isinstance(arguments["summary"], str):
            raise _argument_error("'summary' must be a string.")
        params["summary"] = arguments["summary"]
    for argument, param in _SEARCH_FILTERS.items():
        values = _words(arguments, argument)
        if values is not None:
            params[param] = values
    if not params:
        raise _argument_error("Give a 'query' or at least one field to search by.")
    limit = _limit(arguments, "limit", SEARCH_LIMIT, MAX_SEARCH_LIMIT)
    offset = _offset(arguments)
    # One more than asked for tells whether there are more.
    params.update(limit=limit + 1, offset=offset, include_fields=SEARCH_FIELDS)
    bugs = call.run("Bug.search", params)["bugs"]
    answer = {"bugs": bugs[:limit], "offset": offset}
    if len(bugs) > limit:
        answer["more"] = f"More bugs match: ask again with offset {offset + limit}."
    return answer


def get_bug(call, arguments):
    bug_id = _bug_id(arguments)
    limit = _limit(arguments, "comment_limit", COMMENT_LIMIT, MAX_COMMENT_LIMIT)
    offset = _offset(arguments, "comment_offset")
    calls = [("Bug.get", {"ids": [bug_id]})]
    if arguments.get("include_comments", True):
        calls.append(("Bug.comments", {"ids": [bug_id]}))
    if arguments.get("include_history", False):
        calls.append(("Bug.history", {"ids": [bug_id]}))
    if arguments.get("include_attachments", True):
        calls.append(("Bug.attachments", {"ids": [bug_id], "exclude_fields": ["data"]}))
    answers = dict(zip((name for name, _ in calls), call.run_many(calls), strict=True))
    bug = answers["Bug.get"]["bugs"][0]
    key = str(bug["id"])
    if "Bug.comments" in answers:
        comments = answers["Bug.comments"]["bugs"][key]["comments"]
        bug["comments"] = comments[offset:offset + limit]
        bug["comment_count"] = len(comments)
        if offset + limit < len(comments):
            bug["more_comments"] = (f"{len(comments) - offset - limit} more comments: ask "
                                    f"again with comment_offset {offset + limit}.")
    if "Bug.history" in answers:
        bug["history"] = answers["Bug.history"]["bugs"][0]["history"]
    if "Bug.attachments" in answers:
        bug["attachments"] = answers["Bug.attachments"]["bugs"][key]
    return {"bug": bug}


def list_products(call, arguments):
    names = _words(arguments, "names")
    if names is None:
        ids = call.run("Product.get_accessible_products", {})["ids"]
        params = {"ids": ids}
    else:
        params = {"names": names}
    params["include_fields"] = ["id", "name", "description", "is_active", "components.name",
                                "components.description", "components.is_active",
                                "versions.name", "milestones.name"]
    return call.run("Product.get", params)


def list_fields(call, arguments):
    names = _words(arguments, "names")
    params = {"names": names} if names is not None else {}
    fields = call.run("Bug.fields", params)["fields"]
    shown = []
    for field in fields:
        entry = {"name": field["name"], "display_name": field["display_name"],
                 "type": field["type"], "is_custom": field["is_custom"]}
        if "values" in field:
            entry["values"] = [value["name"] for value in field["values"]
                               if value.get("is_active", True) and value["name"]]
        shown.append(entry)
    return {"fields": shown}


# Writing -----------------------------------------------------------------------------

_CREATE_FIELDS = ("product", "component", "summary", "version", "description", "severity",
                  "priority", "platform", "op_sys", "assigned_to", "keywords", "cc",
                  "target_milestone", "alias", "blocks", "depends_on", "groups")


def create_bug(call, arguments):
    params = {name: arguments[name] for name in _CREATE_FIELDS if name in arguments}
    return call.run("Bug.create", params)


def add_comment(call, arguments):
    params = {"id": _bug_id(arguments), "comment": arguments.get("comment"),
              "is_private": bool(arguments.get("is_private", False))}
    return call.run("Bug.add_comment", params)


_UPDATE_FIELDS = ("status", "resolution", "dupe_of", "assigned_to", "priority", "severity",
                  "summary", "whiteboard", "target_milestone", "version", "component",
                  "product", "url")
_UPDATE_LISTS = ("keywords", "cc", "blocks", "depends_on")


def update_bug(call, arguments):
    params = {"ids": [_bug_id(arguments)]}
    params.update({name: arguments[name] for name in _UPDATE_FIELDS if name in arguments})
    for name in _UPDATE_LISTS:
        change = arguments.get(name)
        if change is None:
            continue
        if not isinstance(change, dict) or not set(change) <= {"add", "remove"}:
            raise _argument_error(f"'{name}' must be an object with 'add' and/or 'remove'.")
        params[name] = change
    if arguments.get("comment"):
        params["comment"] = {"body": arguments["comment"],
                             "is_private": bool(arguments.get("comment_is_private", False))}
    if len(params) == 1:
        raise _argument_error("Name at least one field to change.")
    return call.run("Bug.update", params)


def set_flags(call, arguments):
    flags = arguments.get("flags")
    if not isinstance(flags, list) or not flags:
        raise _argument_error("'flags' must be a list of flag changes.")
    return call.run("Bug.update", {"ids": [_bug_id(arguments)], "flags": flags})


# The table ---------------------------------------------------------------------------

_ID = {"type": ["integer", "string"], "description": "The bug's number, or its alias."}
_STRINGS = {"anyOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}


def _strings(description):
    return dict(_STRINGS, description=description)


def _list_change(what):
    return {"type": "object", "additionalProperties": False,
            "description": f"{what} to add and to remove.",
            "properties": {"add": {"type": "array", "items": {"type": ["string", "integer"]}},
                           "remove": {"type": "array", "items": {"type": ["string", "integer"]}}}}


TOOLS = (
    Tool("search_bugs", "Search bugs",
         "Find bugs in this Bugzilla-compatible tracker. Give `query` in Bugzilla's quick "
         "search syntax (words are matched against summaries and comments; terms like "
         "`product:Foo`, `status:NEW`, `assignee:someone@example.com`, `bug 123` narrow it), "
         "or filter by fields (product, component, status, ...), or both. Returns at most "
         "`limit` bugs with their main fields; ask `get_bug` for one bug's description, "
         "comments and history. Only bugs the caller may see are ever returned.",
         {"type": "object", "additionalProperties": False, "properties": {
             "query": {"type": "string", "description": "Quick search text."},
             "summary": {"type": "string", "description": "Words the summary contains."},
             "product": _strings("Product name(s)."),
             "component": _strings("Component name(s)."),
             "status": _strings("Status(es), e.g. NEW, ASSIGNED, RESOLVED."),
             "resolution": _strings("Resolution(s), e.g. FIXED; an empty string for open bugs."),
             "assigned_to": _strings("Assignee login(s)."),
             "creator": _strings("Reporter login(s)."),
             "keywords": _strings("Keyword(s)."),
             "priority": _strings("Priority value(s)."),
             "severity": _strings("Severity value(s)."),
             "limit": {"type": "integer", "minimum": 1, "maximum": MAX_SEARCH_LIMIT,
                       "default": SEARCH_LIMIT, "description": "How many bugs at most."},
             "offset": {"type": "integer", "minimum": 0, "default": 0,
                        "description": "How many matching bugs to skip (for the next page)."},
         }},
         search_bugs),
    Tool("get_bug", "Read a bug",
         "Read one bug: every field, its comments (the first is the description), its "
         "attachments' names and sizes, and optionally its history of changes. Comments come "
         "in pages of `comment_limit`; the answer says when there are more. Private comments "
         "and attachments appear only to those allowed to see them.",
         {"type": "object", "additionalProperties": False, "required": ["id"], "properties": {
             "id": _ID,
             "include_comments": {"type": "boolean", "default": True},
             "include_attachments": {"type": "boolean", "default": True},
             "include_history": {"type": "boolean", "default": False},
             "comment_limit": {"type": "integer", "minimum": 1, "maximum": MAX_COMMENT_LIMIT,
                               "default": COMMENT_LIMIT},
             "comment_offset": {"type": "integer", "minimum": 0, "default": 0},
         }},
         get_bug),
    Tool("list_products", "List products",
         "The products the caller can file or read bugs in, with their components, versions "
         "and milestones. Use the names exactly as given when searching or filing.",
         {"type": "object", "additionalProperties": False, "properties": {
             "names": _strings("Only these products (default: every accessible one)."),
         }},
         list_products),
    Tool("list_fields", "List bug fields",
         "The bug fields of this tracker (their names for searching and updating, their "
         "labels and types) and, for fields with a fixed list, the values allowed, such as "
         "every status, resolution, priority and severity.",
         {"type": "object", "additionalProperties": False, "properties": {
             "names": _strings("Only these fields (default: all)."),
         }},
         list_fields),
    Tool("create_bug", "File a bug",
         "File a new bug as the caller. `product`, `component`, `summary` and `version` are "
         "needed (see list_products for the names), and `op_sys` and `platform` unless the "
         "tracker has defaults for them; `description` is its first comment. "
         "Returns the new bug's number.",
         {"type": "object", "additionalProperties": False,
          "required": ["product", "component", "summary", "version"], "properties": {
              "product": {"type": "string"}, "component": {"type": "string"},
              "summary": {"type": "string"}, "version": {"type": "string"},
              "description": {"type": "string"}, "severity": {"type": "string"},
              "priority": {"type": "string"}, "platform": {"type": "string"},
              "op_sys": {"type": "string"}, "assigned_to": {"type": "string"},
              "target_milestone": {"type": "string"}, "alias": {"type": "string"},
              "keywords": {"type": "array", "items": {"type": "string"}},
              "cc": {"type": "array", "items": {"type": "string"}},
              "blocks": {"type": "array", "items": {"type": "integer"}},
              "depends_on": {"type": "array", "items": {"type": "integer"}},
              "groups": {"type": "array", "items": {"type": "string"}},
          }},
         create_bug, writes=True),
    Tool("add_comment", "Comment on a bug",
         "Add a comment to a bug as the caller. `is_private` makes it visible to the "
         "tracker's insiders only (allowed to insiders only).",
         {"type": "object", "additionalProperties": False, "required": ["id", "comment"],
          "properties": {"id": _ID, "comment": {"type": "string"},
                         "is_private": {"type": "boolean", "default": False}}},
         add_comment, writes=True),
    Tool("update_bug", "Change a bug",
         "Change fields of one bug as the caller, with the caller's rights: status and "
         "resolution (e.g. status RESOLVED with resolution FIXED; DUPLICATE with dupe_of), "
         "assignee, priority, severity, summary, whiteboard, milestone, and lists (keywords, "
         "cc, blocks, depends_on) by `add`/`remove`. An optional `comment` explains it.",
         {"type": "object", "additionalProperties": False, "required": ["id"], "properties": {
             "id": _ID, "status": {"type": "string"}, "resolution": {"type": "string"},
             "dupe_of": {"type": "integer"}, "assigned_to": {"type": "string"},
             "priority": {"type": "string"}, "severity": {"type": "string"},
             "summary": {"type": "string"}, "whiteboard": {"type": "string"},
             "target_milestone": {"type": "string"}, "version": {"type": "string"},
             "component": {"type": "string"}, "product": {"type": "string"},
             "url": {"type": "string"},
             "keywords": _list_change("Keywords"), "cc": _list_change("Logins"),
             "blocks": _list_change("Bug numbers"), "depends_on": _list_change("Bug numbers"),
             "comment": {"type": "string"}, "comment_is_private": {"type": "boolean"},
         }},
         update_bug, writes=True),
    Tool("set_flags", "Set flags on a bug",
         "Set, request or clear flags on a bug (such as review? or approval+), as the caller "
         "with the caller's rights. Each change names the flag type (`name`) and the new "
         "`status`: '+', '-', '?' (a request, optionally of `requestee`) or 'X' to clear; "
         "an existing flag can be named by `id` instead.",
         {"type": "object", "additionalProperties": False, "required": ["id", "flags"],
          "properties": {"id": _ID, "flags": {"type": "array", "minItems": 1, "items": {
              "type": "object", "additionalProperties": False, "required": ["status"],
              "properties": {"name": {"type": "string"}, "id": {"type": "integer"},
                             "status": {"type": "string", "enum": ["+", "-", "?", "X"]},
                             "requestee": {"type": "string"}}}}}},
         set_flags, writes=True),
)

TOOLS_BY_NAME = {tool.name: tool for tool in TOOLS}
