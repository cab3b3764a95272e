"""The administrator's commands on the signer's own state, run by the signer (the ``admin`` op of
its socket, with the administrator token) or, when no signer runs, by the command itself on
signer.db (admin.py). Each runs in one signer.db transaction and answers a JSON object; a bad
argument raises ValueError.

Commands (``args`` members):

- ``show``: the policy in force, pending changes, approvals, the last nonce signed per wallet and
  network, and the journal's check;
- ``set`` {name, value (a decimal or true/false string; null: back to the default), operator?,
  chainId?, asset?, networkId?}: a limit needs operator (or "*"), chainId and asset; a chain's
  ceiling networkId (or "*"); a deployment-wide value none;
- ``allow`` / ``disallow`` {operator, address}: the operator's destination allow-list;
- ``pause`` / ``resume`` {operator};
- ``set-signing-key`` {operator, publicKey} / ``remove-signing-key`` {operator};
- ``approve`` {operator, payoutId, by}: a payout above the signer's approval threshold;
- ``journal-verify``: the hash chain walked.

A loosening answers ``delayed: true`` with the time it takes effect (own_policy.py).
"""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.engine.signer import journal, own_policy
from appliance.engine.signer.store import SignerStore, stamp

NAMES = (
    "show",
    "set",
    "allow",
    "disallow",
    "pause",
    "resume",
    "set-signing-key",
    "remove-signing-key",
    "approve",
    "journal-verify",
)
SUBJECT_MAX = 128


def _text(args: dict[str, Any], name: str) -> str:
    found = args.get(name)
    if not isinstance(found, str) or not found or len(found) > SUBJECT_MAX or "/" in found:
        raise ValueError(f"{name} must be a non-empty string (at most {SUBJECT_MAX} characters, no '/')")
    return found


def run(store: SignerStore, command: str, args: dict[str, Any]) -> dict[str, Any]:
    if command not in NAMES:
        raise ValueError(f"unknown command {command!r} (known: {', '.join(NAMES)})")
    if not isinstance(args, dict):
        raise ValueError("args must be a JSON object")
    with store.write_transaction() as db:
        own_policy.apply_due(db)
        if command == "show":
            shown = own_policy.describe(db)
            shown["journal"] = journal.verify(db).as_dict()
            approvals = db.execute(
                "SELECT operator, payout_id, approved_by, approved_at FROM approval ORDER BY approved_at"
            )
            nonces = db.execute(
                "SELECT wallet, network_id, nonce FROM last_nonce ORDER BY wallet, network_id"
            )
            shown["lastNonces"] = [{"wallet": n[0], "networkId": n[1], "nonce": n[2]} for n in nonces]
            shown["approvals"] = [
                {"operator": a[0], "payoutId": a[1], "by": a[2], "at": a[3]} for a in approvals
            ]
            return shown
        if command == "journal-verify":
            return journal.verify(db).as_dict()
        if command == "approve":
            operator, payout_id = _text(args, "operator"), _text(args, "payoutId")
            by = str(args.get("by") or "administrator")[:SUBJECT_MAX]
            db.execute(
                "INSERT INTO approval (operator, payout_id, approved_by, approved_at) VALUES (?, ?, ?, ?) "
                "ON CONFLICT (operator, payout_id) DO NOTHING",
                (operator, payout_id, by, stamp(clock.now())),
            )
            return {"operator": operator, "payoutId": payout_id, "approvedBy": by}
        return _change(db, command, args).as_dict()


def _change(db: Any, command: str, args: dict[str, Any]) -> own_policy.Change:
    if command == "set":
        name = args.get("name")
        if not isinstance(name, str) or name not in own_policy.SETTINGS:
            raise ValueError(f"name is one of {', '.join(sorted(own_policy.SETTINGS))}")
        text = args.get("value")
        if text is not None and not isinstance(text, str):
            raise ValueError("value is a string (or null: back to the default)")
        return own_policy.set_value(db, name, _subject(own_policy.SETTINGS[name].section, args), text)
    operator = _text(args, "operator")
    if command in ("allow", "disallow"):
        address = args.get("address")
        if not isinstance(address, str):
            raise ValueError("address is a string")
        return own_policy.set_allowed(db, operator, address, command == "allow")
    if command in ("pause", "resume"):
        return own_policy.set_value(db, "paused", operator, "true" if command == "pause" else None)
    if command == "set-signing-key":
        key = args.get("publicKey")
        if not isinstance(key, str):
            raise ValueError("publicKey is a string")
        return own_policy.set_signing_key(db, operator, key.lower())
    return own_policy.set_signing_key(db, operator, None)  # remove-signing-key


def _subject(section: str, args: dict[str, Any]) -> str:
    if section == own_policy.LIMIT:
        return "/".join(_text(args, name) for name in ("operator", "chainId", "asset"))
    if section == own_policy.CHAIN:
        network = args.get("networkId", own_policy.ANY)
        if network != own_policy.ANY and (type(network) is not int or network < 0):
            raise ValueError('networkId is a whole number or "*"')
        return str(network)
    if section == own_policy.OPERATOR:
        return _text(args, "operator")
    return ""
