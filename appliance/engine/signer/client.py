"""What the serving processes and workers of `serve` hold instead of the custody key: a client of
the signer process. Addresses are derived here from the accounts' extended public keys (asked of
the signer once per account); every signature is the signer's, under its policy."""

from __future__ import annotations

import socket
import threading
from pathlib import Path
from typing import Any

from appliance.engine.custody import CustodyError, CustodyKeys, CustodyRefused, Grounds
from appliance.engine.custody_public import address_from_xpub
from appliance.engine.signer import wire
from appliance.engine.signer.core import SignerRefused

TIMEOUT_SECONDS = 30.0  # an answer reads the database once; a signature takes milliseconds


class SignerUnavailable(CustodyError):
    """The signer process does not answer (starting, restarting, or gone)."""


class SignerForbidden(CustodyError):
    """An administrator command with a token that is not the signer's."""


class SignerClient(CustodyKeys):
    def __init__(self, path: Path, *, timeout: float = TIMEOUT_SECONDS) -> None:
        self.path = Path(path)
        self.timeout = timeout
        self._local = threading.local()  # one connection per thread: requests never interleave
        self._described: dict[str, Any] | None = None
        self._xpubs: dict[int, str] = {}

    def __repr__(self) -> str:
        return f"SignerClient({self.path})"

    # -- the socket ---------------------------------------------------------------------------------

    def _connect(self) -> socket.socket:
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        sock.settimeout(self.timeout)
        try:
            with wire.reachable(self.path) as address:
                sock.connect(address)
        except OSError:
            sock.close()
            raise
        return sock

    def call(self, request: dict[str, Any]) -> dict[str, Any]:
        """The signer's answer to ``request``; SignerUnavailable when it cannot be had. A kept
        connection that broke (the signer restarted) is replaced once."""
        for attempt in (1, 2):
            sock = getattr(self._local, "sock", None)
            try:
                if sock is None:
                    sock = self._local.sock = self._connect()
                wire.send(sock, request)
                answer = wire.receive(sock)
                if answer is None:
                    raise wire.WireError("the signer closed the connection")
                return answer
            except (OSError, wire.WireError) as exc:
                if sock is not None:
                    sock.close()
                self._local.sock = None
                if attempt == 2 or sock is None:
                    raise SignerUnavailable(f"the signer process does not answer ({exc})") from None
        raise AssertionError("unreachable")

    def _ok(self, request: dict[str, Any]) -> dict[str, Any]:
        answer = self.call(request)
        if answer.get("ok"):
            return answer
        reason = str(answer.get("reason", ""))
        error = answer.get("error")
        if error == "custody_refused":
            raise CustodyRefused(reason)
        if error == "refused":
            raise SignerRefused(reason)
        if error == "forbidden":
            raise SignerForbidden(reason)
        raise CustodyError(f"the signer answered {error}: {reason}")

    # -- CustodyKeys ----------------------------------------------------------------------------------

    def describe(self) -> dict[str, Any]:
        """Asked afresh (health): the key's fingerprint, source and refusal."""
        described = self._ok({"op": "describe"})
        self._described = described
        return described

    def _facts(self) -> dict[str, Any]:
        return self._described if self._described is not None else self.describe()

    @property
    def fingerprint(self) -> str:
        return str(self._facts()["fingerprint"])

    @property
    def source(self) -> str:
        return str(self._facts()["source"])

    def verify(self) -> str | None:
        """Why nothing may be derived or signed now: the signer's refusal of the key (kept once
        known, as Custody keeps its guard's), or that it does not answer (asked again next time)."""
        if self._described is not None and self._described.get("refusal") is None:
            return None
        try:
            refusal = self.describe().get("refusal")
        except CustodyError as exc:
            return str(exc)
        return None if refusal is None else str(refusal)

    def _xpub(self, account: int) -> str:
        xpub = self._xpubs.get(account)
        if xpub is None:
            xpub = self._xpubs[account] = str(self._ok({"op": "xpub", "account": account})["xpub"])
        return xpub

    def address(self, account: int, index: int) -> str:
        self._usable()
        return address_from_xpub(self._xpub(account), index)

    def _sign(self, account: int, index: int, tx: dict, grounds: Grounds) -> tuple[bytes, str]:
        request: dict[str, Any] = {
            "op": "sign",
            "account": account,
            "index": index,
            "payout": grounds.payout_id,
            "tx": wire.encode_tx(tx),
        }
        if grounds.recipient is not None:
            request["recipient"] = {"account": grounds.recipient[0], "index": grounds.recipient[1]}
        if grounds.instruction is not None:
            request["instruction"] = grounds.instruction.to_wire()
        answer = self._ok(request)
        return bytes.fromhex(str(answer["raw"])), str(answer["hash"])
