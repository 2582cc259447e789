"""Webhook registrations: listing them, registering, changing and removing
them (bugzilla.mozilla.org's design and fields; the calls are
services/webhook.py's). Calling them is webhook_payload.py's,
signature.py's and webhook_http.py's.

A webhook calls a URL for the changes of one product (or every product)
and optionally one component: create (a new bug), change (a changed bug),
comment, attachment (a new attachment) and attachment_change. Each call is
signed (Standard Webhooks) with the webhook's secret, which is shown once,
when the webhook is made or its secret replaced. Its owner's view of the
bug decides what a call holds (bugsvc/notify/webhook_payload.py).

Registering needs the parameter webhooks_enabled on and membership of the
group webhooks_group; a webhook for every product needs
webhooks_any_product_group. Administrators (group admin) see and change
everyone's webhooks; to anyone else another account's webhook answers like
one that does not exist.
"""

import functools
from datetime import timedelta

from .. import dates
from ..call.params import Params
from ..catalogue import catalog, group_control
from ..errors import (
    AUTH_FAILURE,
    OBJECT_DOES_NOT_EXIST,
    OBJECT_NOT_SPECIFIED,
    PRODUCT_ACCESS_DENIED,
    USER_ERROR,
    ServiceError,
)
from ..store import audit, outbox
from . import addresses, signature
from .recipients import WEBHOOK_EVENTS


ANY = "Any"
MAX_NAME = 64
MAX_URL = 2048
# How long a replaced secret still signs calls (both are sent meanwhile).
ROTATION_HOURS = 24
_COLUMNS = ("w.id, w.user_id, u.login AS creator, w.name, w.url, w.events, w.product_id,"
            " w.component_id, p.name AS product, c.name AS component, w.enabled,"
            " w.disabled_reason, w.previous_secret_until, w.created_at, w.last_attempt_at,"
            " w.last_success_at, w.last_error")
_FROM = (" FROM webhooks w JOIN users u ON u.id = w.user_id"
         " LEFT JOIN products p ON p.id = w.product_id"
         " LEFT JOIN components c ON c.id = w.component_id")


def require_enabled(ctx):
    """Errors: 32000 webhooks are turned off (webhooks_enabled)."""
    if not ctx.param_is_on("webhooks_enabled"):
        raise ServiceError(USER_ERROR, "Webhooks are turned off on this installation "
                                       "(parameter webhooks_enabled).")


def _require_member(ctx):
    group = ctx.param("webhooks_group")
    if not group or not ctx.caller.in_group(group):
        raise ServiceError(AUTH_FAILURE, f"Sorry, you aren't a member of the '{group or '-'}' "
                                         "group, and only users with that membership may "
                                         "register webhooks.")


def _is_admin(ctx):
    return ctx.caller.in_group("admin")


def _time(stamp):
    return dates.from_db(stamp[:19]) if stamp else None


def _webhook_object(ctx, row, counts):
    result = {"id": row["id"], "creator": row["creator"], "name": row["name"],
              "url": row["url"], "event": row["events"], "product": row["product"] or ANY,
              "component": row["component"] or ANY, "enabled": bool(row["enabled"]),
              "errors": counts.get(row["id"], (0, 0))[0],
              "pending": counts.get(row["id"], (0, 0))[1],
              "disabled_reason": row["disabled_reason"],
              "last_attempt": _time(row["last_attempt_at"]),
              "last_success": _time(row["last_success_at"]),
              "last_error": row["last_error"],
              "previous_secret_valid_until": _time(row["previous_secret_until"])
              if row["previous_secret_until"] and row["previous_secret_until"]
              > outbox.stamp(ctx.now) else None}
    return result


def _counts(ctx, ids):
    """{webhook id: (errors, pending)}: errors are its calls waiting after a
    failure or parked (bugzilla.mozilla.org's backlog), pending all waiting."""
    if not ids:
        return {}
    marks = ", ".join("?" for _ in ids)
    return {row[0]: (row[1] or 0, row[2] or 0) for row in ctx.conn.execute(
        f"SELECT webhook_id, SUM(CASE WHEN state = ? OR attempts > 0 THEN 1 ELSE 0 END),"
        f" SUM(CASE WHEN state = ? THEN 1 ELSE 0 END) FROM outbox_messages"
        f" WHERE webhook_id IN ({marks}) AND state IN (?, ?) GROUP BY webhook_id",
        [outbox.PARKED, outbox.PENDING] + list(ids) + [outbox.PENDING, outbox.PARKED])}


def listed(ctx, everyone=False, user=None):
    """The caller's webhooks, or (administrators) every account's, or
    those of the account whose login is `user` (as given), by id: [{"id",
    "creator", "name", "url", "event" (comma-separated events), "product",
    "component" ("Any" for all), "enabled", "errors" (calls waiting after a
    failure, or parked), "pending" (calls waiting), "disabled_reason",
    "last_attempt", "last_success", "last_error",
    "previous_secret_valid_until"}].
    Errors: 304 `everyone` or `user` without admin; 53 a user that is not
    a single value.
    """
    sql, args = f"SELECT {_COLUMNS}{_FROM}", []
    if everyone or user not in (None, ""):
        if not _is_admin(ctx):
            raise ServiceError(AUTH_FAILURE, "Only administrators see the webhooks of other "
                                             "accounts.")
        if not everyone:
            user = catalog.user_by_login(ctx.conn, Params({"user": user}).str("user"))
            sql += " WHERE w.user_id = ?"
            args.append(user["id"] if user else 0)
    else:
        sql += " WHERE w.user_id = ?"
        args.append(ctx.caller.id)
    rows = ctx.conn.execute(sql + " ORDER BY w.id", args).fetchall()
    counts = _counts(ctx, [row["id"] for row in rows])
    return [_webhook_object(ctx, row, counts) for row in rows]


def _events(value):
    """The events of a webhook, as stored. Errors: 50 none; 32000 unknown."""
    names = value.split(",") if isinstance(value, str) else value
    if not isinstance(names, list):
        raise ServiceError(USER_ERROR, "The events are a list (or a comma-separated string).")
    chosen = []
    for name in names:
        name = str(name).strip()
        if name and name not in WEBHOOK_EVENTS:
            raise ServiceError(USER_ERROR, f"'{name}' is not a webhook event; they are: "
                                           f"{', '.join(WEBHOOK_EVENTS)}.")
        if name and name not in chosen:
            chosen.append(name)
    if not chosen:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "Choose at least one event: "
                                                 f"{', '.join(WEBHOOK_EVENTS)}.")
    return ",".join(name for name in WEBHOOK_EVENTS if name in chosen)


def _name(value):
    name = value.strip() if isinstance(value, str) else ""
    if not name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "A webhook needs a name.")
    if len(name) > MAX_NAME or any(not c.isprintable() for c in name):
        raise ServiceError(USER_ERROR, f"A webhook's name is at most {MAX_NAME} printable "
                                       "characters.")
    return name


def _url(ctx, value):
    if not isinstance(value, str) or not value.strip():
        raise ServiceError(OBJECT_NOT_SPECIFIED, "A webhook needs a URL.")
    url = value.strip()
    if len(url) > MAX_URL:
        raise ServiceError(USER_ERROR, f"A webhook's URL is at most {MAX_URL} characters.")
    try:
        addresses.check_url(url, ctx.param_is_on("webhooks_allow_private_addresses"))
    except addresses.AddressRefused as refused:
        raise ServiceError(USER_ERROR, f"This URL cannot be a webhook's: {refused}.") from None
    return url


def _scope(ctx, product_value, component_value):
    """(product id, component id) of a webhook; None for Any. Errors: 304 Any
    without webhooks_any_product_group; 106 a product the caller cannot see
    (or that does not exist); 51 an unknown component."""
    product_name = (product_value or "").strip() if isinstance(product_value, str) else ""
    if not product_name:
        raise ServiceError(OBJECT_NOT_SPECIFIED, "A webhook needs a product (or 'Any').")
    if product_name.lower() == ANY.lower():
        group = ctx.param("webhooks_any_product_group")
        if not group or not ctx.caller.in_group(group):
            raise ServiceError(AUTH_FAILURE, f"Only members of '{group or '-'}' may register a "
                                             "webhook for every product.")
        return None, None
    product = catalog.product_by_name(ctx.conn, product_name)
    if product is None or not group_control.can_see_product(ctx, product["id"]):
        raise ServiceError(PRODUCT_ACCESS_DENIED, f"Either the product '{product_name}' does "
                                                  "not exist, or you don't have access to it.")
    name = (component_value or "").strip() if isinstance(component_value, str) else ""
    if not name or name.lower() == ANY.lower():
        return product["id"], None
    component = catalog.component_by_name(ctx.conn, product["id"], name)
    if component is None:
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no component '{name}' in the "
                                                  f"'{product['name']}' product.")
    return product["id"], component["id"]


def _unique_name(ctx, user_id, name, webhook_id=None):
    row = ctx.conn.execute("SELECT id FROM webhooks WHERE user_id = ? AND lower(name) = lower(?)",
                           (user_id, name)).fetchone()
    if row is not None and row["id"] != webhook_id:
        raise ServiceError(USER_ERROR, f"You already have a webhook named '{name}'.")


def create(ctx, name, url, events, product, component=None):
    """Register a webhook of the caller (all values as given: see _name,
    _url, _events, _scope). Returns (id, secret): the secret (whsec_...)
    is not shown again.
    Errors: 304 not in webhooks_group, or "Any" without
    webhooks_any_product_group; 50 name, url, events or product missing;
    106 a product the caller cannot see; 51 unknown component; 32000
    webhooks turned off, an unknown event, a URL that may not be called, a
    name in use or too long.
    """
    require_enabled(ctx)
    _require_member(ctx)
    name = _name(name)
    url = _url(ctx, url)
    events = _events(events)
    product_id, component_id = _scope(ctx, product, component)
    _unique_name(ctx, ctx.caller.id, name)
    secret = signature.new_secret()
    webhook_id = ctx.conn.execute(
        "INSERT INTO webhooks (user_id, name, url, events, product_id, component_id, enabled,"
        " disabled_reason, secret, created_at, last_error) VALUES (?, ?, ?, ?, ?, ?, 1, '', ?,"
        " ?, '') RETURNING id", (ctx.caller.id, name, url, events, product_id, component_id,
                                 secret, dates.to_db(ctx.now))).fetchone()[0]
    audit.record(ctx, "Webhook", webhook_id)
    return webhook_id, secret


def _own_webhook(ctx, value):
    """The webhook row `value` (an id) if the caller owns it or is an
    administrator. Errors: 52 not a number; 51 unknown or someone else's."""
    webhook_id = Params({"id": value}).id("id")
    row = ctx.conn.execute(f"SELECT {_COLUMNS}, w.secret{_FROM} WHERE w.id = ?",
                           (webhook_id,)).fetchone()
    if row is None or (row["user_id"] != ctx.caller.id and not _is_admin(ctx)):
        raise ServiceError(OBJECT_DOES_NOT_EXIST, f"There is no webhook with the id "
                                                  f"'{webhook_id}'.")
    return row


def update(ctx, ids, given):
    """Change the webhooks of `ids` (ids as given; their owner, or an
    administrator).

    given: {field: new value} of the fields given: name, url, events,
    product, component (as given, as in create; a product change resets
    the component unless given), enabled (true enables a disabled webhook
    again and sends its parked calls again, in order), rotate_secret (true:
    a new secret; the old one still signs every call, beside the new, for
    ROTATION_HOURS), drop_previous_secret (true: the old secret stops at
    once). Returns ([{"id", "changes"}], the new secret or None).
    Errors: 51 unknown webhook or another account's; 52 a bad id; 304, 106
    and 32000 as in create (webhooks turned off as well).
    """
    require_enabled(ctx)
    result, secret = [], None
    for value in ids:
        row = _own_webhook(ctx, value)
        changes, sets, args = {}, [], []
        change = functools.partial(_note_change, changes, sets, args)
        if "name" in given:
            name = _name(given["name"])
            _unique_name(ctx, row["user_id"], name, row["id"])
            change("name", "name", row["name"], name)
        if "url" in given:
            change("url", "url", row["url"], _url(ctx, given["url"]))
        if "events" in given:
            change("event", "events", row["events"], _events(given["events"]))
        if "product" in given or "component" in given:
            product_id, component_id = _scope(
                ctx, given["product"] if "product" in given else (row["product"] or ANY),
                given["component"] if "component" in given else (
                    row["component"] if "product" not in given else None))
            change("product", "product_id", row["product_id"], product_id,
                   row["product"] or ANY, _product_name(ctx, product_id))
            change("component", "component_id", row["component_id"], component_id,
                   row["component"] or ANY, _component_name(ctx, component_id))
        if "enabled" in given:
            enabled = given["enabled"]
            if enabled != bool(row["enabled"]):
                change("enabled", "enabled", int(bool(row["enabled"])), int(enabled))
                if enabled:
                    sets.append("disabled_reason = ''")
        if given.get("rotate_secret"):
            secret = signature.new_secret()
            sets += ["secret = ?", "previous_secret = ?", "previous_secret_until = ?"]
            args += [secret, row["secret"],
                     outbox.stamp(ctx.now + timedelta(hours=ROTATION_HOURS))]
            changes["secret"] = {"removed": "", "added": "rotated"}
        elif given.get("drop_previous_secret") and row["previous_secret_until"]:
            sets += ["previous_secret = NULL", "previous_secret_until = NULL"]
            changes["secret"] = {"removed": "previous", "added": ""}
        if sets:
            ctx.conn.execute(f"UPDATE webhooks SET {', '.join(sets)} WHERE id = ?",
                             args + [row["id"]])
            audit.record_changes(ctx, "Webhook", row["id"], changes)
        if "enabled" in changes and given["enabled"]:
            outbox.resend_webhook(ctx.conn, row["id"], ctx.now)
        result.append({"id": row["id"], "changes": changes})
    return result, secret


def _note_change(changes, sets, args, field, column, old, new, shown_old=None, shown_new=None):
    """Notes `field`'s change from `old` to `new` (shown as `shown_old` and
    `shown_new` when given), if any, in `changes` and the UPDATE's `sets` and `args`."""
    if old != new:
        changes[field] = {"removed": str(shown_old if shown_old is not None else old),
                          "added": str(shown_new if shown_new is not None else new)}
        sets.append(f"{column} = ?")
        args.append(new)


def _product_name(ctx, product_id):
    return ANY if product_id is None else catalog.product_by_id(ctx.conn, product_id)["name"]


def _component_name(ctx, component_id):
    return ANY if component_id is None else \
        catalog.component_by_id(ctx.conn, component_id)["name"]


def delete(ctx, ids):
    """Remove the webhooks of `ids` (ids as given; their owner, or an
    administrator); their waiting calls are dropped. Returns [{"id"}].
    Errors: 51 unknown webhook or another account's; 52 a bad id.
    """
    removed = []
    for value in ids:
        row = _own_webhook(ctx, value)
        ctx.conn.execute("DELETE FROM outbox_messages WHERE webhook_id = ? AND state IN (?, ?)",
                         (row["id"], outbox.PENDING, outbox.PARKED))
        ctx.conn.execute("UPDATE outbox_messages SET webhook_id = NULL WHERE webhook_id = ?",
                         (row["id"],))
        ctx.conn.execute("DELETE FROM webhooks WHERE id = ?", (row["id"],))
        audit.record(ctx, "Webhook", row["id"], "deleted", name=row["name"])
        removed.append({"id": row["id"]})
    return removed
