"""The serving channel: answers of known length go out whole from the loop thread, streams and
large answers as they are written."""

import contextlib
import select
import socket
import threading
from collections.abc import Iterator

import pytest
import requests
from waitress import wasyncore
from waitress.channel import HTTPChannel

from appliance.common.server_channel import WHOLE_ANSWER_BYTES
from appliance.serving.listener import Listener


@contextlib.contextmanager
def _listening(app) -> Iterator[Listener]:
    listener = Listener("probe", app, "127.0.0.1", 0, 4)
    listener.start()
    try:
        yield listener
    finally:
        listener.stop_accepting()
        listener.close()


@pytest.fixture
def senders(monkeypatch) -> list[tuple[str, int]]:
    """(thread name, bytes) of every send waitress makes from a connection's buffer."""
    sent: list[tuple[str, int]] = []
    real = HTTPChannel._flush_some

    def flush_some(self, do_close=True):
        before = self.total_outbufs_len
        result = real(self, do_close=do_close)
        if before != self.total_outbufs_len:
            sent.append((threading.current_thread().name, before - self.total_outbufs_len))
        return result

    monkeypatch.setattr(HTTPChannel, "_flush_some", flush_some)
    return sent


def _sized(size: int):
    body = b"x" * size

    def app(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain"), ("Content-Length", str(size))])
        return [body]

    return app


def test_an_answer_of_known_length_is_sent_whole_by_the_loop_thread(senders) -> None:
    with _listening(_sized(3000)) as listener:
        for _ in range(3):
            assert requests.get(listener.url + "/", timeout=5).content == b"x" * 3000
    assert [name for name, _ in senders] == ["probe-http"] * 3
    assert all(size > 3000 for _, size in senders)  # the headers and the body in one send


def test_a_large_answer_is_sent_while_it_is_written(senders) -> None:
    size = WHOLE_ANSWER_BYTES + 1
    with _listening(_sized(size)) as listener:
        assert len(requests.get(listener.url + "/", timeout=5).content) == size
    assert senders[0][0].startswith("waitress-")  # the serving thread


def test_each_chunk_of_a_stream_reaches_the_client_before_the_stream_goes_on() -> None:
    """An event stream's heartbeat must not wait in a buffer: the app writes its second chunk
    only after the client has read the first."""
    first_read = threading.Event()

    def stream(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/event-stream")])
        yield b": first\n\n"
        if not first_read.wait(30):  # held back: never read; a busy machine: seconds
            yield b": the first chunk was held back\n\n"
            return
        yield b": second\n\n"

    with (
        _listening(stream) as listener,
        socket.create_connection((listener.server.effective_host, listener.server.effective_port), 5) as sock,
    ):
        sock.sendall(b"GET / HTTP/1.1\r\nHost: probe\r\n\r\n")
        received = b""
        while b": first" not in received:
            received += sock.recv(4096)
        first_read.set()
        while b"0\r\n\r\n" not in received:
            chunk = sock.recv(4096)
            if not chunk:
                break
            received += chunk
    assert b": second" in received
    assert b"held back" not in received


def test_a_connection_serves_a_stream_after_a_whole_answer(senders) -> None:
    """The switch to whole answers is the connection's own and is undone after each answer."""
    routes = {"/whole": _sized(10)}

    def chunked(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return iter([b"a", b"b"])

    routes["/stream"] = chunked

    def app(environ, start_response):
        return routes[environ["PATH_INFO"]](environ, start_response)

    with _listening(app) as listener, requests.Session() as session:
        assert session.get(listener.url + "/whole", timeout=5).content == b"x" * 10
        assert session.get(listener.url + "/stream", timeout=5).content == b"ab"
    assert senders[0][0] == "probe-http"
    assert any(name.startswith("waitress-") for name, _ in senders[1:])


class _TimeoutsWithAnAnswerWaiting:
    """select for waitress's poll loop, noting each poll that ran out its timeout (returned
    nothing) while a connection held an answer in its buffer that the loop had not been woken
    to send."""

    def __init__(self, channels: dict) -> None:
        self.channels = channels
        self.found: list[tuple[int, int]] = []  # (descriptor, unsent bytes)
        self.timeouts = 0

    def __getattr__(self, name: str):
        return getattr(select, name)

    def poll(self):
        pollster = select.poll()
        outer = self

        class Pollster:
            def register(self, fd, flags) -> None:
                pollster.register(fd, flags)

            def poll(self, timeout=None):
                events = pollster.poll(timeout)
                if not events:
                    outer.timeouts += 1
                    outer.found += [
                        (fd, channel.total_outbufs_len)
                        for fd, channel in list(outer.channels.items())
                        if isinstance(channel, HTTPChannel)
                        and channel.total_outbufs_len
                        and not channel.requests
                    ]
                return events

        return Pollster()


def test_the_loop_is_woken_for_each_whole_answer_instead_of_sleeping_out_its_poll(monkeypatch) -> None:
    """A whole answer is written into the buffer without waking the loop thread (no send from
    the serving thread, no trigger while it writes); the loop must be woken once the answer is
    complete (waitress pulls its trigger as the task ends), or the answer waits for the loop's
    poll timeout: a second by default, issue 30's suspect. Structural: no poll may run out its
    timeout while an answer waits in a buffer. The timeout is shortened so that a missing
    wake-up fails quickly rather than slowly."""
    listener = Listener("probe", _sized(3000), "127.0.0.1", 0, 4)
    listener.server.adj.asyncore_loop_timeout = 0.25
    watch = _TimeoutsWithAnAnswerWaiting(listener.server._map)
    monkeypatch.setattr(wasyncore, "select", watch)
    listener.start()
    try:
        with requests.Session() as session:  # one keep-alive connection, request after request
            for _ in range(40):
                assert session.get(listener.url + "/", timeout=5).content == b"x" * 3000
    finally:
        listener.stop_accepting()
        listener.close()
    assert watch.found == []


def test_a_listener_whose_loop_trigger_is_gone_still_stops() -> None:
    """Stopping does not depend on the loop's wake-up pipe: with it closed (EBADF on the write),
    close() still closes every connection and the loop thread ends."""
    listener = Listener("probe", _sized(10), "127.0.0.1", 0, 2)
    listener.start()
    assert requests.get(listener.url + "/", timeout=5).content == b"x" * 10
    listener.server.trigger.close()
    listener.stop_accepting()
    listener.close()
    assert not listener.thread.is_alive()
    assert listener.server._map == {}
