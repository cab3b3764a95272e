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
- 10 s timeout, redirects never followed (http.client does not follow them), at most 4 KB of the
  answer read (for the error message).
"""

from __future__ import annotations

import http.client
import socket
import ssl
from functools import cache
from urllib.parse import urlsplit

from appliance.common.addresses import forbidden  # the SSRF guard: which addresses are refused

TIMEOUT_SECONDS = 10


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
    parts = urlsplit(url)
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


class _PinnedHTTPSConnection(http.client.HTTPSConnection):
    """Connects to one checked address while verifying the certificate for the URL's host name."""

    def __init__(
        self, host: str, port: int, address: str, context: ssl.SSLContext, allow_private: bool
    ) -> None:
        super().__init__(host, port, timeout=TIMEOUT_SECONDS, context=context)
        self._address = address
        self._context = context
        self._allow_private = allow_private

    def connect(self) -> None:
        sock = socket.create_connection((self._address, self.port), timeout=TIMEOUT_SECONDS)
        peer = sock.getpeername()[0]
        if not self._allow_private and forbidden(peer):
            sock.close()
            raise Refused(f"connected to a non-public address ({peer})")
        self.sock = self._context.wrap_socket(sock, server_hostname=self.host)


def post(
    url: str, body: bytes, headers: dict[str, str], *, ca_file: str, allow_private: bool
) -> tuple[int, str]:
    """POST once; returns (status, first bytes of the answer). Raises Refused, OSError, ssl errors."""
    host, port, path = check_url(url)
    addresses = resolve(host, port, allow_private)
    connection = _PinnedHTTPSConnection(host, port, addresses[0], ssl_context(ca_file), allow_private)
    try:
        connection.request("POST", path, body=body, headers={**headers, "Content-Type": "application/json"})
        response = connection.getresponse()
        return response.status, response.read(4096).decode("utf-8", "replace")
    finally:
        connection.close()
