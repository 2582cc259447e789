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
"""

import logging

from waitress.channel import HTTPChannel
from waitress.server import BaseWSGIServer
from waitress.task import ErrorTask

from .. import errors
from ..web.rest import render

access_log = logging.getLogger("bugsvc.access")


def waitress_body_limit(max_body_bytes):
    """waitress's `max_request_body_size` for our limit: it refuses lengths
    at or over its value, we refuse lengths over ours."""
    return max_body_bytes + 1


class JsonErrorTask(ErrorTask):
    """waitress's error answer, as the interface's error object."""

    def execute(self):
        error = self.request.error
        limit = self.channel.server.adj.max_request_body_size - 1
        if error.code == 413:
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
    """An HTTP connection whose refusals are JsonErrorTasks."""

    error_task_class = JsonErrorTask


def install(server_map):
    """Make every listening server in waitress's `server_map` (the `map`
    given to waitress.create_server) answer refusals with the error object."""
    for dispatcher in list(server_map.values()):
        if isinstance(dispatcher, BaseWSGIServer):
            dispatcher.channel_class = JsonErrorChannel
