"""The signer socket's protocol: each message is a 4-byte big-endian length and that many bytes
of one UTF-8 JSON object; a connection carries any number of request/answer pairs, in turn.

Requests (``op``) and their answers (each with ``ok``; a refusal is ``{"ok": false, "error":
"refused" | "custody_refused" | "bad_request" | "forbidden" | "failed", "reason": "…"}``):

- ``{"op": "describe"}`` → ``{"ok": true, "fingerprint", "source", "refusal"}``: the key's BIP32
  fingerprint, where it came from, and why it may not be used (null when it may);
- ``{"op": "xpub", "account": N}`` → ``{"ok": true, "xpub"}``: m/44'/60'/N' as an extended public key;
- ``{"op": "sign", "account": A, "index": I, "payout": ID or null, "tx": {…}}`` → ``{"ok": true,
  "raw": hex, "hash": "0x…"}``: the transaction (type, chainId, nonce, to, value, data as hex, gas,
  maxFeePerGas, maxPriorityFeePerGas) signed by m/44'/60'/A'/0/I, when the policy allows it.
  Two optional members:
  - ``"recipient": {"account": A, "index": I}`` (A >= 1): a gas top-up of a deposit address names
    it by its key path; the signer derives the address itself and compares it with tx.to (the fee
    wallet sends gas only to the payout wallet or to such a derived address);
  - ``"instruction": {"payoutId", "asset", "amountMinor", "destination", "chainId", "signature"}``
    (six strings, appliance/engine/instructions.py): the operator's signed instruction for a payout
    transaction; required when the payout's operator has a signing key in signer.db (or the policy
    requires signatures), and compared with what the transaction itself pays.
- ``{"op": "admin", "token": T, "command": NAME, "args": {…}}`` → ``{"ok": true, "result": {…}}``:
  an administrator command on the signer's own state (commands.py), with the token of
  ``signer-admin.token``; a wrong token answers ``{"ok": false, "error": "forbidden"}``.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import struct
from collections.abc import Iterator
from pathlib import Path
from typing import Any

HEADER = struct.Struct(">I")
MAX_MESSAGE = 1 << 20  # a transaction's fields are a few hundred bytes
TX_FIELDS = ("type", "chainId", "nonce", "to", "value", "data", "gas", "maxFeePerGas", "maxPriorityFeePerGas")
# sun_path holds 108 bytes; a longer path is reached through the directory's descriptor.
SOCKET_PATH_BYTES = 100


class WireError(Exception):
    """The peer broke the protocol (or went away in the middle of a message)."""


def send(sock: socket.socket, message: dict[str, Any]) -> None:
    body = json.dumps(message, separators=(",", ":")).encode()
    sock.sendall(HEADER.pack(len(body)) + body)


def receive(sock: socket.socket) -> dict[str, Any] | None:
    """The next message; None when the peer closed the connection between messages."""
    head = _exactly(sock, HEADER.size, at_boundary=True)
    if head is None:
        return None
    (length,) = HEADER.unpack(head)
    if length > MAX_MESSAGE:
        raise WireError(f"a message of {length} bytes (at most {MAX_MESSAGE})")
    body = _exactly(sock, length, at_boundary=False)
    try:
        message = json.loads(body or b"")
    except (UnicodeDecodeError, ValueError):
        raise WireError("a message that is not JSON") from None
    if not isinstance(message, dict):
        raise WireError("a message that is not a JSON object")
    return message


def _exactly(sock: socket.socket, size: int, *, at_boundary: bool) -> bytes | None:
    chunks, got = [], 0
    while got < size:
        chunk = sock.recv(size - got)
        if not chunk:
            if at_boundary and got == 0:
                return None
            raise WireError("the connection closed in the middle of a message")
        chunks.append(chunk)
        got += len(chunk)
    return b"".join(chunks)


def encode_tx(tx: dict[str, Any]) -> dict[str, Any]:
    out = {name: tx[name] for name in TX_FIELDS if name in tx}
    data = out.get("data", b"")
    out["data"] = bytes(data).hex() if isinstance(data, bytes | bytearray) else str(data).removeprefix("0x")
    return out


def decode_tx(fields: Any) -> dict[str, Any]:
    if not isinstance(fields, dict) or set(fields) - set(TX_FIELDS):
        raise ValueError("tx carries fields other than " + ", ".join(TX_FIELDS))
    tx = dict(fields)
    tx["data"] = bytes.fromhex(str(tx.get("data", "")))
    for name in TX_FIELDS:
        if name not in ("to", "data") and name in tx and (type(tx[name]) is not int or tx[name] < 0):
            raise ValueError(f"tx field {name} must be a whole number")
    return tx


@contextlib.contextmanager
def reachable(path: Path) -> Iterator[str]:
    """An address for ``path`` that fits in sun_path, valid inside the block."""
    if len(os.fsencode(str(path))) <= SOCKET_PATH_BYTES:
        yield str(path)
        return
    fd = os.open(path.parent, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)
    try:
        yield f"/proc/self/fd/{fd}/{path.name}"
    finally:
        os.close(fd)
