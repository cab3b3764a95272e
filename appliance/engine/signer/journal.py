"""The signer's journal: every transaction it signed, append-only and hash-chained, in signer.db.

An entry is a JSON object (``canonical``: keys sorted, no whitespace) of: ``seq`` (1, 2, …),
``prev`` (the SHA-256, hex, of the previous entry's canonical form; 64 zeros for the first), ``at``
(UTC, ISO 8601), ``wallet``, ``networkId``, ``nonce``, ``keyPath`` ("A/I"), ``kind``
(native_payout, token_payout, cancellation, gas_topup, sweep_native, sweep_token), ``to``,
``value``, ``data`` (hex), ``gas``, ``maxFeePerGas``, ``maxPriorityFeePerGas``, ``raw`` (the signed
bytes, hex), ``txHash``, ``reason`` (why it was signed), ``payout`` (the engine's row id, or
null), ``operatorId``, ``payoutId``, ``chainId``, ``asset``, ``amountMinor`` (of a payout, else
null), ``instruction`` (the operator's signed instruction honoured, as on the wire, or null) and
``recipient`` (``{"account", "index"}`` a top-up named, or null). Numbers of money are decimal
strings.

``journal_head`` keeps the last entry's seq and hash, so that a removed or edited last entry is
seen as well. ``verify`` walks the chain. What this proves: that the journal was not edited by
anything but a rewrite of the whole chain from the edit on (which whoever can write signer.db can
do: the head ``journal-verify`` prints, noted elsewhere, pins it).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sqlite3
from typing import Any

GENESIS = "0" * 64


def canonical(entry: dict[str, Any]) -> bytes:
    return json.dumps(entry, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def digest(entry: dict[str, Any]) -> str:
    return hashlib.sha256(canonical(entry)).hexdigest()


def append(db: sqlite3.Connection, fields: dict[str, Any]) -> dict[str, Any]:
    """Append an entry (inside the caller's transaction); the last nonce signed is raised with it."""
    head = db.execute("SELECT seq, hash FROM journal_head WHERE id = 1").fetchone()
    seq, prev = (1, GENESIS) if head is None else (int(head[0]) + 1, str(head[1]))
    entry = {**fields, "seq": seq, "prev": prev}
    db.execute(
        "INSERT INTO journal (seq, wallet, network_id, nonce, entry) VALUES (?, ?, ?, ?, ?)",
        (seq, entry["wallet"], entry["networkId"], entry["nonce"], canonical(entry).decode()),
    )
    db.execute(
        "INSERT INTO journal_head (id, seq, hash) VALUES (1, ?, ?) "
        "ON CONFLICT (id) DO UPDATE SET seq = excluded.seq, hash = excluded.hash",
        (seq, digest(entry)),
    )
    db.execute(
        "INSERT INTO last_nonce (wallet, network_id, nonce) VALUES (?, ?, ?) "
        "ON CONFLICT (wallet, network_id) DO UPDATE SET nonce = MAX(nonce, excluded.nonce)",
        (entry["wallet"], entry["networkId"], entry["nonce"]),
    )
    return entry


def at_nonce(db: sqlite3.Connection, wallet: str, network_id: int, nonce: int) -> list[dict[str, Any]]:
    rows = db.execute(
        "SELECT entry FROM journal WHERE wallet = ? AND network_id = ? AND nonce = ? ORDER BY seq",
        (wallet, network_id, nonce),
    )
    return [json.loads(row[0]) for row in rows]


def has_wallet(db: sqlite3.Connection, wallet: str, network_id: int) -> bool:
    row = db.execute(
        "SELECT 1 FROM last_nonce WHERE wallet = ? AND network_id = ?", (wallet, network_id)
    ).fetchone()
    return row is not None


@dataclasses.dataclass(frozen=True)
class Verdict:
    ok: bool
    entries: int
    head: str  # the last entry's hash (GENESIS when empty)
    problem: str | None

    def as_dict(self) -> dict[str, Any]:
        return {"ok": self.ok, "entries": self.entries, "head": self.head, "problem": self.problem}


def verify(db: sqlite3.Connection) -> Verdict:
    """Walk the chain from the first entry: each one's seq follows, its ``prev`` is the previous
    entry's hash, its indexed columns are its own, and the last one's hash is the recorded head."""
    prev, seq = GENESIS, 0
    for row_seq, wallet, network_id, nonce, text in db.execute(
        "SELECT seq, wallet, network_id, nonce, entry FROM journal ORDER BY seq"
    ):
        seq += 1
        try:
            entry = json.loads(text)
        except ValueError:
            return Verdict(False, seq - 1, prev, f"entry {row_seq} is not JSON")
        if row_seq != seq or entry.get("seq") != seq:
            return Verdict(False, seq - 1, prev, f"entry {seq} is missing (found {row_seq})")
        if entry.get("prev") != prev:
            return Verdict(False, seq - 1, prev, f"entry {seq} does not follow entry {seq - 1}: edited")
        if (entry.get("wallet"), entry.get("networkId"), entry.get("nonce")) != (wallet, network_id, nonce):
            problem = f"entry {seq}'s wallet, network or nonce columns were edited"
            return Verdict(False, seq - 1, prev, problem)
        prev = digest(entry)
    head = db.execute("SELECT seq, hash FROM journal_head WHERE id = 1").fetchone()
    recorded = (0, GENESIS) if head is None else (int(head[0]), str(head[1]))
    if recorded != (seq, prev):
        return Verdict(False, seq, prev, f"the recorded head is entry {recorded[0]} ({recorded[1]}): edited")
    return Verdict(True, seq, prev, None)
