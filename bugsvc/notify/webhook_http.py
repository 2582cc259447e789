"""Calling a webhook: one HTTP POST (stdlib http.client), to the address the
host name resolved to when it was checked (addresses.py), so a name cannot
be re-pointed at an internal address between the check and the call. HTTPS
checks the certificate against the host name. Redirects are not followed
(a 3xx is a failure: the webhook's URL should be changed instead); the
answer's body is read only up to a limit; every step has a timeout.
"""

import email.utils
import http.client
import socket
import ssl
from datetime import datetime, timezone

from . import addresses


TIMEOUT = 15
_READ_LIMIT = 64 * 1024
USER_AGENT = "bugsvc-webhooks"


class CallFailed(Exception):
    """A call that did not get a 2xx answer. status: the HTTP status (None
    when there was no answer); gone: the receiver answered 410 (it wants no
    more calls); retry_after: seconds it asked to wait (Retry-After), or None."""

    def __init__(self, text, status=None, retry_after=None):
        super().__init__(text)
        self.status = status
        self.gone = status == 410
        self.retry_after = retry_after


class _PinnedHTTP(http.client.HTTPConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout)
        self._address = address

    def connect(self):
        self.sock = socket.create_connection((self._address, self.port), self.timeout)


class _PinnedHTTPS(http.client.HTTPSConnection):
    def __init__(self, host, port, address, timeout):
        super().__init__(host, port, timeout=timeout, context=ssl.create_default_context())
        self._address = address

    def connect(self):
        sock = socket.create_connection((self._address, self.port), self.timeout)
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def _retry_after(value):
    if not value:
        return None
    if value.strip().isdigit():
        return int(value.strip())
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=timezone.utc)
    return max(0, int((when - datetime.now(timezone.utc)).total_seconds()))


def post(url, body, headers, allow_private, timeout=TIMEOUT):
    """POST `body` (bytes) with `headers` to `url`. Returns the status (2xx).
    Errors: CallFailed; addresses.AddressRefused for a URL or host that may
    not be called."""
    scheme, host, port, target = addresses.parse(url)
    if not allow_private:
        addresses.check_url(url, allow_private)
    candidates = addresses.resolve(host, port, allow_private)
    connection_class = _PinnedHTTPS if scheme == "https" else _PinnedHTTP
    last = None
    for _, address in candidates:
        conn = connection_class(host, port, address, timeout)
        try:
            conn.request("POST", target, body=body, headers={
                "Content-Type": "application/json", "Accept": "application/json",
                "User-Agent": USER_AGENT, **headers})
            response = conn.getresponse()
            answer = response.read(_READ_LIMIT)
            status = response.status
            retry_after = _retry_after(response.getheader("Retry-After"))
        except (OSError, http.client.HTTPException, ssl.SSLError) as exc:
            last = CallFailed(f"{url}: {exc}")
            continue
        finally:
            conn.close()
        if 200 <= status < 300:
            return status
        excerpt = answer[:200].decode("utf-8", "replace").strip()
        raise CallFailed(f"{url} answered {status}" + (f": {excerpt}" if excerpt else ""),
                         status, retry_after)
    raise last or CallFailed(f"{url}: no address to call")
