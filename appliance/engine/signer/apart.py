"""The custody key's public facts, read by a short-lived child process: `demo` creates the key
(when absent) and learns its fingerprint and wallet addresses before `serve` starts, without the
words ever entering the process that then forks the serving processes."""

from __future__ import annotations

import json
import os
from typing import Any

from appliance.engine.custody import CustodyError, CustodyRefused
from appliance.engine.custody_file import Ask, CustodyPassphraseError
from appliance.settings import Settings

ERRORS: dict[str, type[CustodyError]] = {
    "CustodyPassphraseError": CustodyPassphraseError,
    "CustodyRefused": CustodyRefused,
}


def _facts(settings: Settings, ask: Ask | None) -> dict[str, Any]:
    from appliance.engine.custody_file import create_custody_key, file_is_encrypted, load_for

    created = file_is_encrypted(settings.data_dir) is None and create_custody_key(settings.data_dir)[0]
    custody = load_for(settings, ask)  # an encrypted key: its passphrase asked here if need be
    if custody is None:
        raise CustodyError(f"there is no custody key in {settings.data_dir}")
    return {
        "created": created,
        "fingerprint": custody.fingerprint,
        "encrypted": custody.encrypted,
        "payoutAddress": custody.payout_address,
        "feeAddress": custody.fee_address,
    }


def key_facts(settings: Settings, ask: Ask | None = None) -> dict[str, Any]:
    """{"created", "fingerprint", "encrypted", "payoutAddress", "feeAddress"}, creating a plain
    custody.key when there is none; the key's problem as the CustodyError it is. The passphrase of
    an encrypted key is asked (``ask``) by the child, so that it never enters this process."""
    read, write = os.pipe2(os.O_CLOEXEC)
    pid = os.fork()
    if pid == 0:
        os.close(read)
        code = 0
        try:
            answer: dict[str, Any] = {"facts": _facts(settings, ask)}
        except BaseException as exc:
            answer, code = {"error": type(exc).__name__, "message": str(exc)}, 1
        try:
            os.write(write, json.dumps(answer).encode())
        finally:
            os._exit(code)
    os.close(write)
    chunks = []
    while chunk := os.read(read, 65536):
        chunks.append(chunk)
    os.close(read)
    os.waitpid(pid, 0)
    answer = json.loads(b"".join(chunks) or b'{"error": "CustodyError", "message": "the key reader died"}')
    if "facts" in answer:
        return dict(answer["facts"])
    raise ERRORS.get(answer["error"], CustodyError)(answer["message"])
