"""HTTPS to operators' receivers, safe against server-side request forgery.

- https only; the certificate is verified against the system trust store plus
  ``webhook_ca_file`` (``requests``' default bundle is certifi's alone, and ``verify=FILE`` would
  drop the system store, hence the standard library's context).
- The host is resolved and every address must be global (no loopback, private, link-local,
  cloud metadata, shared, multicast, reserved or other special-purpose range, and no IPv6 address
  carrying an IPv4 one: NAT64, 6to4, Teredo, mapped; appliance/common/addresses.py) unless
  ``webhook_allow_private``; the
  connection goes to the address that was checked (no second resolution, so no DNS rebinding),
  and the peer actually connected to is checked again.
- Connections are kept (``KeptConnections``, one set per endpoint): a batch of deliveries to one
  receiver pays for one TCP and TLS handshake, not one each. A new connection, and only a new one,
  resolves the name afresh and is checked as above, so reconnecting never skips the check; a kept
  connection is reused for at most ``REUSE_SECONDS`` after it was opened (a name that now
  resolves elsewhere, or to a refused address, takes effect within that time), and one the
  receiver closed while idle is dropped before it is used. Nothing is retried inside an attempt
  (a receiver must never see one attempt twice): a kept connection that fails fails its attempt.
- 10 s for the whole attempt (connect, TLS handshake, sending, reading the answer), not per
  socket operation: a receiver trickling a byte every few seconds would otherwise hold a delivery
  slot for ever. Each operation gets the time left, and a watchdog shuts the socket at the
  deadline (a read blocked inside the TLS layer sees its socket end). Redirects are never followed
  (http.client does not follow them); a 2xx status is the answer (its body is not read), and of
  any other at most 4 KB is read (for the error message).
  The name's resolution is before the clock starts (the resolver cannot be interrupted).
"""

from __future__ import annotations

import heapq
import http.client
import itertools
import select
import socket
import ssl
import threading
import time
from collections.abc import Callable, Hashable
from functools import cache
from urllib.parse import urlsplit

# The SSRF guard: which addresses are refused, and a name's addresses checked against it.
from appliance.common.addresses import HostRefused, checked_addresses, forbidden

TIMEOUT_SECONDS = 10  # per attempt, everything included (see above)
REUSE_SECONDS = 30.0  # a kept connection is not reused longer after it was opened
KEEP_PER_ENDPOINT = 4  # idle connections kept for one endpoint


class Refused(Exception):
    """The URL may not be called (not https, or not a public address)."""


@cache
def ssl_context(ca_file: str) -> ssl.SSLContext:
    context = ssl.create_default_context()  # the system store, hostname checking, TLS 1.2+
    if ca_file:
        context.load_verify_locations(cafile=ca_file)
    return context


def check_url(url: str) -> tuple[str, int, str]:
    """(host, port, path with query) of an https URL, or Refused."""
    try:
        parts = urlsplit(url)
    except ValueError:  # an unclosed IPv6 bracket, a bracketed host that is no address
        raise Refused("the endpoint URL is malformed") from None
    if parts.scheme != "https" or not parts.hostname:
        raise Refused("the endpoint must be an https URL")
    if parts.username or parts.password:
        raise Refused("the endpoint URL may not carry credentials")
    try:
        port = parts.port or 443
    except ValueError:
        raise Refused("the endpoint URL has an invalid port") from None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return parts.hostname, port, path


def resolve(host: str, port: int, allow_private: bool) -> list[str]:
    """The host's addresses, every one public (unless ``allow_private``), else Refused: the text
    names no address and does not tell an unknown name from a private one (issue 41 item 10)."""
    try:
        return checked_addresses(host, port, allow_private, refused=forbidden)
    except HostRefused:
        raise Refused(f"the endpoint's host {host} is refused (unresolvable or non-public)") from None


class AttemptTimeout(TimeoutError):
    """The attempt as a whole took longer than TIMEOUT_SECONDS."""


class _Watchdog:
    """One thread for every attempt's deadline: a timer thread per attempt cost more than the
    attempt itself once connections are kept. Entries are disarmed in place (lazy deletion)."""

    def __init__(self) -> None:
        self._condition = threading.Condition()
        self._heap: list[tuple[float, int, list]] = []
        self._order = itertools.count()
        self._thread: threading.Thread | None = None

    def arm(self, deadline: float, action: Callable[[], None]) -> list:
        entry: list = [action]
        with self._condition:
            heapq.heappush(self._heap, (deadline, next(self._order), entry))
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="webhook-watchdog", daemon=True)
                self._thread.start()
            if self._heap[0][2] is entry:
                self._condition.notify()
        return entry

    @staticmethod
    def disarm(entry: list) -> None:
        entry[0] = None

    def _run(self) -> None:
        while True:
            with self._condition:
                while self._heap and self._heap[0][2][0] is None:
                    heapq.heappop(self._heap)  # disarmed
                if not self._heap:
                    self._condition.wait()
                    continue
                deadline, _, entry = self._heap[0]
                wait = deadline - time.monotonic()
                if wait > 0:
                    self._condition.wait(wait)
                    continue
                heapq.heappop(self._heap)
                action = entry[0]
            if action is not None:
                action()


_watchdog = _Watchdog()


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to one checked address while verifying the certificate for the URL's host name;
    during an attempt every socket operation is bounded by the time left until its deadline, and
    the watchdog's ``abort`` ends the socket at the deadline. It never reconnects by itself
    (``auto_open`` off): a new connection is made, resolved and checked by KeptConnections."""

    def __init__(
        self, host: str, port: int, address: str, context: ssl.SSLContext, allow_private: bool
    ) -> None:
        super().__init__(host, port, timeout=TIMEOUT_SECONDS, context=context)
        self.auto_open = 0
        self._address = address
        self._context = context
        self._allow_private = allow_private
        self._deadline = 0.0
        self._lock = threading.Lock()
        self._armed = False
        self.aborted = False
        self.opened_at = time.monotonic()

    def left(self) -> float:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise AttemptTimeout(f"no answer within {TIMEOUT_SECONDS} s")
        return remaining

    def start(self, deadline: float) -> None:
        """A new attempt on this connection, to end by ``deadline``."""
        with self._lock:
            self._deadline = deadline
            self._armed = True
            self.aborted = False
        if self.sock is not None:
            self.sock.settimeout(self.left())

    def finish(self) -> bool:
        """The attempt is over (the watchdog may no longer abort it); False if it was aborted."""
        with self._lock:
            self._armed = False
            return not self.aborted

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), timeout=self.left())
        peer = sock.getpeername()[0]
        if not self._allow_private and forbidden(peer):
            sock.close()
            raise Refused("the endpoint's host is refused (connected to a non-public address)")
        # Small requests on a kept connection: without this, a request written in two parts waits
        # for the receiver's delayed ACK (40 ms) before its second part leaves (Nagle).
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(self.left())  # the handshake gets what is left
        with self._lock:
            if self.aborted:
                sock.close()
                raise AttemptTimeout(f"no answer within {TIMEOUT_SECONDS} s")
            self._raw = sock
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)
        self.sock.settimeout(self.left())

    def abort(self) -> None:
        """The watchdog, at the deadline: end the socket under whatever operation is blocked."""
        with self._lock:
            if not self._armed:
                return  # the attempt ended in time; the connection may be another attempt's now
            self.aborted = True
            raw = getattr(self, "_raw", None)
        if raw is not None:
            try:
                # The plain socket's shutdown, on the descriptor the TLS socket shares: it wakes a
                # blocked read without touching the TLS object another thread is using.
                socket.socket.shutdown(self.sock or raw, socket.SHUT_RDWR)
            except OSError:
                pass  # already closed

    def reusable(self) -> bool:
        """Still open, young enough, and silent: an idle connection with something to read was
        closed by the receiver (or sent what nobody asked for)."""
        sock = self.sock
        if sock is None or time.monotonic() - self.opened_at > REUSE_SECONDS:
            return False
        if isinstance(sock, ssl.SSLSocket) and sock.pending():
            return False
        poller = select.poll()
        poller.register(sock, select.POLLIN)
        return not poller.poll(0)


class KeptConnections:
    """Idle HTTPS connections kept per key (an endpoint), for the next attempt to the same
    receiver. Safe to share between threads: a connection is used by one attempt at a time."""

    def __init__(self, *, ca_file: str, allow_private: bool, keep: int = KEEP_PER_ENDPOINT) -> None:
        self.ca_file = ca_file
        self.allow_private = allow_private
        self.keep = keep
        self._idle: dict[Hashable, list[_PinnedHTTPSConnection]] = {}
        self._lock = threading.Lock()
        self.opened = 0  # connections opened (handshakes), for the benchmark
        self._pruned = time.monotonic()

    def _checkout(self, key: Hashable) -> _PinnedHTTPSConnection | None:
        while True:
            with self._lock:
                idle = self._idle.get(key)
                if not idle:
                    return None
                connection = idle.pop()
            if connection.reusable():
                return connection
            connection.close()

    def _checkin(self, key: Hashable, connection: _PinnedHTTPSConnection) -> None:
        expired = self._expired()
        with self._lock:
            idle = self._idle.setdefault(key, [])
            if len(idle) < self.keep:
                idle.append(connection)
            else:
                expired.append(connection)
        for old in expired:
            old.close()

    def _expired(self) -> list[_PinnedHTTPSConnection]:
        """Idle connections too old to be reused, taken out at most once per REUSE_SECONDS: an
        endpoint called once would otherwise keep its sockets open for good."""
        moment = time.monotonic()
        with self._lock:
            if moment - self._pruned < REUSE_SECONDS:
                return []
            self._pruned = moment
            expired = []
            for key in list(self._idle):
                kept = [c for c in self._idle[key] if moment - c.opened_at <= REUSE_SECONDS]
                expired += [c for c in self._idle[key] if moment - c.opened_at > REUSE_SECONDS]
                if kept:
                    self._idle[key] = kept
                else:
                    del self._idle[key]
        return expired

    def close(self) -> None:
        with self._lock:
            connections = [c for idle in self._idle.values() for c in idle]
            self._idle.clear()
        for connection in connections:
            connection.close()

    def post(self, key: Hashable, url: str, body: bytes, headers: dict[str, str]) -> tuple[int, str]:
        """POST once; returns (status, first bytes of the answer). Raises Refused, OSError (an
        AttemptTimeout past TIMEOUT_SECONDS for the whole attempt), ssl errors, http.client errors."""
        host, port, path = check_url(url)
        pool_key = (key, host, port)
        connection = self._checkout(pool_key)
        if connection is None:
            addresses = resolve(host, port, self.allow_private)  # before the clock starts
            connection = _PinnedHTTPSConnection(
                host, port, addresses[0], ssl_context(self.ca_file), self.allow_private
            )
        deadline = time.monotonic() + TIMEOUT_SECONDS
        connection.start(deadline)
        alarm = _watchdog.arm(deadline, connection.abort)
        keep = False
        try:
            try:
                if connection.sock is None:
                    with self._lock:
                        self.opened += 1
                    connection.connect()
                connection.request(
                    "POST", path, body=body, headers={**headers, "Content-Type": "application/json"}
                )
                response = connection.getresponse()
                status = response.status
            except (OSError, http.client.HTTPException) as exc:
                # Every socket timeout is set to what is left of the attempt, so a socket's own
                # timeout and the watchdog's abort are the same deadline: whichever came first.
                if connection.aborted or isinstance(exc, TimeoutError):
                    raise AttemptTimeout(f"no answer within {TIMEOUT_SECONDS} s") from exc
                raise
            try:
                # The status says whether the receiver took the event. Of another status the first
                # 4 KB are the error message; a 2xx's body is read only to reuse the connection,
                # when it is short and of known length (else the connection is closed instead).
                small = response.length is not None and response.length <= 4096
                answer = response.read(4096) if small or not 200 <= status < 300 else b""
                keep = response.isclosed() and connection.sock is not None
            except (OSError, http.client.HTTPException) as exc:
                if not 200 <= status < 300:
                    if connection.aborted or isinstance(exc, TimeoutError):
                        raise AttemptTimeout(f"no answer within {TIMEOUT_SECONDS} s") from exc
                    raise
                answer = b""  # delivered: the status arrived; only the connection is lost
            return status, answer.decode("utf-8", "replace")
        finally:
            _watchdog.disarm(alarm)
            if connection.finish() and keep:
                self._checkin(pool_key, connection)
            else:
                connection.close()

    def attempt(self, key: Hashable, url: str, body: bytes, headers: dict[str, str]) -> str | None:
        """One delivery attempt: None when the receiver took it (2xx), else why not, for the
        delivery row. TLS errors and timeouts are OSErrors, an answer that is not HTTP an
        http.client error: each is a failed attempt, which the caller counts and backs off."""
        try:
            status, answer = self.post(key, url, body, headers)
        except (Refused, OSError, http.client.HTTPException) as exc:
            return f"{type(exc).__name__}: {exc}"
        return None if 200 <= status < 300 else f"HTTP {status}: {answer[:200]}"


def post(
    url: str, body: bytes, headers: dict[str, str], *, ca_file: str, allow_private: bool
) -> tuple[int, str]:
    """One POST on a connection of its own (nothing kept)."""
    return KeptConnections(ca_file=ca_file, allow_private=allow_private, keep=0).post(
        None, url, body, headers
    )


def attempt(
    url: str, body: bytes, headers: dict[str, str], *, ca_file: str, allow_private: bool
) -> str | None:
    """One delivery attempt on a connection of its own (KeptConnections.attempt)."""
    return KeptConnections(ca_file=ca_file, allow_private=allow_private, keep=0).attempt(
        None, url, body, headers
    )
