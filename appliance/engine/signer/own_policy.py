"""The signer's own policy, in signer.db: limits the serving side cannot change.

Values (``policy`` rows: section, subject, name, value as text):

- deployment-wide (subject ""): ``change_delay_seconds`` (default 86400: how long a loosening
  waits), ``require_instruction_signatures`` (default false: true refuses every payout without a
  valid signature of a registered key), ``gas_topup_cap_wei`` (default 10^18: the most one gas
  transfer from the fee wallet carries; the setting signer_gas_cap_wei applies as well);
- per operator and asset (section ``limit``, subject ``OPERATOR/CHAIN_ID/ASSET``; OPERATOR ``*``
  for every operator without its own): ``max_payout_minor``, ``daily_volume_minor`` (rolling 24 h,
  counted from what the signer signed) and ``approval_threshold_minor`` (above it a payout needs an
  approval recorded in signer.db); absent: no limit;
- per operator (section ``operator``): ``paused`` and ``signing_key`` (Ed25519 public key, hex);
  section ``allow``: the operator's destination allow-list, one row per address (lower case);
  empty: any destination;
- per chain (section ``chain``, subject the network id or ``*``): ``max_fee_per_gas_wei``
  (default 2,000 gwei), ``max_priority_fee_per_gas_wei`` (default 1,000 gwei) and the gas-limit
  ceilings ``gas_limit_KIND`` (native_payout 100,000; token_payout 300,000; sweep_native 100,000;
  sweep_token 300,000; gas_topup 100,000; cancellation 100,000).

A change that permits nothing more (a lower limit, an allow-list entry added to a list that holds
some, a pause, a higher delay, a first signing key) applies at once; any other (a loosening) waits
``change_delay_seconds`` as it stood when the change was asked (``pending``). A new change to a
value replaces a pending one of the same value.
"""

from __future__ import annotations

import dataclasses
import re
import sqlite3
from datetime import datetime, timedelta
from typing import Any

from appliance.common import clock
from appliance.engine.instructions import PUBLIC_KEY_HEX
from appliance.engine.signer.store import stamp

GWEI = 10**9
DEPLOYMENT, LIMIT, OPERATOR, ALLOW, CHAIN = "deployment", "limit", "operator", "allow", "chain"
ANY = "*"
KINDS = ("native_payout", "token_payout", "sweep_native", "sweep_token", "gas_topup", "cancellation")


@dataclasses.dataclass(frozen=True)
class Setting:
    section: str
    kind: str  # "int": a whole number, larger permits more (unless ``lower_looser``); "bool": true restricts
    default: int | bool | None
    lower_looser: bool = False


SETTINGS: dict[str, Setting] = {
    "change_delay_seconds": Setting(DEPLOYMENT, "int", 86_400, lower_looser=True),
    "require_instruction_signatures": Setting(DEPLOYMENT, "bool", False),
    "gas_topup_cap_wei": Setting(DEPLOYMENT, "int", 10**18),
    "max_payout_minor": Setting(LIMIT, "int", None),
    "daily_volume_minor": Setting(LIMIT, "int", None),
    "approval_threshold_minor": Setting(LIMIT, "int", None),
    "paused": Setting(OPERATOR, "bool", False),
    "max_fee_per_gas_wei": Setting(CHAIN, "int", 2_000 * GWEI),
    "max_priority_fee_per_gas_wei": Setting(CHAIN, "int", 1_000 * GWEI),
    "gas_limit_native_payout": Setting(CHAIN, "int", 100_000),
    "gas_limit_token_payout": Setting(CHAIN, "int", 300_000),
    "gas_limit_sweep_native": Setting(CHAIN, "int", 100_000),
    "gas_limit_sweep_token": Setting(CHAIN, "int", 300_000),
    "gas_limit_gas_topup": Setting(CHAIN, "int", 100_000),
    "gas_limit_cancellation": Setting(CHAIN, "int", 100_000),
}
SIGNING_KEY = "signing_key"
MAX_WHOLE = 2**256
ADDRESS = re.compile(r"0x[0-9a-f]{40}")


@dataclasses.dataclass(frozen=True)
class Change:
    section: str
    subject: str
    name: str
    value: str | None
    effective_at: datetime
    delayed: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "subject": self.subject,
            "name": self.name,
            "value": self.value,
            "effectiveAt": clock.iso(self.effective_at),
            "delayed": self.delayed,
        }


def _iso(moment: datetime) -> str:
    return stamp(moment)


def apply_due(db: sqlite3.Connection, now: datetime | None = None) -> None:
    """Put the pending changes whose time has come in force (inside the caller's transaction)."""
    moment = now or clock.now()
    due = db.execute(
        "SELECT id, section, subject, name, value FROM pending "
        "WHERE effective_at <= ? ORDER BY effective_at, id",
        (_iso(moment),),
    ).fetchall()
    for pending_id, section, subject, name, value in due:
        _write(db, section, subject, name, value, moment)
        db.execute("DELETE FROM pending WHERE id = ?", (pending_id,))


def _write(
    db: sqlite3.Connection, section: str, subject: str, name: str, value: str | None, at: datetime
) -> None:
    if value is None:
        db.execute(
            "DELETE FROM policy WHERE section = ? AND subject = ? AND name = ?", (section, subject, name)
        )
    else:
        db.execute(
            "INSERT INTO policy (section, subject, name, value, changed_at) VALUES (?, ?, ?, ?, ?) "
            "ON CONFLICT (section, subject, name) DO UPDATE SET value = excluded.value, "
            "changed_at = excluded.changed_at",
            (section, subject, name, value, _iso(at)),
        )


def raw(db: sqlite3.Connection, section: str, subject: str, name: str) -> str | None:
    row = db.execute(
        "SELECT value FROM policy WHERE section = ? AND subject = ? AND name = ?", (section, subject, name)
    ).fetchone()
    return None if row is None else str(row[0])


def _typed(setting: Setting, text: str | None) -> int | bool | None:
    if text is None:
        return None
    return text == "true" if setting.kind == "bool" else int(text)


def _fallback_subject(section: str, subject: str) -> str | None:
    if section == LIMIT:
        _operator, rest = subject.split("/", 1)
        return None if _operator == ANY else f"{ANY}/{rest}"
    if section == CHAIN:
        return None if subject == ANY else ANY
    return None


def value(db: sqlite3.Connection, name: str, subject: str = "") -> int | bool | None:
    """The value in force for ``subject`` (its own, else the ``*`` subject's, else the default)."""
    setting = SETTINGS[name]
    current: str | None = subject
    while current is not None:
        text = raw(db, setting.section, current, name)
        if text is not None:
            return _typed(setting, text)
        current = _fallback_subject(setting.section, current)
    return setting.default


def limit(db: sqlite3.Connection, name: str, operator: str, chain_id: str, asset: str) -> int | None:
    found = value(db, name, f"{operator}/{chain_id}/{asset}")
    return None if found is None else int(found)


def chain(db: sqlite3.Connection, name: str, network_id: int) -> int:
    return int(value(db, name, str(network_id)) or 0)


def deployment(db: sqlite3.Connection, name: str) -> int | bool:
    found = value(db, name)
    assert found is not None
    return found


def paused(db: sqlite3.Connection, operator: str) -> bool:
    return bool(value(db, "paused", operator))


def signing_key(db: sqlite3.Connection, operator: str) -> str | None:
    return raw(db, OPERATOR, operator, SIGNING_KEY)


def allow_list(db: sqlite3.Connection, operator: str) -> set[str]:
    rows = db.execute("SELECT name FROM policy WHERE section = ? AND subject = ?", (ALLOW, operator))
    return {str(row[0]) for row in rows}


# -- changes -------------------------------------------------------------------------------------


def set_value(db: sqlite3.Connection, name: str, subject: str, text: str | None) -> Change:
    """Change a SETTINGS value of ``subject`` (None: back to the ``*`` subject's or the default)."""
    setting = SETTINGS.get(name)
    if setting is None:
        raise ValueError(f"unknown policy value {name!r} (known: {', '.join(sorted(SETTINGS))})")
    new = _parse(setting, name, text)
    stored = None if new is None else (("true" if new else "false") if setting.kind == "bool" else str(new))
    before = value(db, name, subject)
    if new is None:
        fallback = _fallback_subject(setting.section, subject)
        after = value(db, name, fallback) if fallback is not None else setting.default
    else:
        after = new
    return _change(db, setting.section, subject, name, stored, _looser(setting, before, after))


def _parse(setting: Setting, name: str, text: str | None) -> int | bool | None:
    if text is None:
        return None
    if setting.kind == "bool":
        if text not in ("true", "false"):
            raise ValueError(f"{name} is true or false")
        return text == "true"
    if not text.isdigit() or int(text) >= MAX_WHOLE:
        raise ValueError(f"{name} is a whole number (decimal digits)")
    return int(text)


def _looser(setting: Setting, before: int | bool | None, after: int | bool | None) -> bool:
    """Whether ``after`` permits something ``before`` did not."""
    if setting.kind == "bool":  # true restricts (a pause, required signatures)
        return bool(before) and not after
    if setting.lower_looser:
        return int(after or 0) < int(before or 0)
    if after is None:  # no limit
        return before is not None
    return before is not None and int(after) > int(before)


def set_signing_key(db: sqlite3.Connection, operator: str, public_key_hex: str | None) -> Change:
    """A first key applies at once (it restricts); replacing or removing one waits the delay."""
    if public_key_hex is not None and not PUBLIC_KEY_HEX.match(public_key_hex):
        raise ValueError("a public key is 64 lower-case hex digits (32 bytes, Ed25519)")
    before = signing_key(db, operator)
    looser = before is not None and before != public_key_hex
    return _change(db, OPERATOR, operator, SIGNING_KEY, public_key_hex, looser)


def set_allowed(db: sqlite3.Connection, operator: str, address: str, allowed: bool) -> Change:
    """Add (or remove) a destination of the operator's allow-list (empty: any destination)."""
    address = address.lower()
    if not ADDRESS.fullmatch(address):
        raise ValueError("an address is 0x and 40 hex digits")
    before = allow_list(db, operator)
    after = (before | {address}) if allowed else (before - {address})
    # Permits more unless every address ``after`` allows was allowed before.
    looser = bool(before) and (not after or not after <= before)
    return _change(db, ALLOW, operator, address, "1" if allowed else None, looser)


def _change(
    db: sqlite3.Connection, section: str, subject: str, name: str, text: str | None, looser: bool
) -> Change:
    now = clock.now()
    db.execute("DELETE FROM pending WHERE section = ? AND subject = ? AND name = ?", (section, subject, name))
    if not looser:
        _write(db, section, subject, name, text, now)
        return Change(section, subject, name, text, now, False)
    effective = now + timedelta(seconds=int(deployment(db, "change_delay_seconds")))
    db.execute(
        "INSERT INTO pending (section, subject, name, value, requested_at, effective_at) "
        "VALUES (?, ?, ?, ?, ?, ?)",
        (section, subject, name, text, _iso(now), _iso(effective)),
    )
    return Change(section, subject, name, text, effective, True)


def describe(db: sqlite3.Connection) -> dict[str, Any]:
    """The policy in force (with the defaults), and what is pending."""
    rows = db.execute(
        "SELECT section, subject, name, value, changed_at FROM policy ORDER BY section, subject, name"
    ).fetchall()
    pending = db.execute(
        "SELECT section, subject, name, value, requested_at, effective_at FROM pending "
        "ORDER BY effective_at, id"
    ).fetchall()
    return {
        "defaults": {name: s.default for name, s in SETTINGS.items() if s.section in (DEPLOYMENT, CHAIN)},
        "deployment": {name: value(db, name) for name, s in SETTINGS.items() if s.section == DEPLOYMENT},
        "values": [
            {"section": r[0], "subject": r[1], "name": r[2], "value": r[3], "changedAt": r[4]} for r in rows
        ],
        "pending": [
            {
                "section": p[0],
                "subject": p[1],
                "name": p[2],
                "value": p[3],
                "requestedAt": p[4],
                "effectiveAt": p[5],
            }
            for p in pending
        ],
    }
