"""Webhooks (bugzilla.mozilla.org's design: `GET /rest/webhooks/list` and its
fields; creating, changing and removing them over REST is a bugsvc
addition, as bugzilla.mozilla.org offers that on a preferences page). The
behaviour lives in bugsvc/notify/webhook.py, which says what a webhook
calls and who may register one."""

from ..call.params import Params
from ..errors import OBJECT_NOT_SPECIFIED, ServiceError, require_login
from ..notify import webhook


def list_webhooks(ctx, params):
    """The caller's webhooks (bugzilla.mozilla.org's list).

    params: all (administrators: every account's webhooks), user (an
    administrator: that account's).
    Returns {"webhooks": [{"id", "creator", "name", "url", "event"
    (comma-separated events), "product", "component" ("Any" for all),
    "enabled", "errors" (calls waiting after a failure, or parked),
    "pending" (calls waiting), "disabled_reason", "last_attempt",
    "last_success", "last_error", "previous_secret_valid_until"}]} by id.
    Errors: 410 logged out; 304 `all` or `user` without admin.
    """
    require_login(ctx)
    p = Params(params)
    return {"webhooks": webhook.listed(ctx, p.bool("all"), p.get("user"))}


def create(ctx, params):
    """Register a webhook; its signing secret is answered this once.

    params: name, url (http or https; while webhooks_allow_private_addresses
    is off, not a loopback, private or link-local address), events (list
    or comma-separated: create, change, comment, attachment,
    attachment_change), product (a name, or "Any"), component (optional).
    Returns {"id", "secret"} (whsec_...: the key of the webhook-signature
    header's HMAC; store it, it is not shown again).
    Errors: 410 logged out; 304 not in webhooks_group, or "Any" without
    webhooks_any_product_group; 50 name, url, events or product missing;
    106 a product the caller cannot see; 51 unknown component; 32000
    webhooks turned off, an unknown event, a URL that may not be called, a
    name in use or too long.
    """
    require_login(ctx)
    p = Params(params)
    events = p.get("events") if p.has("events") else p.get("event") or []
    webhook_id, secret = webhook.create(ctx, p.get("name"), p.get("url"), events,
                                        p.get("product"), p.get("component"))
    return {"id": webhook_id, "secret": secret}


def update(ctx, params):
    """Change webhooks (their owner, or an administrator).

    params: ids (the path gives one), name, url, events, product, component
    (as in create; product changes reset the component unless given),
    enabled (true enables a disabled webhook again and sends its parked
    calls again, in order), rotate_secret (true: a new secret, answered
    this once; the old one still signs every call, beside the new, for
    24 hours), drop_previous_secret (true: the old secret stops at once).
    Returns {"webhooks": [{"id", "changes": {field: {"removed", "added"}}}]},
    with "secret" when it was rotated.
    Errors: 410; 50 no ids; 51 unknown webhook or another account's; 52 a
    bad id; 304, 106 and 32000 as in create (webhooks turned off as well).
    """
    require_login(ctx)
    webhook.require_enabled(ctx)
    p = Params(params)
    ids = p.list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the webhooks to change (ids).")
    given = {name: p.get(name) for name in ("name", "url", "product", "component")
             if p.has(name)}
    if p.has("events") or p.has("event"):
        given["events"] = p.get("events") if p.has("events") else p.get("event")
    if p.has("enabled"):
        given["enabled"] = p.bool("enabled")
    given["rotate_secret"] = p.bool("rotate_secret")
    given["drop_previous_secret"] = p.bool("drop_previous_secret")
    changed, secret = webhook.update(ctx, ids, given)
    answer = {"webhooks": changed}
    if secret is not None:
        answer["secret"] = secret
    return answer


def delete(ctx, params):
    """Remove webhooks (their owner, or an administrator); their waiting
    calls are dropped.

    params: ids (the path gives one).
    Returns {"webhooks": [{"id"}]}.
    Errors: 410 logged out; 50 no ids; 51 unknown webhook or another
    account's; 52 a bad id.
    """
    require_login(ctx)
    ids = Params(params).list("ids")
    if not ids:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "You must name the webhooks to remove (ids).")
    return {"webhooks": webhook.delete(ctx, ids)}
