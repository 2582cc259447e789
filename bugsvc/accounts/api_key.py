"""API keys of an account: listing, making, describing and revoking them
(a bugsvc extension over REST; checking a key is auth.py's).

The secret is shown once, when the key is made; only its hash is stored.
Every change is audited under class User, on the key owner's account.
"""

from .. import dates
from ..call.changes import note
from ..errors import OBJECT_DOES_NOT_EXIST, ServiceError, require_group, require_login
from ..store import audit
from . import auth


def _owner_id(ctx, value):
    """The account whose keys are meant: the caller's, or `value` (an id or
    login; None or blank: the caller's), which must be the caller's own
    unless the caller is in editusers.

    Errors: 410 logged out; 304 another account without editusers; 51 no
    such account (editusers members only learn that).
    """
    require_login(ctx)
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


def keys_of(ctx, user):
    """The API keys of account `user` (see _owner_id), oldest first, never
    their secrets: [{"id", "description", "revoked", "last_used" (null
    while unused), "created"}]. Errors: 410, 304, 51 (see _owner_id)."""
    owner = _owner_id(ctx, user)
    rows = ctx.conn.execute("SELECT id, description, revoked, last_used, created_at FROM api_keys"
                            " WHERE user_id = ? ORDER BY id", (owner,))
    return [_key_object(row) for row in rows]


def create(ctx, user, description):
    """Make an API key for account `user` (see _owner_id). Returns (id,
    secret): the secret is not stored. Errors: 410, 304, 51 (see _owner_id)."""
    owner = _owner_id(ctx, user)
    key_id, secret = auth.create_api_key(ctx.conn, owner, (description or "").strip(), ctx.now)
    audit.record(ctx, "User", owner, "api_key", "", str(key_id))
    return key_id, secret


def update(ctx, key_ids, description=None, revoked=None):
    """Change the description of API keys, or revoke them (revoked false
    makes a key usable again); None leaves a value as it is.
    Returns [{"id", "changes"}] (revoked as "1"/"0").
    Errors: 51 no such key among the caller's own (editusers members:
    among all keys). Nothing changes on an error.
    """
    is_admin = ctx.caller.in_group("editusers")
    rows = []
    for key_id in key_ids:
        row = ctx.conn.execute("SELECT id, user_id, description, revoked FROM api_keys"
                               " WHERE id = ?", (key_id,)).fetchone()
        if row is None or (row["user_id"] != ctx.caller.id and not is_admin):
            raise ServiceError(OBJECT_DOES_NOT_EXIST, f"You have no API key with the id {key_id}.")
        rows.append(row)
    new = {}
    if description is not None:
        new["description"] = description.strip()
    if revoked is not None:
        new["revoked"] = revoked
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
    return answer
