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
- 10 s for the whole attempt (connect, TLS handshake, sending, reading the answer), not per
  socket operation: a receiver trickling a byte every few seconds would otherwise hold a delivery
  slot for ever. Each operation gets the time left, and a watchdog shuts the socket at the
  deadline (a read blocked inside the TLS layer sees its socket end). Redirects are never followed
  (http.client does not follow them); a 2xx status is the answer (its body is not read), and of
  any other at most 4 KB is read (for the error message).
  The name's resolution is before the clock starts (the resolver cannot be interrupted).
"""

from __future__ import annotations

import http.client
import socket
import ssl
import threading
import time
from functools import cache
from urllib.parse import urlsplit

from appliance.common.addresses import forbidden  # the SSRF guard: which addresses are refused

TIMEOUT_SECONDS = 10  # per attempt, everything included (see above)


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
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (socket.gaierror, UnicodeError) as exc:
        raise Refused(f"the endpoint's host {host} cannot be resolved") from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not allow_private:
        bad = [a for a in addresses if forbidden(a)]
        if bad:
            raise Refused(f"the endpoint's host {host} resolves to a non-public address ({bad[0]})")
    return addresses


class AttemptTimeout(TimeoutError):
    """The attempt as a whole took longer than TIMEOUT_SECONDS."""


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to one checked address while verifying the certificate for the URL's host name;
    every socket operation is bounded by the time left until the attempt's deadline."""

    def __init__(
        self,
        host: str,
        port: int,
        address: str,
        context: ssl.SSLContext,
        allow_private: bool,
        deadline: float,
    ) -> None:
        super().__init__(host, port, timeout=TIMEOUT_SECONDS, context=context)
        self._address = address
        self._context = context
        self._allow_private = allow_private
        self._deadline = deadline
        self._lock = threading.Lock()
        self.aborted = False

    def left(self) -> float:
        remaining = self._deadline - time.monotonic()
        if remaining <= 0:
            raise AttemptTimeout(f"no answer within {TIMEOUT_SECONDS} s")
        return remaining

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), timeout=self.left())
        peer = sock.getpeername()[0]
        if not self._allow_private and forbidden(peer):
            sock.close()
            raise Refused(f"connected to a non-public address ({peer})")
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
            self.aborted = True
            raw = getattr(self, "_raw", None)
        if raw is not None:
            try:
                # The plain socket's shutdown, on the descriptor the TLS socket shares: it wakes a
                # blocked read without touching the TLS object another thread is using.
                socket.socket.shutdown(self.sock or raw, socket.SHUT_RDWR)
            except OSError:
                pass  # already closed


def post(
    url: str, body: bytes, headers: dict[str, str], *, ca_file: str, allow_private: bool
) -> tuple[int, str]:
    """POST once; returns (status, first bytes of the answer). Raises Refused, OSError (an
    AttemptTimeout past TIMEOUT_SECONDS for the whole attempt), ssl errors, http.client errors."""
    host, port, path = check_url(url)
    addresses = resolve(host, port, allow_private)
    deadline = time.monotonic() + TIMEOUT_SECONDS
    connection = _PinnedHTTPSConnection(
        host, port, addresses[0], ssl_context(ca_file), allow_private, deadline
    )
    watchdog = threading.Timer(TIMEOUT_SECONDS, connection.abort)
    watchdog.daemon = True
    watchdog.start()
    try:
        try:
            connection.request(
                "POST", path, body=body, headers={**headers, "Content-Type": "application/json"}
            )
            response = connection.getresponse()
            # The status says whether the receiver took the event; the body is only read (the
            # first 4 KB, for the error message) when it did not.
            answer = b"" if 200 <= response.status < 300 else response.read(4096)
        except (OSError, http.client.HTTPException) as exc:
            if connection.aborted:
                raise AttemptTimeout(f"no answer within {TIMEOUT_SECONDS} s") from exc
            raise
        return response.status, answer.decode("utf-8", "replace")
    finally:
        watchdog.cancel()
        connection.close()


def attempt(
    url: str, body: bytes, headers: dict[str, str], *, ca_file: str, allow_private: bool
) -> str | None:
    """One delivery attempt: None when the receiver took it (2xx), else why not, for the delivery
    row. TLS errors and timeouts are OSErrors, an answer that is not HTTP an http.client error:
    each is a failed attempt, which the caller counts and backs off."""
    try:
        status, answer = post(url, body, headers, ca_file=ca_file, allow_private=allow_private)
    except (Refused, OSError, http.client.HTTPException) as exc:
        return f"{type(exc).__name__}: {exc}"
    return None if 200 <= status < 300 else f"HTTP {status}: {answer[:200]}"
