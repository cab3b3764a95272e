"""One bound SMPP 3.4 transceiver session with the company's provider (smpplib): submit_sm for
each part of a message, waiting for its submit_sm_resp, and delivery receipts (deliver_sm with a
receipt) handed to a callback while submitting or while listening.

The provider's host is chosen by the company's owner, so the connection is a server-side request
(issue 41 item 5): it follows the webhooks' address rules (appliance/common/addresses.py). The host
is resolved and every address checked right before connecting, the socket goes to the address
that was checked (no second resolution) and its peer is checked again; loopback and private
addresses only with the deployment's ``smpp_allow_private``. A session that cannot be opened says
so in one text, whatever the cause (refused, timed out, reset, a silent or non-SMPP listener, TLS):
a message's ``lastError`` must not tell an open port from a closed one. The cause goes to the log.
Only a provider's own refusal of the bind (an SMPP status) is named.
"""

from __future__ import annotations

import logging
import re
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import smpplib.client
import smpplib.consts
import smpplib.exceptions

from appliance.common.addresses import HostRefused, checked_addresses, forbidden
from appliance.dispatch.messages.texts import sms_parts

log = logging.getLogger("appliance.messages")

# What a transport failure looks like: the connection (refused, reset, timed out, TLS) or a PDU
# the provider refused (bind refused, throttled, invalid destination...).
SmppError = (OSError, smpplib.exceptions.ConnectionError, smpplib.exceptions.PDUError)

UNREACHABLE = "the SMS provider could not be reached, or gave no SMPP answer"
HOST_REFUSED = "the SMS provider's host is refused (unresolvable or non-public)"


class SessionFailed(smpplib.exceptions.ConnectionError):
    """No session could be opened; its text is the message's last error as it is (see above)."""


# The receipt's text (SMPP 3.4 appendix B): id:… sub:… dlvrd:… submit date:… done date:… stat:…
# esm_class bits 2..5 = 0001: an SMSC delivery receipt (SMPP 3.4 §5.2.12; smpplib names no constant).
RECEIPT_TYPE = 0x04
_RECEIPT = re.compile(rb"id:(\S+).*?stat:(\w+)", re.S)
FINAL_STATES = {
    "DELIVRD": "delivered",
    "EXPIRED": "undelivered",
    "DELETED": "undelivered",
    "UNDELIV": "undelivered",
    "REJECTD": "undelivered",
    "UNKNOWN": "undelivered",
}


@dataclass(frozen=True)
class Provider:
    host: str
    port: int
    system_id: str
    password: str
    source_addr: str
    tls: bool
    per_second: int


def parse_receipt(pdu: Any) -> tuple[str, str] | None:
    """(provider message id, delivered|undelivered) of a final delivery receipt, else None."""
    if (getattr(pdu, "esm_class", 0) or 0) & 0x3C != RECEIPT_TYPE:
        return None
    text = pdu.short_message or b""
    match = _RECEIPT.search(text if isinstance(text, bytes) else str(text).encode())
    receipted = getattr(pdu, "receipted_message_id", None)
    if isinstance(receipted, bytes):
        receipted = receipted.rstrip(b"\0").decode("ascii", "replace")
    message_id = receipted or (match.group(1).decode("ascii", "replace") if match else None)
    state = FINAL_STATES.get(match.group(2).decode("ascii", "replace").upper()) if match else None
    if not message_id or state is None:
        return None
    return message_id, state


def _address(value: str) -> tuple[int, int, str]:
    """TON, NPI and digits: an alphanumeric sender name, else an international number."""
    digits = value.lstrip("+")
    if digits.isdigit():
        return smpplib.consts.SMPP_TON_INTL, smpplib.consts.SMPP_NPI_ISDN, digits
    return smpplib.consts.SMPP_TON_ALNUM, smpplib.consts.SMPP_NPI_UNK, value


class SmppSession:
    def __init__(
        self,
        provider: Provider,
        on_receipt: Callable[[str, str], None],
        *,
        timeout: float = 10.0,
        ca_file: str = "",
        allow_private: bool = False,
    ) -> None:
        self.provider = provider
        self.on_receipt = on_receipt
        self.timeout = timeout
        # TLS checks the provider's certificate and name against the system store (plus
        # ``ca_file``, a private authority, when given).
        context = None
        if provider.tls:
            context = ssl.create_default_context()
            if ca_file:
                context.load_verify_locations(cafile=ca_file)
        self.client = _CheckedClient(
            provider.host,
            provider.port,
            allow_private=allow_private,
            tls=context,
            timeout=timeout,
            allow_unknown_opt_params=True,
            logger_name="appliance.smpp",
        )
        self.client.set_message_received_handler(self._received)
        self.client.set_message_sent_handler(self._sent)
        self._answers: dict[int, str] = {}
        self._last_submit = 0.0

    def __enter__(self) -> SmppSession:
        try:
            self._open()
        except BaseException:
            self.client.disconnect()
            raise
        return self

    def _open(self) -> None:
        """Connect and bind; any failure but the provider's own refusal of the bind is
        SessionFailed with one text (the cause is logged for the deployment's operator)."""
        where = f"{self.provider.host}:{self.provider.port}"
        try:
            self.client.connect()
            self.client.bind_transceiver(system_id=self.provider.system_id, password=self.provider.password)
        except HostRefused:
            log.warning("SMPP provider %s refused: unresolvable or non-public", where)
            raise SessionFailed(HOST_REFUSED) from None
        except smpplib.exceptions.PDUError as exc:
            if len(exc.args) > 1:  # a bind_resp with an error status: an SMPP provider said no
                raise
            log.warning("SMPP provider %s: no SMPP answer: %s", where, exc)
            raise SessionFailed(UNREACHABLE) from exc
        except Exception as exc:  # refused, timed out, reset, TLS, a reply that is not SMPP
            log.warning("SMPP provider %s: %s: %s", where, type(exc).__name__, exc)
            raise SessionFailed(UNREACHABLE) from exc

    def __exit__(self, *exc: object) -> None:
        try:
            if self.client.state in (smpplib.consts.SMPP_CLIENT_STATE_BOUND_TRX,):
                self.client.unbind()
        except SmppError:
            pass
        finally:
            self.client.disconnect()

    def _received(self, pdu: Any, **_: Any) -> int:
        receipt = parse_receipt(pdu)
        if receipt is not None:
            self.on_receipt(*receipt)
        return smpplib.consts.SMPP_ESME_ROK

    def _sent(self, pdu: Any, **_: Any) -> None:
        message_id = pdu.message_id
        if isinstance(message_id, bytes):
            message_id = message_id.rstrip(b"\0").decode("ascii", "replace")
        self._answers[pdu.sequence] = message_id

    def _pace(self) -> None:
        """The provider's throughput limit: at most per_second submit_sm a second."""
        gap = 1.0 / max(1, self.provider.per_second)
        wait = self._last_submit + gap - time.monotonic()
        if wait > 0:
            time.sleep(wait)
        self._last_submit = time.monotonic()

    def submit(self, destination: str, text: str) -> str:
        """Send every part of ``text``; the provider's id of the last part (its receipt decides)."""
        parts, coding, esm_class = sms_parts(text)
        src_ton, src_npi, source = _address(self.provider.source_addr)
        dst_ton, dst_npi, dest = _address(destination)
        message_id = ""
        for part in parts:
            self._pace()
            pdu = self.client.send_message(
                source_addr_ton=src_ton,
                source_addr_npi=src_npi,
                source_addr=source,
                dest_addr_ton=dst_ton,
                dest_addr_npi=dst_npi,
                destination_addr=dest,
                short_message=part,
                data_coding=coding,
                esm_class=esm_class,
                registered_delivery=True,
            )
            deadline = time.monotonic() + self.timeout
            while pdu.sequence not in self._answers:
                if time.monotonic() > deadline:
                    raise smpplib.exceptions.ConnectionError("no submit_sm_resp")
                self.client.read_once(auto_send_enquire_link=False)
            message_id = self._answers.pop(pdu.sequence)
        return message_id

    def listen(self, seconds: float, done: Callable[[], bool] = lambda: False) -> None:
        """Read receipts for up to ``seconds``, or until ``done()`` (every receipt owed has come:
        the session is not held for the rest of the time)."""
        deadline = time.monotonic() + seconds
        sock = self.client._socket
        try:
            while (left := deadline - time.monotonic()) > 0:
                if sock is None or done():
                    return
                sock.settimeout(left)
                try:
                    self.client.read_once(auto_send_enquire_link=False)
                except TimeoutError:  # socket.timeout is TimeoutError
                    return
        finally:
            if sock is not None:
                sock.settimeout(self.timeout)


class _CheckedClient(smpplib.client.Client):
    """smpplib's client connecting as the webhooks do (see the module's docstring): to an address
    of the host checked just now, the peer checked again, TLS verified for the host's name. Each
    checked address is tried in turn (smpplib alone opens IPv4 sockets only)."""

    def __init__(
        self, host: str, port: int, *, allow_private: bool, tls: ssl.SSLContext | None, **kwargs: Any
    ) -> None:
        super().__init__(host, port, **kwargs)
        self._allow_private = allow_private
        self._tls = tls

    def connect(self) -> None:
        addresses = checked_addresses(self.host, self.port, self._allow_private)
        sock = self._first_connection(addresses)
        try:
            if not self._allow_private and forbidden(sock.getpeername()[0]):
                raise HostRefused(self.host)
            if self._tls is not None:
                sock = self._tls.wrap_socket(sock, server_hostname=self.host)
        except BaseException:
            sock.close()
            raise
        self._socket = sock
        self.state = smpplib.consts.SMPP_CLIENT_STATE_OPEN

    def _first_connection(self, addresses: list[str]) -> socket.socket:
        failure: OSError | None = None
        for address in addresses:
            try:
                return socket.create_connection((address, self.port), timeout=self.timeout)
            except OSError as exc:
                failure = exc
        assert failure is not None  # checked_addresses never returns an empty list
        raise failure
