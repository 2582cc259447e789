"""Keywords: finding, creating and changing them (a bugsvc extension in the
reference's style). Keywords in use are deactivated, never deleted."""

import re

from ..call.changes import note
from ..errors import USER_ERROR, ServiceError
from ..store import audit
from . import catalog
from .admin import checked_name, checked_text


_SEPARATORS = re.compile(r"[\s,]")


def _named(ctx, ids, names):
    """The keywords named by `ids` and `names`, each once. Errors: 51 unknown."""
    return catalog.named(ctx.conn, ids, names, catalog.keyword_by_id, catalog.keyword_by_name,
                         "keyword")


def find(ctx, ids, names):
    """The keywords named by `ids` and `names`, each once, by name.
    Errors: 51 unknown."""
    return sorted(_named(ctx, ids, names), key=lambda k: (k["name"].lower(), k["id"]))


def all_keywords(ctx):
    """Every keyword, by name."""
    return catalog.all_keywords(ctx.conn)


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


def create(ctx, name, description, is_active):
    """Store a new keyword. Returns its id.
    Errors: 32000 a name that is blank, too long, holds a comma or white
    space, or is taken (any case); a blank description."""
    name = _check_name(ctx, name)
    description = _check_description(description)
    cur = ctx.conn.execute("INSERT INTO keywords (name, description, is_active) VALUES (?, ?, ?)"
                           " RETURNING id", (name, description, int(is_active)))
    keyword_id = cur.fetchone()[0]
    audit.record(ctx, "Keyword", keyword_id)
    return keyword_id


def update(ctx, ids, names, given):
    """Change the keywords named by `ids` and `names`; given: {field: new
    value} of the fields given: name (one keyword only), description,
    is_active. Returns [{"id", "changes"}]; booleans "1"/"0".
    Errors: 51 unknown keyword; 32000 a name for several keywords, or a bad
    name or description as in create.
    """
    keywords = _named(ctx, ids, names)
    new = {}
    if "name" in given:
        if len(keywords) > 1:
            raise ServiceError(USER_ERROR, "Keyword names are unique: 'name' can only be set "
                                           "when updating one keyword.")
        new["name"] = _check_name(ctx, given["name"], keywords[0]["id"])
    if "description" in given:
        new["description"] = _check_description(given["description"])
    if "is_active" in given:
        new["is_active"] = given["is_active"]
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
    return answers
