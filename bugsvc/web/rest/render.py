"""Turning a result into bytes: JSON, JSONP or the HTML-wrapped page, chosen
as Bugzilla chooses by the Accept header and `callback`."""

import functools
import html
import json

from ..http import json_bytes, jsonp, not_modified


JSON = "application/json"
JAVASCRIPT = "application/javascript"
TEXT_JAVASCRIPT = "text/javascript"
HTML = "text/html"
_OFFERED = (JSON, JAVASCRIPT, TEXT_JAVASCRIPT, HTML)
# Clients send a few Accept headers, the same with every request: the
# choice for the last 256 is kept (of headers short enough that keeping
# them costs little).
_KEPT_ACCEPT_CHARS = 256

CORS_HEADERS = {
    "Access-Control-Allow-Origin": "*",
    "Access-Control-Allow-Headers": "origin, content-type, accept, x-requested-with, "
                                    "x-bugzilla-api-key, x-bugzilla-login, x-bugzilla-password, "
                                    "x-bugzilla-token, x-service-api-key, x-service-login, "
                                    "x-service-password, x-service-token, authorization",
}


def negotiate(accept):
    """Pick the response type for an Accept header (q-values honoured, exact
    names only; nothing suitable means JSON)."""
    if not accept:
        return JSON
    if len(accept) <= _KEPT_ACCEPT_CHARS:
        return _kept_choice(accept)
    return _choice(accept)


@functools.lru_cache(maxsize=256)
def _kept_choice(accept):
    return _choice(accept)


def _choice(accept):
    choices = []
    for position, item in enumerate(accept.split(",")):
        parts = [p.strip() for p in item.split(";")]
        media, quality = parts[0].lower(), 1.0
        for part in parts[1:]:
            if part.lower().startswith("q="):
                try:
                    quality = float(part[2:])
                except ValueError:
                    quality = 0.0
        if media in _OFFERED and quality > 0:
            choices.append((-quality, position, media))
    return min(choices)[2] if choices else JSON


def wrap(result):
    """Top-level shape: objects and arrays as they are, scalars as {"result": v}."""
    return result if isinstance(result, (dict, list)) else {"result": result}


def encode(result, media, callback=None):
    """Return (body bytes, content type) for `result`."""
    data = wrap(result)
    if callback:
        return jsonp(callback, json_bytes(data)), TEXT_JAVASCRIPT
    if media == HTML:
        pretty = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        page = ("<!DOCTYPE html>\n<html><head><meta charset=\"UTF-8\"><title>bugsvc</title></head>"
                "<body><pre>" + html.escape(pretty, quote=True) + "</pre></body></html>\n")
        return page.encode("utf-8"), "text/html; charset=UTF-8"
    content_type = JSON + "; charset=UTF-8" if media == JSON else media
    return json_bytes(data), content_type


def respond(req, resp, result, status, callback=None, media=None):
    """Fill falcon's `resp` with `result`, as `media` (default: negotiated
    against `req`'s Accept header)."""
    media = media or negotiate(req.get_header("Accept"))
    body, content_type = encode(result, media, callback)
    resp.status = status
    resp.content_type = content_type
    resp.set_header("Vary", "Accept")
    for name, value in CORS_HEADERS.items():
        resp.set_header(name, value)
    if status == 200 and not_modified(req, resp, body, content_type):
        return
    resp.data = body
