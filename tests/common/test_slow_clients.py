"""Slow and greedy clients cannot starve a port: a client address over its share of connections has
the next one closed, and a request still trickling in after its grace is closed."""

import contextlib
import socket
import time
from collections.abc import Iterator

import pytest
import requests

from appliance.serving.listener import Listener

pytestmark = pytest.mark.server


def _hello(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", "5")])
    return [b"hello"]


@contextlib.contextmanager
def _listening(**options) -> Iterator[str]:
    listener = Listener("probe", _hello, "127.0.0.1", 0, 4, **options)
    listener.start()
    try:
        yield listener.url
    finally:
        listener.stop_accepting()
        listener.close()


def _connect(url: str, source: str = "127.0.0.1") -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    return socket.create_connection((host, int(port)), timeout=10, source_address=(source, 0))


def _closed_by_server(connection: socket.socket, within: float) -> bool:
    connection.settimeout(within)
    try:
        return connection.recv(1) == b""
    except TimeoutError:
        return False
    except ConnectionResetError:
        return True


def test_a_client_address_over_its_share_has_its_next_connection_closed_and_others_are_served() -> None:
    with _listening(connections_per_client=3) as url:
        held = [_connect(url, "127.0.0.2") for _ in range(3)]
        for connection in held:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n")  # still sending its headers
        extra = _connect(url, "127.0.0.2")
        assert _closed_by_server(extra, within=5)
        assert not _closed_by_server(held[0], within=0.5)  # the first three are kept
        assert requests.get(url + "/", timeout=5).text == "hello"  # another address is served
        for connection in held:
            connection.close()


def test_a_proxy_trusted_for_its_clients_is_not_bounded_as_one_client() -> None:
    with _listening(connections_per_client=2, trusted_proxy="127.0.0.2") as url:
        held = [_connect(url, "127.0.0.2") for _ in range(4)]
        for connection in held:
            connection.sendall(b"GET / HTTP/1.1\r\nHost: x\r\n\r\n")
            assert connection.recv(1024).startswith(b"HTTP/1.1 200")
            connection.close()


def test_a_request_trickled_a_byte_at_a_time_is_closed_after_its_grace() -> None:
    with _listening(request_read_seconds=1) as url:
        slow = _connect(url)
        slow.sendall(b"GET / HTTP/1.1\r\n")
        started = time.monotonic()
        closed = False
        while not closed and time.monotonic() - started < 15:
            with contextlib.suppress(OSError):
                slow.sendall(b"X")  # never idle: waitress's channel_timeout would wait for ever
            closed = _closed_by_server(slow, within=0.5)
        assert closed
        slow.close()


def test_a_large_body_arriving_at_a_steady_rate_is_not_closed() -> None:
    with _listening(request_read_seconds=2) as url:
        connection = _connect(url)
        body = b"x" * (128 * 1024)
        connection.sendall(b"POST / HTTP/1.1\r\nHost: x\r\nContent-Length: %d\r\n\r\n" % len(body))
        # 32 KB/s for 4 s: well past the grace, four times the floor (a busy machine's stalls fit)
        for start in range(0, len(body), 4096):
            connection.sendall(body[start : start + 4096])
            time.sleep(0.125)
        assert connection.recv(1024).startswith(b"HTTP/1.1 200")
        connection.close()
