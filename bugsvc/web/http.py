"""What every way in over HTTP shares (REST, JSON-RPC, XML-RPC): reading
requests (path, query string, headers, a body within the size limit),
writing JSON and JSONP, entity tags, and the middleware that logs each
request and refuses oversized bodies. One module, so the transports cannot
drift apart."""

import json
import logging
import re
import time
from urllib.parse import unquote, unquote_plus

import orjson
import xxhash

from ..accounts.auth import CREDENTIAL_HEADERS
from ..errors import USER_ERROR, RequestTooLarge, ServiceError
from ..log_lines import line_writer
from .client_address import client_address


access_log = logging.getLogger("bugsvc.access")

JSONP_TYPE = "text/javascript; charset=UTF-8"
_CALLBACK = re.compile(r"^[A-Za-z0-9_.\[\]]+$")
# Query keys whose values never reach the log: every spelling of an API key,
# password, token or secret (Bugzilla_/Service_ prefixed or plain, any case,
# even percent-encoded), `t` (the token of a mailed token.cgi link, the
# signature of an attachment link) and JSON-RPC's `params` (credentials
# inside JSON).
_SECRET_KEY_ENDINGS = ("api_key", "password", "token", "secret")
_SECRET_KEYS = ("t", "params")
# The parameters a query string or form body may hold. A real client's hold
# a few hundred at most (a search of 200 terms, a form, a list of bug ids),
# and Bugzilla's usual front server, Apache, refuses a request line over
# 8,190 bytes (some 4,000 parameters); reading more would only cost time.
MAX_PARAMETERS = 10_000
# How much of a query string an access line shows; the rest is counted.
LOGGED_QUERY_CHARS = 2048


# Reading requests ---------------------------------------------------------------

def raw_path(req):
    """The request path still percent-encoded (so %2F inside a name survives)."""
    uri = req.env.get("REQUEST_URI") or req.env.get("RAW_URI")
    if uri:
        path = uri.split("?", 1)[0]
        if "://" in path:
            path = "/" + path.split("://", 1)[1].split("/", 1)[-1]
        return path
    return req.path


def parse_query(query_string):
    """{key: value} from a query string or form body (as urllib's parse_qsl
    with blank values kept and undecodable bytes replaced); a repeated key
    gives a list.

    Errors: 32000 for more than MAX_PARAMETERS parameters, refused before
    any is read.
    """
    if not query_string:
        return {}
    if query_string.count("&") >= MAX_PARAMETERS:
        raise ServiceError(USER_ERROR, f"The request has more than {MAX_PARAMETERS} "
                                       "parameters; split it into smaller requests.")
    result = {}
    for part in query_string.split("&"):
        if not part:
            continue
        key, _, value = part.partition("=")
        # Decoded only where there is something to decode: most are plain.
        if "+" in key:
            key = key.replace("+", " ")
        if "%" in key:
            key = unquote(key, errors="replace")
        if "+" in value:
            value = value.replace("+", " ")
        if "%" in value:
            value = unquote(value, errors="replace")
        existing = result.get(key)
        if existing is None:
            result[key] = value
        elif isinstance(existing, list):
            existing.append(value)          # in place: a key repeated n times costs n, not n²
        else:
            result[key] = [existing, value]
    return result


def upper_headers(req):
    """Every header of the request keyed by upper-case name, straight from
    the WSGI environment (a forge's event, whose signature and kind come in
    headers of its own; a call's credentials come by credential_headers)."""
    return {key[5:].replace("_", "-"): value for key, value in req.env.items()
            if key.startswith("HTTP_")}


def wsgi_header_keys(names):
    """((NAME, its WSGI environment key), ...) for upper-case header names,
    for headers_named."""
    return tuple((name, "HTTP_" + name.replace("-", "_")) for name in names)


def headers_named(req, keys):
    """The request's headers among `keys` (wsgi_header_keys'), keyed by
    upper-case name as upper_headers keys them: a dozen look-ups where
    upper_headers copies every header the request has."""
    env = req.env
    return {name: env[key] for name, key in keys if key in env}


_CREDENTIAL_KEYS = wsgi_header_keys(CREDENTIAL_HEADERS)


def credential_headers(req):
    """The request's headers that may carry its credentials (what the
    Runner reads them from), keyed by upper-case name."""
    return headers_named(req, _CREDENTIAL_KEYS)


def read_body(req, limit):
    """The request body as bytes (b"" when there is none).

    Errors: RequestTooLarge (32000, HTTP 413) for a body over `limit` bytes:
    refused before it is read when its length is declared, else as soon as
    more than `limit` bytes arrived.
    """
    length = req.content_length
    if length is not None and length > limit:
        raise RequestTooLarge(limit)
    data = req.bounded_stream.read(limit + 1) if length is None or length > 0 else b""
    if len(data) > limit:
        raise RequestTooLarge(limit)
    return data


# Writing answers ----------------------------------------------------------------

def json_bytes(data):
    """Compact UTF-8 JSON of `data`. orjson writes it (a bug search's answer
    encodes about 7 times faster than with the json module); what orjson
    refuses (an integer beyond 64 bits) the json module writes alike."""
    try:
        return orjson.dumps(data)
    except (orjson.JSONEncodeError, TypeError):
        return json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")


def valid_callback(value):
    """The trimmed JSONP callback name, or None when it is not acceptable."""
    if not isinstance(value, str):
        return None
    value = value.strip()
    return value if _CALLBACK.match(value) else None


def jsonp(callback, json_text):
    """The JSONP body calling `callback` with JSON bytes `json_text`."""
    # U+2028/U+2029 are legal in JSON but end a line in older JavaScript.
    text = json_text.replace("\u2028".encode(), b"\\u2028").replace("\u2029".encode(), b"\\u2029")
    return b"/**/" + callback.encode("utf-8") + b"(" + text + b")"


def etag(body, content_type):
    """The ETag of a response: the 128-bit XXH3 hash of the body and its
    content type, opaque to clients. A tag only has to change when the
    answer does, so a hash made for speed does: a 50-bug answer (about
    60 KB) takes about 1 microsecond, where BLAKE2b took 45 and MD5 70."""
    digest = xxhash.xxh3_128(body)
    digest.update(content_type.encode())        # not body + ...: a copy of the whole body
    return '"' + digest.hexdigest() + '"'


def etag_matches(if_none_match, tag):
    """True when an If-None-Match header names `tag` (or is `*`); it may list
    several tags, quoted or not, weak or strong."""
    if not if_none_match:
        return False
    for candidate in re.split(r"[\s,]+", if_none_match or ""):
        candidate = candidate[2:] if candidate.startswith("W/") else candidate
        if candidate == "*" or candidate.strip('"') == tag.strip('"'):
            return True
    return False


def not_modified(req, resp, body, content_type):
    """Set the answer's ETag; True (and a bodiless 304 in `resp`) when the
    request's If-None-Match already names it."""
    tag = etag(body, content_type)
    resp.set_header("ETag", tag)
    if not etag_matches(req.get_header("If-None-Match"), tag):
        return False
    resp.status = 304
    resp.data = b""
    resp.content_type = None
    resp.delete_header("Content-Type")    # a 304 carries no representation
    return True


# Middleware ---------------------------------------------------------------------

def param_name(part):
    """The name of a query string's `part` ('name=value'), decoded and
    lower-case, as checks for credentials compare it."""
    return unquote_plus(part.split("=", 1)[0]).strip().lower()


def redacted(query_string):
    """The query string as an access line shows it: the values of credential
    parameters hidden, and past LOGGED_QUERY_CHARS characters (whole
    parameters) only how many more there were."""
    if not query_string:
        return ""
    parts, shown = [], 0
    for part in query_string.split("&"):
        if shown >= LOGGED_QUERY_CHARS:
            parts.append(f"[{len(query_string) - shown} more characters]")
            break
        shown += len(part) + 1
        name = param_name(part)
        secret = name.endswith(_SECRET_KEY_ENDINGS) or name in _SECRET_KEYS
        parts.append(part.split("=", 1)[0] + "=[hidden]" if secret else part)
    return "?" + "&".join(parts)


class ClientAddress:
    """Falcon middleware: `req.context.client_address` is the address the
    request comes from: the socket's peer, or what a trusted proxy forwarded
    (web/client_address.py). trusted: the trusted proxies' networks."""

    def __init__(self, trusted):
        self.trusted = trusted

    def process_request(self, req, resp):
        req.context.client_address = client_address(
            req.remote_addr, req.get_header("X-Forwarded-For"), self.trusted)


class AccessLog:
    """Falcon middleware: one line per request (with the client's address),
    secrets hidden."""

    def process_request(self, req, resp):
        req.context.started = time.perf_counter()

    def process_response(self, req, resp, resource, req_succeeded):
        elapsed = (time.perf_counter() - getattr(req.context, "started",
                                                 time.perf_counter())) * 1000
        status = resp.status if isinstance(resp.status, int) else str(resp.status).split()[0]
        size = len(resp.data) if resp.data is not None else 0
        address = getattr(req.context, "client_address", req.remote_addr)
        message = (f'{address} "{req.method} {req.path}{redacted(req.query_string)}" {status} '
                   f'{size} {elapsed:.1f}ms')
        write_line = line_writer(access_log)
        if write_line is not None:
            write_line(access_log.name, message)    # the same line, without a LogRecord
        else:
            access_log.info("%s", message)


class BodyLimit:
    """Falcon middleware: a request whose Content-Length is over the limit is
    refused (413) before anything reads its body. A body without a length is
    capped where it is read (read_body); waitress enforces the same limit
    itself, before the request reaches the application (serving/server_errors.py)."""

    def __init__(self, limit):
        self.limit = limit

    def process_request(self, req, resp):
        length = req.content_length      # a malformed header: 400, code 32000
        if length is not None and length > self.limit:
            raise RequestTooLarge(self.limit)
