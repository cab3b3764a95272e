"""The install's own key material, kept in the data directory outside the databases.

``appliance.key`` (mode 0600) holds 32 random bytes; every purpose (JWT signing, signed object
links, encryption of operator secrets) gets its own subkey through HKDF, so one file can be
rotated as a whole and no purpose can forge another's values.
"""

from __future__ import annotations

import base64
import os
import secrets
from pathlib import Path

from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

KEY_FILE = "appliance.key"


def load_or_create_master_key(data_dir: Path) -> bytes:
    path = Path(data_dir) / KEY_FILE
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
        material = base64.b64encode(secrets.token_bytes(32)) + b"\n"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            os.write(fd, material)
        except BaseException:
            os.close(fd)
            raise
        os.close(fd)
    raw = base64.b64decode(path.read_bytes().strip())
    if len(raw) != 32:
        raise ValueError(f"{path} does not hold a 32-byte key")
    return raw


def subkey(master: bytes, purpose: str, length: int = 32) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=length, salt=None, info=purpose.encode()).derive(master)


def seal(master: bytes, purpose: str, context: str, plaintext: str) -> bytes:
    """``plaintext`` encrypted at rest (AES-GCM under the purpose's subkey); ``context`` (the owner
    and id of the value) is authenticated, so a ciphertext cannot be moved to another row."""
    nonce = os.urandom(12)
    return nonce + AESGCM(subkey(master, purpose)).encrypt(nonce, plaintext.encode(), context.encode())


def unseal(master: bytes, purpose: str, context: str, blob: bytes) -> str:
    blob = bytes(blob)
    return AESGCM(subkey(master, purpose)).decrypt(blob[:12], blob[12:], context.encode()).decode()
