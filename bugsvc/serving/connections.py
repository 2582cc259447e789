"""Connections: no client may cost the others their service by being slow
or idle.

waitress reads a request, body included, in its one network thread and hands
only complete requests to the request threads, so the threads are never
held by a client that sends slowly. What a slow or idle client can hold is a
connection: waitress stops accepting at its connection limit (100 by
default) and closes a connection only after 120 seconds without a byte, so
a hundred half-sent requests, each trickling a byte now and then, locked
every other client out. The server and connection classes here add:

- a deadline for a request's headers (`header_seconds` from its first
  byte) and for its body (`body_seconds` more, plus a second for every
  `body_rate` bytes received, so a large upload on a slow line still
  arrives while a trickle does not);
- a limit of connections per client address (`per_address`; the addresses
  of trusted proxies are exempt, every client comes through them): a
  further connection first takes the place of an idle one of the same
  address, else it is answered 503 and closed;
- idle connections (between requests, nothing to send) give way: when the
  server is at its connection limit the longest idle ones are closed to
  make room, and any idle longer than `idle_seconds` is closed;
- a client that stops reading its answer is cut off after `send_seconds`
  without progress, which frees the request thread waiting to write;
- a limit of request threads per client address (`requests_per_address`,
  see dispatch.py): the address's further complete requests wait their
  turn, so one client's expensive requests cannot keep every thread.

The limits hold per serving process (each of --workers N has its own).
Worker processes sharing one listening socket take new connections in
turn by how many each holds (workers.ConnectionBalance).

A request thread sends an answer written in one piece with its header in
one send, straight from the answer's bytes (OneSendTask,
GuardedChannel.send_soon); waitress's buffers hold only what the socket
does not take at once.
"""

import dataclasses
import functools
import socket
import time

from waitress.adjustments import Adjustments
from waitress.channel import ClientDisconnected
from waitress.server import TcpWSGIServer
from waitress.task import WSGITask

from ..web.client_address import client_address, in_networks
from .dispatch import FairTaskDispatcher
from .response_head import response_head
from .server_errors import JsonErrorChannel


REFUSED = (b"HTTP/1.1 503 Service Unavailable\r\nRetry-After: 10\r\nContent-Length: 0\r\n"
           b"Connection: close\r\n\r\n")


@dataclasses.dataclass(frozen=True)
class ConnectionRules:
    """What a connection may hold. limit: connections of the process;
    per_address: of one client address (0: no such limit); exempt: networks
    whose addresses the per-address limits spare (trusted proxies, whose
    X-Forwarded-For names the client);
    header_seconds, body_seconds, body_rate: the request deadlines (see the
    module); idle_seconds: between requests; send_seconds: without any
    progress writing an answer; requests_per_address: request threads one
    client address may hold at once (0: no such limit)."""
    limit: int = 500
    per_address: int = 64
    exempt: tuple = ()
    header_seconds: float = 20.0
    body_seconds: float = 20.0
    body_rate: int = 500
    idle_seconds: float = 60.0
    send_seconds: float = 60.0
    requests_per_address: int = 2


class OneSendTask(WSGITask):
    """waitress's request task, except that an answer written in one piece
    whose length is declared goes out with its header in one send (waitress
    sends the header, then the body: two system calls and two packets for
    the client to wake up for, where one does), straight from the answer's
    bytes (GuardedChannel.send_soon); its head is waitress's, made for less
    (response_head.py)."""

    def build_response_header(self):
        return response_head(self)

    def write(self, data):
        if (self.complete and not self.wrote_header and self.has_body and data
                and not self.chunked_response and self.content_length == len(data)):
            header = self.build_response_header()
            self.wrote_header = True
            self.content_bytes_written += len(data)
            self.channel.send_soon(header + data)
            return
        super().write(data)


class GuardedChannel(JsonErrorChannel):
    """A connection that knows when the request it is reading began (for
    a new connection: when it was opened, so a client that connects and
    sends nothing has the same deadline) and how many bytes of it came,
    for the deadlines of GuardedServer."""

    request_began = None      # time.time() the request being read began; None between requests
    request_bytes = 0
    serving = False           # a request thread is serving this connection now
    task_class = OneSendTask

    def __init__(self, server, sock, addr, adj, map=None):
        super().__init__(server, sock, addr, adj, map)
        self.request_began = self.creation_time
        self.client = addr[0] if addr else ""
        server.opened(self)

    def received(self, data):
        if data and self.request_began is None:
            self.request_began, self.request_bytes = time.time(), 0
        self.request_bytes += len(data or b"")
        result = super().received(data)
        if self.request is None and self.requests:
            self.request_began = None           # complete: the deadline is met
        return result

    def send_soon(self, data):
        """write_soon, for a request thread's whole answer `data`: what the
        socket takes at once is sent from `data` itself when nothing waits
        to be sent before it; only the rest goes through waitress's buffers
        (which copy an answer over 8 KB into a BytesIO and out again, and
        one over 1 MB into a temporary file). Errors: ClientDisconnected
        when the client is gone."""
        if not self.connected:
            raise ClientDisconnected
        with self.outbuf_lock:
            if not self.total_outbufs_len:
                sent = self.send(data, do_close=False)
                if sent:
                    self.last_activity = time.time()
                    if sent == len(data):
                        return
                    data = data[sent:]
        self.write_soon(data)

    def del_channel(self, map=None):
        if self._fileno is not None and self._fileno in self.server.active_channels:
            self.server.closed(self)
        super().del_channel(map)

    def service(self):
        """Serve the connection's next request (in a request thread)."""
        self.serving = True
        try:
            super().service()
        finally:
            self.serving = False
            if self.total_outbufs_len and self.connected:
                self.server.pull_trigger()      # what the thread left to send: the loop sends it

    def writable(self):
        """waitress's, except while a request thread serves the connection
        with less than `outbuf_high_watermark` of its answer waiting. That
        thread sends what it writes itself, and wakes the loop for what the
        socket did not take; while it held the answer's lock, waitress's
        "writable" made the network thread spin (poll answering at once, the
        lock still taken, over and over), taking the interpreter's lock from
        the threads doing the work. Past the watermark the thread waits for
        the loop to send, as in waitress."""
        if (self.serving and self.total_outbufs_len <= self.adj.outbuf_high_watermark
                and not self.will_close and not self.close_when_flushed):
            return False
        return super().writable()

    def is_idle(self):
        """True between requests: nothing being read, served or written."""
        return (self.request_began is None and not self.requests and self.request is None
                and not self.total_outbufs_len and not self.will_close
                and not self.close_when_flushed)

    def overdue(self, now, rules):
        """True when the request being read missed its deadline."""
        if self.request_began is None or self.requests:
            return False
        allowed = rules.header_seconds
        if self.request is not None and self.request.headers_finished:
            allowed += rules.body_seconds + self.request_bytes / rules.body_rate
        return now - self.request_began > allowed

    def stalled(self, now, rules):
        """True when an answer waits to be written and the client has taken
        nothing of it for send_seconds."""
        return bool(self.total_outbufs_len) and now - self.last_activity > rules.send_seconds


class GuardedServer(TcpWSGIServer):
    """waitress's TCP server with the rules of ConnectionRules."""

    channel_class = GuardedChannel

    def __init__(self, application, rules, balance=None, **kw):
        self.rules = rules
        self.balance = balance     # the workers' ConnectionBalance (workers.py), or None
        self.per_address = {}
        self.connections = 0
        self.refused = 0           # connections refused for their address's limit
        self.cut_off = 0           # connections closed for a missed deadline or a stall
        super().__init__(application, **kw)

    # Counting per address ------------------------------------------------------------

    def opened(self, channel):
        self.per_address[channel.client] = self.per_address.get(channel.client, 0) + 1
        self.connections += 1
        if self.balance is not None:
            self.balance.hold(self.connections)

    def closed(self, channel):
        count = self.per_address.get(channel.client, 0) - 1
        if count > 0:
            self.per_address[channel.client] = count
        else:
            self.per_address.pop(channel.client, None)
        self.connections -= 1
        if self.balance is not None:
            self.balance.hold(self.connections)

    def client_of(self, channel):
        """The client address of the request `channel` is about to serve:
        its peer, or whom a trusted proxy's X-Forwarded-For names."""
        request = channel.requests[0] if channel.requests else None
        forwarded = request.headers.get("X_FORWARDED_FOR") if request is not None else None
        return client_address(channel.client, forwarded, self.rules.exempt)

    def add_task(self, channel):
        """Hand the complete request of `channel` to the request threads, in
        its client address's queue."""
        self.task_dispatcher.add_task(channel, self.client_of(channel))

    def _exempt(self, address):
        return in_networks(address, self.rules.exempt)

    # Accepting -----------------------------------------------------------------------

    def handle_accept(self):
        try:
            accepted = self.accept()
            if accepted is None:
                return
            conn, addr = accepted
            self.set_socket_options(conn)
        except OSError:
            return
        address = addr[0] if addr else ""
        limit = self.rules.per_address
        if (limit and self.per_address.get(address, 0) >= limit and not self._exempt(address)
                and not self._make_room(1, address)):
            self.refused += 1
            _refuse(conn)
            return
        self.channel_class(self, conn, addr, self.adj, map=self._map)

    def readable(self):
        if self.accepting and len(self._map) >= self.adj.connection_limit:
            # Idle connections give way to new ones before the server stops accepting.
            self._make_room(len(self._map) - self.adj.connection_limit + 1)
        if self.balance is not None and not self.balance.may_accept(self.connections):
            return False        # another worker holds fewer connections: it takes the next
        return super().readable()

    def _make_room(self, wanted, address=None):
        """Close up to `wanted` idle connections (of `address`, or of anyone),
        the longest idle first; True when that many were found."""
        idle = sorted((channel for channel in self.active_channels.values()
                       if channel.is_idle() and (address is None or channel.client == address)),
                      key=lambda channel: channel.last_activity)[:wanted]
        for channel in idle:
            channel.handle_close()
        return len(idle) >= wanted

    # Deadlines -----------------------------------------------------------------------

    def maintenance(self, now):
        """Close connections whose request missed its deadline, whose client
        stopped reading its answer, or that were idle too long (waitress
        calls this every cleanup_interval seconds)."""
        for channel in list(self.active_channels.values()):
            if channel.overdue(now, self.rules) or channel.stalled(now, self.rules):
                self.cut_off += 1
                channel.handle_close()
            elif channel.is_idle() and now - channel.last_activity > self.rules.idle_seconds:
                channel.will_close = True


def _refuse(conn):
    """Answer 503 to a connection over its address's limit, and close it;
    never waits for the client."""
    try:
        conn.setblocking(False)
        conn.send(REFUSED)
        conn.shutdown(socket.SHUT_RDWR)
    except OSError:
        pass
    finally:
        conn.close()


def create_server(application, sock, rules, map, balance=None, **adjustments):
    """A GuardedServer of `application` on the listening socket `sock`,
    registered in the socket map `map`; `adjustments` are waitress's
    (threads, ident, max_request_body_size ...). The connection limit,
    timeouts and polling come from `rules`. balance: the ConnectionBalance
    of the worker processes sharing `sock` (workers.py), or None."""
    # clear_untrusted_proxy_headers off: waitress would otherwise drop every
    # X-Forwarded-* header (it trusts no proxy of its own), and the app,
    # which believes them from the trusted proxies alone (web/client_address.py),
    # would never see a trusted proxy's.
    adj = Adjustments(
        connection_limit=rules.limit, channel_timeout=max(1, int(rules.idle_seconds)),
        cleanup_interval=1, asyncore_use_poll=True, sockets=[sock],
        clear_untrusted_proxy_headers=False, **adjustments)
    dispatcher = FairTaskDispatcher(rules.requests_per_address,
                                    unlimited=functools.partial(in_networks,
                                                                networks=rules.exempt))
    dispatcher.set_thread_count(adj.threads)
    return GuardedServer(application, rules, balance=balance, map=map, _sock=sock,
                         dispatcher=dispatcher, adj=adj,
                         bind_socket=False,
                         sockinfo=(sock.family, sock.type, sock.proto, sock.getsockname()))
