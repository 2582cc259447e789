"""Turning a result into bytes: JSON, JSONP or the HTML-wrapped page
(compat.md sections 4 and 5)."""

import hashlib
import html
import json
import re

import orjson

JSON = "application/json"
JAVASCRIPT = "application/javascript"
TEXT_JAVASCRIPT = "text/javascript"
HTML = "text/html"
_OFFERED = (JSON, JAVASCRIPT, TEXT_JAVASCRIPT, HTML)
_CALLBACK = re.compile(r"^[A-Za-z0-9_.\[\]]+$")

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


def valid_callback(value):
    """The trimmed JSONP callback name, or None when it is not acceptable."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _CALLBACK.match(value) else None


def wrap(result):
    """Top-level shape: objects and arrays as they are, scalars as {"result": v}."""
    return result if isinstance(result, (dict, list)) else {"result": result}


def json_bytes(data):
    """Compact UTF-8 JSON of `data`. orjson writes it (a bug search's answer
    encodes about 7 times faster than with the json module); what orjson
    refuses (an integer beyond 64 bits) the json module writes alike."""
    try:
        return orjson.dumps(data)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def encode(result, media, callback=None):
    """Return (body bytes, content type) for `result`."""
    data = wrap(result)
    if callback:
        text = json_bytes(data)
        # U+2028/U+2029 are legal in JSON but end a line in older JavaScript.
        text = text.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
        return b"/**/" + callback.encode("utf-8") + b"(" + text + b")", TEXT_JAVASCRIPT
    if media == HTML:
        pretty = json.dumps(data, ensure_ascii=False, indent=1, sort_keys=True)
        page = ("<!DOCTYPE html>\n<html><head><meta charset=\"UTF-8\"><title>bugsvc</title></head>"
                "<body><pre>" + html.escape(pretty, quote=True) + "</pre></body></html>\n")
        return page.encode("utf-8"), "text/html; charset=UTF-8"
    content_type = JSON + "; charset=UTF-8" if media == JSON else media
    return json_bytes(data), content_type


def etag(body, content_type):
    """The ETag of a response: MD5 of the body and its content type."""
    return '"' + hashlib.md5(body + content_type.encode(), usedforsecurity=False).hexdigest() + '"'


def etag_matches(if_none_match, tag):
    """True when an If-None-Match header names `tag` (or is `*`); it may list
    several tags, quoted or not, weak or strong."""
    for candidate in re.split(r"[\s,]+", if_none_match or ""):
        candidate = candidate[2:] if candidate.startswith("W/") else candidate
        if candidate == "*" or candidate.strip('"') == tag.strip('"'):
            return True
    return False


def respond(req, resp, result, status, callback=None):
    """Fill falcon's `resp` with `result`, negotiated against `req`."""
    media = negotiate(req.get_header("Accept"))
    body, content_type = encode(result, media, callback)
    resp.status = status
    resp.content_type = content_type
    resp.set_header("Vary", "Accept")
    for name, value in CORS_HEADERS.items():
        resp.set_header(name, value)
    tag = etag(body, content_type)
    resp.set_header("ETag", tag)
    if status == 200 and etag_matches(req.get_header("If-None-Match"), tag):
        resp.status = 304
        resp.data = b""
        resp.delete_header("Content-Type")    # a 304 carries no representation
        return
    resp.data = body
