"""Keywords: list, create, update (a bugsvc extension in
the reference's style). Keywords in use are deactivated, never deleted."""

import re

from ..store import audit
from ..catalogue import catalog
from ..catalogue.admin import checked_text, checked_name, reject_unknown_keys, required_text
from ..call.changes import note
from ..errors import (
    ServiceError, require_group, OBJECT_NOT_SPECIFIED, OBJECT_DOES_NOT_EXIST, PARAM_INVALID,
    USER_ERROR, UNKNOWN_METHOD,
)
from ..call.params import Params
from ..call.fields import Shape

# include/exclude shape of a keyword.
KEYWORD_SHAPES = {"keywords": Shape()}
_SEPARATORS = re.compile(r"[\s,]")
_CREATE_KEYS = frozenset({"name", "description", "is_active"})
_UPDATE_KEYS = frozenset({"ids", "names", "name", "description", "is_active"})


def _find(ctx, p):
    """The keywords named by ids and names, each once. Errors: 51 unknown."""
    found = []
    for keyword_id in p.int_list("ids"):
        keyword = catalog.keyword_by_id(ctx.conn, keyword_id)
        if keyword is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no keyword with the id "
                                                      f"'{keyword_id}'.")
        found.append(keyword)
    for name in p.str_list("names"):
        keyword = catalog.keyword_by_name(ctx.conn, name)
        if keyword is None:
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no keyword named '{name}'.")
        found.append(keyword)
    unique, seen = [], set()
    for keyword in found:
        if keyword["id"] not in seen:
            seen.add(keyword["id"])
            unique.append(keyword)
    return unique


def get(ctx, params):
    """The keywords: all of them, or those named by ids and names.

    Returns {"keywords": [{"id", "name", "description", "is_active"}]}, by name.
    Errors: 51 an unknown id or name.
    """
    p = Params(params)
    if p.list("ids") or p.list("names"):
        keywords = sorted(_find(ctx, p), key=lambda k: (k["name"].lower(), k["id"]))
    else:
        keywords = catalog.all_keywords(ctx.conn)
    return {"keywords": keywords}


def _check_name(ctx, name, keyword_id=None):
    """Errors: 32000 blank, too long, holding a comma or white space, or taken."""
    name = checked_name(name, "keyword")
    if _SEPARATORS.search(name):
        raise ServiceError(USER_ERROR, f"The keyword name '{name}' may not contain commas or "
                                       "white space.")
    existing = catalog.keyword_by_name(ctx.conn, name)
    if existing is not None and existing["id"] != keyword_id:
        raise ServiceError(USER_ERROR, f"A keyword named '{existing['name']}' already exists.")
    return name


def _check_description(text):
    """The trimmed description. Errors: 32000 blank."""
    return checked_text(text, "keyword", "description", max_length=None)


def create(ctx, params):
    """Create a keyword (editkeywords).

    params: name, description (required), is_active (default true).
    Returns {"id"}.
    Errors: 410; 304 not in editkeywords; 53 unknown key; 50 name or
    description missing; 32000 blank, longer than 64 characters, holding a
    comma or white space, or taken (any case); 32000 blank description.
    """
    require_group(ctx, "editkeywords", "add keywords")
    reject_unknown_keys(params, _CREATE_KEYS, PARAM_INVALID)
    p = Params(params)
    name = _check_name(ctx, required_text(p, "name", "keyword"))
    if p.get("description") is None:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the 'description' of the "
                                                 "keyword.")
    description = _check_description(p.str("description"))
    cur = ctx.conn.execute("INSERT INTO keywords (name, description, is_active) VALUES (?, ?, ?)"
                           " RETURNING id", (name, description, int(p.bool("is_active", True))))
    keyword_id = cur.fetchone()[0]
    audit.record(ctx, "Keyword", keyword_id)
    return {"id": keyword_id}


def update(ctx, params):
    """Change keywords (editkeywords).

    params: ids, names (the path gives the first), and new values name (one
    keyword only), description, is_active.
    Returns {"keywords": [{"id", "changes"}]}; booleans "1"/"0".
    Errors: 410; 304; -32601 unknown key; 50 neither ids nor names; 51
    unknown keyword; 32000 a name for several keywords, or a bad name or
    description as in create.
    """
    require_group(ctx, "editkeywords", "edit keywords")
    reject_unknown_keys(params, _UPDATE_KEYS, UNKNOWN_METHOD)
    p = Params(params)
    if not p.list("ids") and not p.list("names"):
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must specify the keywords to update with "
                                                 "'ids' or 'names'.")
    keywords = _find(ctx, p)
    new = {}
    if p.has("name"):
        if len(keywords) > 1:
            raise ServiceError(USER_ERROR, "Keyword names are unique: 'name' can only be set "
                                           "when updating one keyword.")
        new["name"] = _check_name(ctx, p.str("name"), keywords[0]["id"])
    if p.has("description"):
        new["description"] = _check_description(p.str("description"))
    if p.get("is_active") is not None:
        new["is_active"] = p.bool("is_active")
    answers = []
    for keyword in keywords:
        changes = {}
        for field, value in new.items():
            if note(changes, field, keyword[field], value):
                ctx.conn.execute(f"UPDATE keywords SET {field} = ? WHERE id = ?",
                                 (int(value) if isinstance(value, bool) else value,
                                  keyword["id"]))
        audit.record_changes(ctx, "Keyword", keyword["id"], changes)
        answers.append({"id": keyword["id"], "changes": changes})
    return {"keywords": answers}
