"""The e-HDM connection: the ``e-hdm`` package's EHDMClient (its endpoints, JSON and models) over a
transport of ours, because the package's own (urllib) has no timeout, takes the key only as a file
and cannot tell a request that never left from one whose answer was lost.

One ``Connection`` is one kept-alive mutual-TLS connection. The sender asks ``checkConnection``
first: whatever goes wrong until then (the address refused, the server's certificate or ours
refused, a timeout) printed nothing, and is ``NotSent`` (tried again later). Then it calls
``commit()`` and sends the print: from there a failure after the request left is
``OutcomeUnknown``: the service may have printed. The manual's calls carry no sequence number or
reference of ours (``print`` answers the receiptId; ``printCopy`` needs it), so an unknown outcome
cannot be looked up: the order is flagged for a person (fiscal/sender.py).

The private key never touches the disk in the clear: ``ssl`` loads keys from files only, so it is
written to a private temporary file encrypted under a one-time password, loaded, and removed."""

from __future__ import annotations

import http.client
import json
import os
import secrets
import socket
import ssl
import tempfile
from typing import Any
from urllib.parse import urlsplit

from cryptography.hazmat.primitives import serialization
from e_hdm import EHDMClient, Language
from e_hdm.exceptions import EHDMTransportError

from appliance.common.addresses import HostRefused, checked_addresses

# TLS alerts by which a server refuses the client's certificate: in TLS 1.3 they arrive after the
# client's side of the handshake is done, with the first read, yet the server processed nothing.
REFUSED_ALERTS = (
    "ALERT_UNKNOWN_CA",
    "ALERT_BAD_CERTIFICATE",
    "ALERT_CERTIFICATE_UNKNOWN",
    "ALERT_CERTIFICATE_REQUIRED",
    "ALERT_CERTIFICATE_REVOKED",
    "ALERT_CERTIFICATE_EXPIRED",
    "ALERT_ACCESS_DENIED",
    "ALERT_HANDSHAKE_FAILURE",
)


class NotSent(EHDMTransportError):
    """Nothing reached the service (or it refused us before reading): safe to try again."""


class OutcomeUnknown(EHDMTransportError):
    """The request left and no answer came back: the service may have acted on it."""


def refused_by_tls(exc: BaseException) -> bool:
    reason = getattr(exc, "reason", None) or ""
    return isinstance(exc, ssl.SSLError) and any(alert in str(reason) for alert in REFUSED_ALERTS)


def tls_context(certificate_pem: str, key_pem: str, server_ca_pem: str | None) -> ssl.SSLContext:
    context = ssl.create_default_context()
    if server_ca_pem:
        context.load_verify_locations(cadata=server_ca_pem)
    password = secrets.token_bytes(32)
    key = serialization.load_pem_private_key(key_pem.encode(), password=None)
    locked = key.private_bytes(
        serialization.Encoding.PEM,
        serialization.PrivateFormat.PKCS8,
        serialization.BestAvailableEncryption(password),
    )
    with tempfile.TemporaryDirectory(prefix="ehdm-") as folder:
        cert_path = os.path.join(folder, "client.crt")
        key_path = os.path.join(folder, "client.key")
        for path, data in ((cert_path, certificate_pem.encode()), (key_path, locked)):
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
            with os.fdopen(fd, "wb") as handle:
                handle.write(data)
        context.load_cert_chain(cert_path, key_path, password=password)
    return context


class _PinnedHTTPS(http.client.HTTPSConnection):
    """HTTPS to an address checked beforehand (never the name resolved again: DNS rebinding), the
    name kept for SNI and the certificate's check."""

    def __init__(self, host: str, port: int, address: str, context: ssl.SSLContext, timeout: float) -> None:
        super().__init__(host, port, context=context, timeout=timeout)
        self._address = address
        self._tls = context

    def connect(self) -> None:
        raw = socket.create_connection((self._address, self.port), self.timeout)
        try:
            self.sock = self._tls.wrap_socket(raw, server_hostname=self.host)
        except BaseException:
            raw.close()
            raise


class Connection:
    """The transport given to EHDMClient (``post_json``), one connection kept for its calls."""

    def __init__(
        self,
        base_url: str,
        context: ssl.SSLContext,
        *,
        timeout: float,
        allow_private: bool,
    ) -> None:
        parts = urlsplit(base_url)
        self.host = parts.hostname or ""
        self.port = parts.port or 443
        self.timeout = timeout
        self.allow_private = allow_private
        self.context = context
        self.committed = False
        self._conn: _PinnedHTTPS | None = None

    def commit(self) -> None:
        """From now on a failure after the request left is an unknown outcome."""
        self.committed = True

    def _open(self) -> _PinnedHTTPS:
        if self._conn is not None:
            return self._conn
        try:
            addresses = checked_addresses(self.host, self.port, self.allow_private)
        except HostRefused:
            raise NotSent("the e-HDM address is refused (unresolvable or non-public)") from None
        failure: BaseException | None = None
        for address in addresses:  # each checked address in turn (a name with IPv6 and IPv4 ones)
            conn = _PinnedHTTPS(self.host, self.port, address, self.context, self.timeout)
            try:
                conn.connect()
            except (OSError, ssl.SSLError) as exc:
                conn.close()
                failure = exc
                continue
            self._conn = conn
            return conn
        raise NotSent(f"could not connect to e-HDM: {type(failure).__name__}: {failure}") from failure

    def post_json(self, url: str, headers: dict[str, str], payload: dict[str, Any]) -> dict[str, Any]:
        conn = self._open()
        path = urlsplit(url).path or "/"
        body = json.dumps(payload, ensure_ascii=False).encode("utf-8")
        try:
            conn.request("POST", path, body=body, headers=headers)
            response = conn.getresponse()
            raw = response.read()
            status = response.status
        except (OSError, http.client.HTTPException) as exc:
            self.close()
            failure = f"{type(exc).__name__}: {exc}"
            if refused_by_tls(exc) or not self.committed:
                raise NotSent(f"e-HDM refused or did not answer: {failure}") from exc
            raise OutcomeUnknown(f"no answer from e-HDM: {failure}") from exc
        try:
            answer = json.loads(raw)
            if not isinstance(answer, dict) or not isinstance(answer.get("code"), int):
                raise ValueError("no code")
        except ValueError:
            self.close()
            failure = f"HTTP {status} without an e-HDM answer"
            if not self.committed:
                raise NotSent(failure) from None
            raise OutcomeUnknown(failure) from None
        return answer

    def close(self) -> None:
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self) -> Connection:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def ehdm_client(crn: str, base_url: str, connection: Connection) -> EHDMClient:
    return EHDMClient(crn=crn, base_url=base_url, transport=connection, language=Language.HY)  # type: ignore[arg-type]
