"""API keys over REST (a bugsvc extension): list, create, describe and revoke them.

The secret is shown once, in the answer of create; only its hash is stored.
Every change is audited under class User, on the key owner's account.
"""

from ..store import audit
from ..accounts import auth
from .. import dates
from ..call.changes import note
from ..errors import (ServiceError, require_group, require_login, OBJECT_DOES_NOT_EXIST,
                      OBJECT_NOT_SPECIFIED)
from ..call.params import Params
from ..call.fields import Shape

# include/exclude shape of an API key.
API_KEY_SHAPES = {"api_keys": Shape()}


def _owner_id(ctx, p):
    """The account the call is about: the caller, or `user` (id or login),
    which must be the caller's own unless the caller is in editusers.

    Errors: 410 logged out; 304 another account without editusers; 51 no
    such account (editusers members only learn that).
    """
    require_login(ctx)
    value = p.str("user")
    if not value or not value.strip():
        return ctx.caller.id
    value = value.strip()
    condition = "id = ?" if value.isdigit() else "lower(login) = lower(?)"
    row = ctx.conn.execute(f"SELECT id FROM users WHERE {condition}",
                           (int(value) if value.isdigit() else value,)).fetchone()
    if row is not None and row["id"] == ctx.caller.id:
        return row["id"]
    require_group(ctx, "editusers", "manage the API keys of other accounts")
    if row is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no user '{value}'.")
    return row["id"]


def _key_object(row):
    return {"id": row["id"], "description": row["description"], "revoked": bool(row["revoked"]),
            "last_used": dates.from_db(row["last_used"]),
            "created": dates.from_db(row["created_at"])}


def get(ctx, params):
    """List the API keys of an account, never their secrets.

    params: user (editusers only, for another account; default the caller).
    Returns {"api_keys": [{"id", "description", "revoked", "last_used",
    "created"}]}, oldest first; last_used is null for an unused key.
    Errors: 410, 304, 51 (see the user parameter).
    """
    owner = _owner_id(ctx, Params(params))
    rows = ctx.conn.execute("SELECT id, description, revoked, last_used, created_at FROM api_keys"
                            " WHERE user_id = ? ORDER BY id", (owner,))
    return {"api_keys": [_key_object(row) for row in rows]}


def create(ctx, params):
    """Create an API key.

    params: description; user (editusers only, for another account).
    Returns {"id", "api_key"}: the secret, shown only here.
    Errors: 410, 304, 51 (see the user parameter).
    """
    p = Params(params)
    owner = _owner_id(ctx, p)
    description = (p.str("description") or "").strip()
    key_id, secret = auth.create_api_key(ctx.conn, owner, description, ctx.now)
    audit.record(ctx, "User", owner, "api_key", "", str(key_id))
    return {"id": key_id, "api_key": secret}


def update(ctx, params):
    """Change the description of API keys or revoke them (revoked false
    makes a key usable again).

    params: ids (the path gives the first), description, revoked.
    Returns {"api_keys": [{"id", "changes"}]} (revoked as "1"/"0").
    Errors: 410 logged out; 50 no ids; 51 no such key among the caller's
    own (editusers members: among all keys). Nothing changes on an error.
    """
    require_login(ctx)
    p = Params(params)
    key_ids = list(dict.fromkeys(p.int_list("ids")))
    if not key_ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "The API key update requires 'ids'.")
    is_admin = ctx.caller.in_group("editusers")
    rows = []
    for key_id in key_ids:
        row = ctx.conn.execute("SELECT id, user_id, description, revoked FROM api_keys"
                               " WHERE id = ?", (key_id,)).fetchone()
        if row is None or (row["user_id"] != ctx.caller.id and not is_admin):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"You have no API key with the id {key_id}.")
        rows.append(row)
    new = {}
    if p.get("description") is not None:
        new["description"] = p.str("description").strip()
    if p.get("revoked") is not None:
        new["revoked"] = p.bool("revoked")
    answer = []
    for row in rows:
        changes = {}
        for field, value in new.items():
            old = bool(row[field]) if field == "revoked" else row[field]
            if note(changes, field, old, value):
                ctx.conn.execute(f"UPDATE api_keys SET {field} = ? WHERE id = ?",
                                 (int(value) if field == "revoked" else value, row["id"]))
                audit.record(ctx, "User", row["user_id"], f"api_key.{field}",
                             changes[field]["removed"], changes[field]["added"])
        answer.append({"id": row["id"], "changes": changes})
    return {"api_keys": answer}
