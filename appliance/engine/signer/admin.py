"""The administrator's side of the signer's own state: what `appliance signer-policy …` and
`appliance operator add-signing-key` call.

Each function talks to the running signer over its socket (signer.sock in the data directory)
with the administrator token (signer-admin.token beside the key, 0600: whoever can read it is the
administrator). When no signer runs (no socket, or a socket nobody listens on: `serve` is
stopped), it opens signer.db itself, as the signer would: whoever can write that file could
change it anyway. A socket it may not use (another user's signer) is an error, never a reason to
open the file behind the signer's back.
"""

from __future__ import annotations

import socket
from pathlib import Path
from typing import Any

from appliance.engine.signer import commands, wire
from appliance.engine.signer.store import open_store, read_admin_token
from appliance.settings import Settings


class AdminError(Exception):
    """The command could not be done (the reason says why, one line)."""


def signer_socket(settings: Settings) -> Path:
    from appliance.engine.signer.process import socket_path

    # An external signer (`appliance signer` as its own user) is reached where settings name it.
    return Path(settings.signer_socket) if settings.signer_socket else socket_path(settings.data_dir)


def _listening(path: Path) -> bool:
    if not path.exists():
        return False
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe, wire.reachable(path) as address:
        try:
            probe.connect(address)
        except ConnectionRefusedError:
            return False  # left by a signer that was killed
        except PermissionError:
            raise AdminError(f"{path} belongs to another user: run this as the signer's user") from None
    return True


def run(settings: Settings, command: str, **args: Any) -> dict[str, Any]:
    """The result of an administrator command (commands.py) on the signer's state."""
    from appliance.engine.signer.client import SignerClient

    path = signer_socket(settings)
    if not _listening(path):
        store = open_store(Path(settings.data_dir))
        try:
            return commands.run(store, command, args)
        except ValueError as exc:
            raise AdminError(str(exc)) from None
        finally:
            store.close()
    try:
        token = read_admin_token(Path(settings.data_dir))
    except OSError as exc:
        raise AdminError(
            f"the administrator token cannot be read ({exc.strerror}): run this as its owner"
        ) from None
    answer = SignerClient(path).call({"op": "admin", "token": token, "command": command, "args": args})
    if not answer.get("ok"):
        raise AdminError(f"the signer answered {answer.get('error')}: {answer.get('reason')}")
    return dict(answer["result"])


def set_signing_key(settings: Settings, operator_id: str, public_key_hex: str) -> dict[str, Any]:
    """Register the operator's Ed25519 public key (64 hex digits) in the signer: from then on every
    payout of the operator needs its signature. A first key applies at once; replacing a key
    waits the policy's delay (the answer's ``effectiveAt``, ``delayed``)."""
    return run(settings, "set-signing-key", operator=operator_id, publicKey=public_key_hex)


def remove_signing_key(settings: Settings, operator_id: str) -> dict[str, Any]:
    """Remove the operator's key (a loosening: it takes effect after the policy's delay)."""
    return run(settings, "remove-signing-key", operator=operator_id)
