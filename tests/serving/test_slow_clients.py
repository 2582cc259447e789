"""Slow and idle clients cost others nothing (bugsvc/serving/connections.py).

End to end: a hundred and fifty half-sent requests from one address, and a
client from another loopback address is still served at once. In the
process, with the clock moved by freezegun and waitress's loop stepped by
hand: the deadlines for headers and bodies, idle connections giving way,
the per-address limit and a client that stops reading its answer."""

import http.client
import select
import socket
import threading

import pytest
from waitress import wasyncore

from bugsvc.serving import connections
from bugsvc.web.client_address import parse_networks
from live_server import OTHER_ADDRESS, needs_second_loopback


PARTIAL = b"GET /rest/version HTTP/1.1\r\nHost: bugsvc\r\nX-Slow: "


def _get_version(port, source=OTHER_ADDRESS, timeout=10):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=timeout,
                                      source_address=(source, 0))
    try:
        conn.request("GET", "/rest/version")
        response = conn.getresponse()
        return response.status, response.read()
    finally:
        conn.close()


@pytest.mark.slow
@needs_second_loopback
def test_half_sent_requests_of_one_client_do_not_lock_others_out(start, tmp_path):
    server = start(tmp_path / "slow.sqlite")
    held = []
    try:
        for _ in range(150):
            sock = socket.create_connection(("127.0.0.1", server.port), timeout=5)
            sock.sendall(PARTIAL)
            held.append(sock)
        status, body = _get_version(server.port)
        assert status == 200 and b'"version"' in body
        # Past the per-address limit the server answers 503 and closes.
        answered, _, _ = select.select(held, [], [], 2)
        refused = 0
        for sock in answered:
            try:
                answer = sock.recv(200)
            except OSError:
                answer = b""
            refused += answer.startswith(b"HTTP/1.1 503") or answer == b""
        assert refused >= 150 - 64
    finally:
        for sock in held:
            sock.close()


# In the process: waitress's loop stepped by the test ----------------------------------


def _app(environ, start_response):
    size = int(environ.get("QUERY_STRING") or 2)
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(size))])
    return [b"x" * size]


class Loop:
    """A GuardedServer on a loopback port whose network loop the test steps."""

    def __init__(self, **rules):
        listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        listener.bind(("127.0.0.1", 0))
        listener.listen(64)
        self.port = listener.getsockname()[1]
        self.map = {}
        self.server = connections.create_server(
            _app, listener, connections.ConnectionRules(**rules), self.map, threads=1)
        self.clients = []

    def step(self, times=20):
        for _ in range(times):
            wasyncore.loop(timeout=0.01, map=self.map, use_poll=True, count=1)

    def connect(self, data=b"", source="127.0.0.1"):
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=2,
                                        source_address=(source, 0))
        if data:
            sock.sendall(data)
        self.clients.append(sock)
        self.step()
        return sock

    def open_connections(self):
        return len(self.server.active_channels)

    def channel(self):
        """The one connection the server holds."""
        (channel,) = self.server.active_channels.values()
        return channel

    def maintain(self, at):
        """Run the server's maintenance as if the time were `at`."""
        self.server.maintenance(at)
        self.step()

    def close(self):
        for sock in self.clients:
            sock.close()
        self.server.task_dispatcher.shutdown()
        for dispatcher in list(self.map.values()):
            dispatcher.close()


@pytest.fixture
def loop():
    made = []

    def make(**rules):
        made.append(Loop(**rules))
        return made[-1]
    yield make
    for each in made:
        each.close()


def _closed_by_server(sock):
    sock.settimeout(1)
    try:
        return sock.recv(100) == b""
    except ConnectionResetError:
        return True


def test_headers_must_arrive_within_their_deadline(loop):
    server = loop(header_seconds=20)
    slow = server.connect(PARTIAL)
    began = server.channel().request_began
    server.maintain(began + 19)
    assert server.open_connections() == 1
    slow.sendall(b"still coming")              # a trickle does not move the deadline
    server.step()
    server.maintain(began + 21)
    assert server.open_connections() == 0
    assert _closed_by_server(slow)


def test_a_body_must_keep_coming_at_its_rate(loop):
    server = loop(header_seconds=20, body_seconds=20, body_rate=500)
    head = b"POST /?2 HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
    slow = server.connect(head + b"a" * 10000)      # earns 20 seconds more
    began = server.channel().request_began
    server.maintain(began + 55)
    assert server.open_connections() == 1
    server.maintain(began + 65)
    assert server.open_connections() == 0 and _closed_by_server(slow)


def test_a_complete_request_is_answered_and_the_connection_kept(loop):
    server = loop(header_seconds=20, idle_seconds=60)
    sock = server.connect(b"GET /?5 HTTP/1.1\r\nHost: x\r\n\r\n")
    sock.settimeout(0.1)
    answer = b""
    for _ in range(50):
        server.step(2)
        try:
            answer = sock.recv(200)
            break
        except socket.timeout:
            continue
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"xxxxx")
    last = server.channel().last_activity
    server.maintain(last + 30)
    assert server.open_connections() == 1          # idle, within idle_seconds
    server.maintain(last + 61)
    assert server.open_connections() == 0


@needs_second_loopback
def test_an_address_over_its_limit_is_answered_503_unless_an_idle_one_gives_way(loop):
    server = loop(per_address=3)
    busy = [server.connect(PARTIAL) for _ in range(3)]
    refused = server.connect(PARTIAL)
    assert refused.recv(100).startswith(b"HTTP/1.1 503")
    assert server.server.refused == 1
    other = server.connect(PARTIAL, source=OTHER_ADDRESS)     # another address is welcome
    assert server.open_connections() == 4
    # An idle connection of the address makes room for its next one.
    busy[0].sendall(b"1\r\n\r\n")
    for _ in range(20):
        server.step(2)
        if server.server.active_channels and all(
                channel.request is None for channel in server.server.active_channels.values()
                if channel.client == "127.0.0.1"
                and channel.requests == [] and channel.total_outbufs_len == 0):
            break
    busy[0].settimeout(1)
    assert busy[0].recv(4096).startswith(b"HTTP/1.1 200")
    server.step()
    welcome = server.connect(PARTIAL)
    assert server.server.refused == 1
    assert _closed_by_server(busy[0])
    assert other and welcome


def test_trusted_proxies_are_spared_the_per_address_limit(loop):
    server = loop(per_address=2, exempt=parse_networks("127.0.0.0/8"))
    for _ in range(5):
        server.connect(PARTIAL)
    assert server.open_connections() == 5 and server.server.refused == 0


def test_idle_connections_give_way_at_the_connection_limit(loop):
    server = loop(limit=6, per_address=0)
    idle = []
    for _ in range(3):
        sock = server.connect(b"GET /?1 HTTP/1.1\r\nHost: x\r\n\r\n")
        sock.settimeout(1)
        server.step(10)
        assert sock.recv(4096).startswith(b"HTTP/1.1 200")
        idle.append(sock)
    # The listener and waitress's trigger take two places of the six.
    for _ in range(3):
        server.connect(PARTIAL)
    server.step()
    assert sum(_closed_by_server(sock) for sock in idle) >= 1
    status = {}

    def fetch():
        status["code"] = _get_version(server.port, source="127.0.0.1", timeout=5)[0]
    thread = threading.Thread(target=fetch)
    thread.start()
    for _ in range(200):
        server.step(1)
        if not thread.is_alive():
            break
    thread.join(5)
    assert status.get("code") == 200


def test_a_client_that_stops_reading_is_cut_off(loop):
    server = loop(send_seconds=60)
    sock = server.connect()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.sendall(b"GET /?50000000 HTTP/1.1\r\nHost: x\r\n\r\n")
    for _ in range(20):
        server.step(5)
    channel = server.channel()
    assert channel.total_outbufs_len > 0            # the answer waits for the client
    server.maintain(channel.last_activity + 30)
    assert server.open_connections() == 1
    server.maintain(channel.last_activity + 61)
    assert server.open_connections() == 0
    assert server.server.cut_off == 1


def _read_answer(server, sock, size):
    sock.settimeout(0.05)
    answer = b""
    for _ in range(400):
        server.step(1)
        try:
            answer += sock.recv(1 << 20)
        except socket.timeout:
            continue
        if answer.endswith(b"x" * min(size, 100)) and len(answer) >= size:
            break
    return answer


def test_the_network_loop_waits_while_a_request_thread_writes_its_answer(loop):
    server = loop()
    sock = server.connect(b"GET /?5 HTTP/1.1\r\nHost: x\r\n\r\n")
    assert _read_answer(server, sock, 5).startswith(b"HTTP/1.1 200")
    channel = server.channel()
    # As while a request thread writes: serving, part of the answer waiting
    # (waitress's loop asked to write at once, again and again, though it
    # could send nothing until the thread let go of the answer).
    writes = []
    channel.handle_write = lambda: writes.append(1)
    channel.serving = True
    with channel.outbuf_lock:
        channel.outbufs[-1].append(b"y" * 100)
        channel.total_outbufs_len += 100
    server.step(20)
    assert writes == []
    # Once the thread is done, the loop sends what is left.
    del channel.handle_write
    channel.serving = False
    sock.settimeout(1)
    server.step(5)
    assert sock.recv(200) == b"y" * 100


def test_an_answer_goes_out_with_its_header_in_one_send_not_through_the_buffers(loop):
    server = loop()
    sock = server.connect()
    channel = server.channel()
    sent, buffered = [], []
    send, write_soon = channel.send, channel.write_soon

    def recording_send(data, do_close=True):
        sent.append(bytes(data))
        return send(data, do_close=do_close)

    def recording_write_soon(data):
        buffered.append(len(data))
        return write_soon(data)
    channel.send, channel.write_soon = recording_send, recording_write_soon
    sock.sendall(b"GET /?300 HTTP/1.1\r\nHost: x\r\n\r\n")
    answer = _read_answer(server, sock, 300)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"\r\n\r\n" + b"x" * 300)
    assert sent == [answer]        # not the header, then the body
    assert buffered == []          # the socket took it all: waitress's buffers not used


def test_an_answer_waits_behind_what_is_still_buffered(loop):
    server = loop()
    sock = server.connect()
    channel = server.channel()
    with channel.outbuf_lock:
        channel.outbufs[-1].append(b"y" * 100)
        channel.total_outbufs_len += 100
    channel.send_soon(b"z" * 50)
    sock.settimeout(0.05)
    received = b""
    for _ in range(100):
        server.step(1)
        try:
            received += sock.recv(1000)
        except socket.timeout:
            continue
        if len(received) >= 150:
            break
    assert received == b"y" * 100 + b"z" * 50


def test_an_answer_larger_than_the_socket_takes_arrives_whole(loop):
    server = loop()
    size = 5_000_000
    sock = server.connect(b"GET /?%d HTTP/1.1\r\nHost: x\r\n\r\n" % size)
    answer = _read_answer(server, sock, size)
    assert answer.startswith(b"HTTP/1.1 200") and answer.endswith(b"x" * 100)
    assert len(answer.split(b"\r\n\r\n", 1)[1]) == size
