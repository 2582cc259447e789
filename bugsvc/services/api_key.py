"""API keys over REST (a bugsvc extension): list, create, describe and revoke them.
The behaviour lives in bugsvc/accounts/api_key.py."""

from ..accounts import api_key
from ..call.fields import Shape
from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_login


# include/exclude shape of an API key.
API_KEY_SHAPES = {"api_keys": Shape()}


def get(ctx, params):
    """List the API keys of an account, never their secrets.

    params: user (editusers only, for another account; default the caller).
    Returns {"api_keys": [{"id", "description", "revoked", "last_used",
    "created"}]}, oldest first; last_used is null for an unused key.
    Errors: 410, 304, 51 (see the user parameter).
    """
    return {"api_keys": api_key.keys_of(ctx, Params(params).str("user"))}


def create(ctx, params):
    """Create an API key.

    params: description; user (editusers only, for another account).
    Returns {"id", "api_key"}: the secret, shown only here.
    Errors: 410, 304, 51 (see the user parameter).
    """
    p = Params(params)
    key_id, secret = api_key.create(ctx, p.str("user"), p.str("description"))
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
    description = p.str("description") if p.get("description") is not None else None
    revoked = p.bool("revoked") if p.get("revoked") is not None else None
    return {"api_keys": api_key.update(ctx, key_ids, description, revoked)}
