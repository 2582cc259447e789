"""XML-RPC at /xmlrpc.cgi, marshalled with the standard library.

Requests are parsed by expat with document type declarations refused, so no
entity is ever declared or expanded. A call's first parameter is its struct of
named parameters. Faults carry the REST error codes and
are sent with HTTP 200, as the reference does.

Values in and out:
- <base64> arrives as a base64 string (what the services take); result keys a
  method declares binary (attachment `data`) leave as <base64>.
- <dateTime.iso8601> arrives as 'YYYY-MM-DDTHH:MM:SSZ' (no zone means UTC).
  Datetimes leave as <dateTime.iso8601> (UTC, no zone): a string is sent so
  when its key is one of DATETIME_KEYS, or a custom field (cf_*), and it has
  the exact form 'YYYY-MM-DDTHH:MM:SSZ' the services emit.
- <nil/> (and an empty <int>, <double> or <dateTime.iso8601>) arrives as null.
  Null members and items are left out of answers, as the reference does; a
  null result is sent as <nil/>.
"""

import base64
import binascii
import logging
import re
import xmlrpc.client
from xml.parsers import expat

from ... import dates
from ...errors import (
    INTERNAL_ERROR,
    POST_ONLY,
    USER_ERROR,
    XMLRPC_ILLEGAL_CONTENT_TYPE,
    XMLRPC_INVALID_VALUE,
    ServiceError,
)
from ..http import credential_headers, read_body


log = logging.getLogger("bugsvc.rpc")

XML_TYPE = "text/xml; charset=UTF-8"
_ACCEPTED_TYPES = ("text/xml", "application/xml")

# Keys of the interface whose values are datetimes.
DATETIME_KEYS = frozenset({
    "creation_time", "last_change_time", "time", "when", "last_visit_ts",
    "creation_date", "modification_date", "db_time", "web_time", "web_time_utc",
    "last_audit_time", "last_seen_date", "at_time",
})
_WIRE_DATETIME = re.compile(r"^(\d{4})-(\d{2})-(\d{2})T(\d{2}:\d{2}:\d{2})Z$")
# Characters XML 1.0 cannot carry at all; they are sent as U+FFFD.
_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]")
_INT32 = (-2**31, 2**31 - 1)
_SPACE = re.compile(r"\s+")


class UnsafeXml(Exception):
    """The request declares a document type or entities."""


class _Unmarshaller(xmlrpc.client.Unmarshaller):
    """The standard unmarshaller, also taking the reference's empty <int>,
    <double> and <dateTime.iso8601> as null, and refusing malformed <base64>."""

    dispatch = dict(xmlrpc.client.Unmarshaller.dispatch)

    def _empty_or(self, handler, data):
        if data.strip():
            handler(self, data)
        else:
            self.append(None)
        self._value = 0

    def end_int(self, data):
        self._empty_or(xmlrpc.client.Unmarshaller.end_int, data)

    def end_double(self, data):
        self._empty_or(xmlrpc.client.Unmarshaller.end_double, data)

    def end_dateTime(self, data):
        self._empty_or(xmlrpc.client.Unmarshaller.end_dateTime, data)

    def end_base64(self, data):
        # Strict, unlike the standard one, which drops characters it does not know.
        self.append(xmlrpc.client.Binary(base64.b64decode(_SPACE.sub("", data), validate=True)))
        self._value = 0

    for _tag in ("i1", "i2", "i4", "i8", "int", "biginteger"):
        dispatch[_tag] = end_int
    dispatch["double"] = end_double
    dispatch["float"] = end_double
    dispatch["dateTime.iso8601"] = end_dateTime
    dispatch["base64"] = end_base64
    del _tag


def _forbid(*_):
    raise UnsafeXml()


def parse_call(data):
    """(method name, parameter tuple) of an XML-RPC methodCall document.

    Errors: 32000 not a well-formed call, or it declares a document type;
    -32600 a value of the wrong form (an <int> that is no number, a bad
    <boolean> or <base64>).
    """
    unmarshaller = _Unmarshaller()
    parser = expat.ParserCreate(None, None)
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    parser.StartDoctypeDeclHandler = _forbid
    parser.EntityDeclHandler = _forbid
    parser.UnparsedEntityDeclHandler = _forbid
    parser.ExternalEntityRefHandler = _forbid
    parser.buffer_text = True
    parser.StartElementHandler = unmarshaller.start
    parser.EndElementHandler = unmarshaller.end
    parser.CharacterDataHandler = unmarshaller.data
    unmarshaller.xml(None, None)      # strings arrive decoded; no second decoding
    try:
        parser.Parse(data, True)
        params = unmarshaller.close()
    except UnsafeXml:
        raise ServiceError(USER_ERROR, "XML-RPC requests may not declare a document type or "
                                       "entities.") from None
    except (ValueError, TypeError, binascii.Error) as exc:
        raise ServiceError(XMLRPC_INVALID_VALUE,
                           f"A value of the XML-RPC request is not valid: {exc}") from None
    except (expat.ExpatError, xmlrpc.client.ResponseError, xmlrpc.client.Fault,
            IndexError, KeyError) as exc:
        raise ServiceError(USER_ERROR, f"The request is not a well-formed XML-RPC call: {exc}") \
            from None
    method = unmarshaller.getmethodname()
    if not method:
        raise ServiceError(USER_ERROR, "The request is not an XML-RPC methodCall.")
    return method, params


def _from_wire(value):
    """A request value as the services take it (base64 and ISO strings)."""
    if isinstance(value, dict):
        return {key: _from_wire(item) for key, item in value.items()}
    if isinstance(value, list):
        return [_from_wire(item) for item in value]
    if isinstance(value, xmlrpc.client.Binary):
        return base64.b64encode(value.data).decode("ascii")
    if isinstance(value, xmlrpc.client.DateTime):
        try:
            return dates.format_datetime(dates.parse_datetime(value.value, "dateTime.iso8601"))
        except ServiceError:
            raise ServiceError(XMLRPC_INVALID_VALUE, f"'{value.value}' is not a valid "
                                                     "dateTime.iso8601 value.") from None
    return value


def call_params(params, binary_in=()):
    """The named parameters of a call from its parameter tuple: the first
    parameter when it is a struct, else none (as the reference)."""
    named = dict(params[0]) if params and isinstance(params[0], dict) else {}
    for key in binary_in:
        if isinstance(named.get(key), str):   # plain text given as the content itself
            named[key] = base64.b64encode(named[key].encode("utf-8")).decode("ascii")
    return _from_wire(named)


def _clean_text(text):
    return _NOT_XML.sub("\ufffd", text)


def to_wire(value, binary_keys=(), key=None):
    """A result value as XML-RPC marshals it (see the module docstring)."""
    if isinstance(value, dict):
        return {_clean_text(str(k)): to_wire(v, binary_keys, str(k))
                for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [to_wire(item, binary_keys, key) for item in value if item is not None]
    if isinstance(value, str):
        if key in binary_keys:
            try:
                return xmlrpc.client.Binary(base64.b64decode(value, validate=True))
            except (binascii.Error, ValueError):
                return _clean_text(value)
        if key is not None and (key in DATETIME_KEYS or key.startswith("cf_")):
            match = _WIRE_DATETIME.match(value)
            if match:
                year, month, day, clock = match.groups()
                return xmlrpc.client.DateTime(f"{year}{month}{day}T{clock}")
        return _clean_text(value)
    if isinstance(value, int) and not isinstance(value, bool):
        # Beyond <int>'s 32 bits the reference sends a <double>.
        return value if _INT32[0] <= value <= _INT32[1] else float(value)
    return value


def response_body(result, binary_keys=()):
    """The methodResponse document for `result`, as bytes."""
    text = xmlrpc.client.dumps((to_wire(result, binary_keys),), methodresponse=True,
                               allow_none=True, encoding="utf-8")
    # A bare carriage return would be read back as a line feed.
    return text.replace("\r", "&#13;").encode("utf-8")


def fault_body(code, message):
    """The methodResponse document of a fault, as bytes."""
    text = xmlrpc.client.dumps(xmlrpc.client.Fault(code, _clean_text(message)),
                               methodresponse=True, encoding="utf-8")
    return text.replace("\r", "&#13;").encode("utf-8")


class XmlRpcAdapter:
    """Falcon sink serving /xmlrpc.cgi through the RPC Dispatcher.

    HEAD answers 200 with no body: python-bugzilla probes it to choose
    XML-RPC over REST.
    """

    def __init__(self, dispatcher, max_body_bytes):
        self.dispatcher = dispatcher
        self.max_body_bytes = max_body_bytes

    def __call__(self, req, resp, **_):
        resp.status = 200
        resp.content_type = XML_TYPE
        if req.method == "HEAD":
            resp.data = b""
            return
        method = None
        try:
            if req.method != "POST":
                raise ServiceError(POST_ONLY, "XML-RPC calls are made with POST.")
            content_type = (req.content_type or "").split(";")[0].strip().lower()
            if content_type not in _ACCEPTED_TYPES:
                raise ServiceError(XMLRPC_ILLEGAL_CONTENT_TYPE,
                                   f"When using XML-RPC, you cannot use "
                                   f"'{req.content_type or ''}' as your content type; use "
                                   "'text/xml'.")
            method, params = parse_call(read_body(req, self.max_body_bytes))
            operation = self.dispatcher.lookup(method)
            req.context.operation = operation.name
            named = call_params(params, operation.file_params)
            result = self.dispatcher.run(operation, named, credential_headers(req),
                                         req.context.client_address)
            resp.data = response_body(result, operation.file_answer)
        except ServiceError as exc:
            resp.data = fault_body(exc.code, exc.message)
        except Exception:
            log.exception("unexpected error in XML-RPC method %s", method)
            resp.data = fault_body(INTERNAL_ERROR,
                                   "An internal error occurred; it has been logged.")
