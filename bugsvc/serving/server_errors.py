"""Requests that waitress refuses itself, before the application sees them,
answered with the one error object instead of waitress's plain text.

waitress checks the body limit (`max_request_body_size`) as soon as the
headers are read: a Content-Length over the limit is refused without reading
the body, and a chunked body is cut off once it passes the limit. Malformed
requests (bad framing, headers too large, unsupported transfer codings) are
refused there too.

Answers: 413 with code 32000 for a body over the limit; 400 with code 32000
for every other refusal (-32000 for waitress's own internal error), since the
interface answers only 400, 401 and 404 otherwise.

A client that speaks TLS to this plain-HTTP port (someone typed https://)
sends a TLS handshake where a request line belongs; waitress would wait for
a line that never comes until the connection times out. Such a connection is
answered at once, in plain HTTP, with the 400 error object and closed, as web
servers do: the client's TLS layer reports the answer as a protocol error
(python's ssl: "wrong version number") instead of hanging.
"""

import logging

from waitress.channel import HTTPChannel
from waitress.task import ErrorTask
from waitress.utilities import BadRequest

from .. import errors
from ..web.rest import render


access_log = logging.getLogger("bugsvc.access")


def waitress_body_limit(max_body_bytes):
    """waitress's `max_request_body_size` for our limit: it refuses lengths
    at or over its value, we refuse lengths over ours."""
    return max_body_bytes + 1


# A TLS record carrying a handshake starts with these bytes: content type 22
# (handshake), then the major version 3 (SSL 3.0 and every TLS version).
_TLS_HANDSHAKE = 0x16
_TLS_MAJOR_VERSION = 0x03


def starts_tls_handshake(data):
    """True when `data`, the first bytes of a connection, begin a TLS
    handshake rather than an HTTP request (whose first byte is a letter of
    its method)."""
    return (len(data) >= 1 and data[0] == _TLS_HANDSHAKE
            and (len(data) < 2 or data[1] == _TLS_MAJOR_VERSION))


class TlsOnPlainPort(BadRequest):
    """A TLS handshake sent to the plain-HTTP port."""

    reason = "TLS spoken to a plain HTTP port"


class JsonErrorTask(ErrorTask):
    """waitress's error answer, as the interface's error object."""

    def execute(self):
        error = self.request.error
        limit = self.channel.server.adj.max_request_body_size - 1
        if isinstance(error, TlsOnPlainPort):
            failure = errors.ServiceError(errors.USER_ERROR, "This port speaks plain HTTP, "
                                          "not TLS: use an http:// address.")
            status = "400 Bad Request"
        elif error.code == 413:
            failure, status = errors.RequestTooLarge(limit), "413 Content Too Large"
        elif error.code >= 500 and error.code != 501:
            failure = errors.ServiceError(errors.INTERNAL_ERROR, "An internal error occurred.")
            status = "400 Bad Request"
        else:
            failure = errors.ServiceError(errors.USER_ERROR,
                                          f"The request could not be read: {error.reason}.")
            status = "400 Bad Request"
        body, content_type = render.encode(failure.body(), render.JSON)
        self.status = status
        self.response_headers.append(("Content-Type", content_type))
        self.response_headers.extend(render.CORS_HEADERS.items())
        self.set_close_on_finish()
        self.content_length = len(body)
        self.write(body)
        # The path only: a query string may carry credentials.
        access_log.info('%s "%s %s" %s %d %.1fms',
                        self.channel.addr[0] if self.channel.addr else "-",
                        getattr(self.request, "command", None) or "-",
                        getattr(self.request, "path", None) or "-", status.split()[0],
                        len(body), 0.0)


class JsonErrorChannel(HTTPChannel):
    """An HTTP connection whose refusals are JsonErrorTasks, and which
    answers a TLS handshake at once (see the module's docstring)."""

    error_task_class = JsonErrorTask
    _first_bytes_seen = False

    def received(self, data):
        if data and not self._first_bytes_seen:
            self._first_bytes_seen = True
            if starts_tls_handshake(data):
                return self._refuse_tls()
        return super().received(data)

    def _refuse_tls(self):
        """Queue the refusal of the handshake (read whole: nothing of it is
        left unread when the connection closes after the answer)."""
        refusal = self.parser_class(self.adj)
        refusal.error = TlsOnPlainPort("")
        refusal.completed = True
        with self.requests_lock:
            if self.will_close or self.close_when_flushed:
                return False
            self.requests.append(refusal)
            if len(self.requests) == 1:
                self.server.add_task(self)
        return True
