"""The signer's answer to one request of its socket (wire.py), whichever process serves it."""

from __future__ import annotations

import logging
import os
from typing import Any

from appliance.engine.custody import CustodyRefused
from appliance.engine.instructions import SignedInstruction
from appliance.engine.signer import commands, wire
from appliance.engine.signer.core import Recipient, Signer, SignerRefused
from appliance.engine.signer.store import read_admin_token, token_matches

log = logging.getLogger("appliance.engine.signer")

ACCOUNT_LIMIT = 2**31  # BIP32 hardened indices
WRONG_TOKEN = "the administrator token is not the signer's"


def answer(signer: Signer, request: dict[str, Any]) -> dict[str, Any]:
    """The answer to one request (never raises)."""
    op = request.get("op")
    try:
        if op == "describe":
            custody = signer.custody
            refusal = custody.verify()
            return {
                "ok": True,
                "fingerprint": custody.fingerprint,
                "source": custody.source,
                "refusal": refusal,
                # The user it runs as: the serving side compares it with its own (a plain key read
                # by that same user protects nothing: custody_record.custody_probe's warning).
                "uid": os.getuid(),
            }
        if op == "xpub":
            return {"ok": True, "xpub": signer.custody.account_xpub(_number(request, "account"))}
        if op == "sign":
            payout = request.get("payout")
            if payout is not None and type(payout) is not int:
                raise ValueError("payout must be a payout's row id or null")
            instruction = request.get("instruction")
            raw, tx_hash = signer.sign(
                _number(request, "account"),
                _number(request, "index"),
                wire.decode_tx(request.get("tx")),
                payout,
                recipient=_recipient(request.get("recipient")),
                instruction=None if instruction is None else SignedInstruction.from_wire(instruction),
            )
            return {"ok": True, "raw": raw.hex(), "hash": tx_hash}
        if op == "admin":
            # Read afresh each time: an administrator may replace the file (a new token) at any time.
            if not token_matches(request.get("token"), read_admin_token(signer.data_dir)):
                log.warning("signer: an administrator command with a wrong token; refused")
                return {"ok": False, "error": "forbidden", "reason": WRONG_TOKEN}
            command = request.get("command")
            result = commands.run(signer.state, str(command), request.get("args") or {})
            log.info("signer: administrator command %s done", command)
            return {"ok": True, "result": result}
        return {"ok": False, "error": "bad_request", "reason": f"unknown op {op!r}"}
    except CustodyRefused as exc:
        return {"ok": False, "error": "custody_refused", "reason": str(exc)}
    except SignerRefused as exc:
        return {"ok": False, "error": "refused", "reason": str(exc)}
    except (KeyError, TypeError, ValueError) as exc:
        return {"ok": False, "error": "bad_request", "reason": str(exc)}
    except Exception as exc:  # the database gone, say: the caller waits and asks again
        log.exception("signer: %s request failed", op)
        return {"ok": False, "error": "failed", "reason": f"{type(exc).__name__}: {exc}"}


def _number(request: dict[str, Any], name: str) -> int:
    value = request.get(name)
    if type(value) is not int or not 0 <= value < ACCOUNT_LIMIT:
        raise ValueError(f"{name} must be a whole number below 2^31")
    return value


def _recipient(fields: Any) -> Recipient | None:
    if fields is None:
        return None
    if not isinstance(fields, dict) or set(fields) != {"account", "index"}:
        raise ValueError("recipient carries exactly account and index")
    return _number(fields, "account"), _number(fields, "index")
