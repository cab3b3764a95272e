"""Files sealed at rest under a data key that a passphrase or an age recipient unlocks (backups).

A ``Sealer`` holds one random 32-byte data key and a JSON-safe ``header`` that says how to
recover it: wrapped under a passphrase (scrypt with fixed parameters, n = 2^17, r = 8, p = 1, then
AES-256-GCM, as custody.key is) or encrypted to one or more age X25519 recipients (``age1…``,
opened with the matching identity file). The header holds no secret: keep it beside the files
(a backup keeps it in its manifest).

Why fixed scrypt parameters and not age's passphrase mode: age sets its work factor by timing
scrypt on the machine at hand and refuses a file more than 16 times costlier than it measured, so a
backup sealed on a quiet machine may not open on a busy or smaller one (see
appliance/engine/custody_file.py). age's X25519 mode has no work factor and is used as it is. The
passphrase is stretched once per ``Sealer`` (a few tenths of a second), not once per file.

Each file is sealed in a stream (never whole in memory), in the STREAM construction age's own
payload uses: a 16-byte random salt, a per-file key HKDF-SHA256(data key, salt, the file's label),
then chunks of 64 KiB, each AES-256-GCM with the nonce (chunk number, last-chunk flag). A changed,
reordered, truncated or extended file, or one moved to another label (path), fails to open.

    sealer = Sealer.with_passphrase("correct horse")        # or Sealer.for_recipients(["age1…"])
    seal_file(Path("engine.db"), Path("backup/engine.db"), sealer, label="engine.db")
    again = Sealer.open(sealer.header, passphrase=lambda: "correct horse")
    open_file(Path("backup/engine.db"), Path("restored/engine.db"), again, label="engine.db")
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import os
import secrets
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, BinaryIO

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

MAGIC = b"appliance-sealed/1\n"
SALT_BYTES = 16
CHUNK = 64 * 1024
TAG = 16
KEY_BYTES = 32
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
# Bounds on what a header may ask for (a crafted one must not take a gigabyte more or minutes).
MAX_SCRYPT_MEMORY = 1 << 30
MAX_SCRYPT_P = 4
PASSPHRASE = "passphrase"
RECIPIENTS = "age-x25519"
# A 96-bit nonce: an 88-bit chunk counter and the last-chunk flag.
MAX_CHUNKS = 1 << 88

Progress = Callable[[int], None]


class SealingError(Exception):
    """A sealed file or header that cannot be opened; the message is one line."""


class WrongSecret(SealingError):
    """The passphrase or identities given do not unlock the data key."""


class Damaged(SealingError):
    """A sealed file that is not what was sealed (altered, truncated, or another file)."""


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _unb64(text: Any) -> bytes:
    if not isinstance(text, str):
        raise ValueError("not base64 text")
    return base64.b64decode(text, validate=True)


def _canonical(document: dict[str, Any]) -> bytes:
    return json.dumps(document, sort_keys=True, separators=(",", ":")).encode()


def _scrypt(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=KEY_BYTES, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def _hkdf(key: bytes, salt: bytes | None, info: bytes) -> bytes:
    return HKDF(algorithm=hashes.SHA256(), length=KEY_BYTES, salt=salt, info=info).derive(key)


class Sealer:
    """A data key and the header that recovers it; seals and opens files and MACs documents."""

    def __init__(self, key: bytes, header: dict[str, Any]) -> None:
        if len(key) != KEY_BYTES:
            raise ValueError("a data key is 32 bytes")
        self._key = key
        self.header = header

    def __repr__(self) -> str:  # never the key
        return f"Sealer(scheme={self.header.get('scheme')!r})"

    # -- making one ------------------------------------------------------------------------------

    @classmethod
    def with_passphrase(cls, passphrase: str) -> Sealer:
        if not passphrase:
            raise SealingError("the passphrase is empty")
        key = secrets.token_bytes(KEY_BYTES)
        salt, nonce = os.urandom(16), os.urandom(12)
        header: dict[str, Any] = {
            "scheme": PASSPHRASE,
            "kdf": "scrypt",
            "n": SCRYPT_N,
            "r": SCRYPT_R,
            "p": SCRYPT_P,
            "salt": _b64(salt),
            "cipher": "aes-256-gcm",
            "nonce": _b64(nonce),
        }
        wrapping = _scrypt(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
        wrapped = AESGCM(wrapping).encrypt(nonce, key, _canonical(header))
        return cls(key, {**header, "wrappedKey": _b64(wrapped)})

    @classmethod
    def for_recipients(cls, recipients: Sequence[str]) -> Sealer:
        import pyrage

        if not recipients:
            raise SealingError("no recipient given")
        parsed = []
        for recipient in recipients:
            try:
                parsed.append(pyrage.x25519.Recipient.from_str(recipient.strip()))
            except pyrage.RecipientError:
                raise SealingError(f"{recipient!r} is not an age recipient (age1…)") from None
        key = secrets.token_bytes(KEY_BYTES)
        wrapped = pyrage.encrypt(key, parsed)
        header = {
            "scheme": RECIPIENTS,
            "recipients": [r.strip() for r in recipients],
            "wrappedKey": _b64(wrapped),
        }
        return cls(key, header)

    @classmethod
    def open(
        cls,
        header: Any,
        *,
        passphrase: Callable[[], str] | None = None,
        identities: Sequence[str] = (),
    ) -> Sealer:
        """The sealer of ``header``: its data key unwrapped with the passphrase (asked only if the
        header needs one) or one of the age identities (``AGE-SECRET-KEY-1…``)."""
        scheme = header.get("scheme") if isinstance(header, dict) else None
        if scheme == PASSPHRASE:
            if passphrase is None:
                raise WrongSecret("it is sealed under a passphrase and none was given")
            return cls(_unwrap_passphrase(header, passphrase()), header)
        if scheme == RECIPIENTS:
            if not identities:
                raise WrongSecret(
                    f"it is sealed to {', '.join(map(str, header.get('recipients', [])))}: give the "
                    "matching identity file"
                )
            return cls(_unwrap_recipients(header, identities), header)
        raise Damaged(f"unknown sealing scheme {scheme!r}")

    # -- using one -------------------------------------------------------------------------------

    def file_key(self, salt: bytes, label: str) -> bytes:
        return _hkdf(self._key, salt, b"appliance-sealed/1 file\x00" + label.encode("utf-8"))

    def mac(self, document: dict[str, Any]) -> str:
        """An HMAC-SHA256 of ``document`` (canonical JSON) under a subkey: proves a header-bearing
        document (a manifest) was written by the holder of the data key."""
        key = _hkdf(self._key, None, b"appliance-sealed/1 document mac")
        return hmac.new(key, _canonical(document), hashlib.sha256).hexdigest()

    def check_mac(self, document: dict[str, Any], mac: Any) -> None:
        if not isinstance(mac, str) or not hmac.compare_digest(self.mac(document), mac):
            raise Damaged("its manifest was altered (its MAC does not match)")


def _unwrap_passphrase(header: dict[str, Any], passphrase: str) -> bytes:
    try:
        fields = {k: header[k] for k in ("scheme", "kdf", "n", "r", "p", "salt", "cipher", "nonce")}
        n, r, p = fields["n"], fields["r"], fields["p"]
        salt, nonce = _unb64(fields["salt"]), _unb64(fields["nonce"])
        wrapped = _unb64(header["wrappedKey"])
    except (KeyError, ValueError, TypeError):
        raise Damaged("its key header is damaged") from None
    if fields["kdf"] != "scrypt" or fields["cipher"] != "aes-256-gcm":
        raise Damaged("its key header names an unknown encryption")
    whole = all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (n, r, p))
    if not whole or n < 2 or n & (n - 1) or p > MAX_SCRYPT_P or 128 * r * n > MAX_SCRYPT_MEMORY:
        raise Damaged("its key header asks for scrypt parameters beyond the bounds this binary opens")
    if len(nonce) != 12 or len(salt) < 16:
        raise Damaged("its key header is damaged (salt or nonce)")
    try:
        key = AESGCM(_scrypt(passphrase, salt, n, r, p)).decrypt(nonce, wrapped, _canonical(fields))
    except InvalidTag:
        raise WrongSecret(
            "the passphrase does not open it (a wrong passphrase, or an altered header)"
        ) from None
    if len(key) != KEY_BYTES:
        raise Damaged("its key header is damaged")
    return key


def _unwrap_recipients(header: dict[str, Any], identities: Sequence[str]) -> bytes:
    import pyrage

    parsed = []
    for identity in identities:
        try:
            parsed.append(pyrage.x25519.Identity.from_str(identity.strip()))
        except pyrage.IdentityError:
            raise SealingError("an identity given is not an age identity (AGE-SECRET-KEY-1…)") from None
    try:
        key = bytes(pyrage.decrypt(_unb64(header.get("wrappedKey")), parsed))
    except ValueError:
        raise Damaged("its key header is damaged") from None
    except pyrage.DecryptError:
        raise WrongSecret(
            "no identity given opens it (it is sealed to "
            f"{', '.join(map(str, header.get('recipients', [])))})"
        ) from None
    if len(key) != KEY_BYTES:
        raise Damaged("its key header is damaged")
    return key


def read_identities(path: Path) -> list[str]:
    """The age identities of an identity file (as `age-keygen` writes it: comments and keys)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
        raise SealingError(f"identity file {path}: {why}") from None
    found = [line.strip() for line in text.splitlines() if line.strip().startswith("AGE-SECRET-KEY-")]
    if not found:
        raise SealingError(f"identity file {path} holds no age identity (AGE-SECRET-KEY-1…)")
    return found


def new_identity() -> tuple[str, str]:
    """(identity, recipient): a new age X25519 key pair, as `age-keygen` makes."""
    import pyrage

    identity = pyrage.x25519.Identity.generate()
    return str(identity), str(identity.to_public())


# -- streams -------------------------------------------------------------------------------------


def _read_full(source: BinaryIO, size: int) -> bytes:
    """Up to ``size`` bytes, fewer only at the end (a pipe may hand over less per read)."""
    parts, wanted = [], size
    while wanted:
        part = source.read(wanted)
        if not part:
            break
        parts.append(part)
        wanted -= len(part)
    return b"".join(parts)


def _nonce(counter: int, last: bool) -> bytes:
    if counter >= MAX_CHUNKS:
        raise SealingError("the file is too large to seal")
    return counter.to_bytes(11, "big") + (b"\x01" if last else b"\x00")


def seal_stream(
    source: BinaryIO, sink: BinaryIO, sealer: Sealer, label: str, progress: Progress | None = None
) -> None:
    """Seal everything ``source`` gives into ``sink`` (chunk by chunk, read ahead by one)."""
    salt = os.urandom(SALT_BYTES)
    cipher = AESGCM(sealer.file_key(salt, label))
    sink.write(MAGIC + salt)
    counter = 0
    chunk = _read_full(source, CHUNK)
    while True:
        following = _read_full(source, CHUNK) if len(chunk) == CHUNK else b""
        last = not following
        sink.write(cipher.encrypt(_nonce(counter, last), chunk, None))
        if progress is not None:
            progress(len(chunk))
        if last:
            return
        chunk, counter = following, counter + 1


def open_stream(
    source: BinaryIO, sink: BinaryIO, sealer: Sealer, label: str, progress: Progress | None = None
) -> None:
    """Open what seal_stream wrote into ``sink``; Damaged at the first chunk that does not
    authenticate (what was written to ``sink`` before then is the caller's to discard)."""
    head = _read_full(source, len(MAGIC) + SALT_BYTES)
    if len(head) != len(MAGIC) + SALT_BYTES or not head.startswith(MAGIC):
        raise Damaged("not a sealed file")
    cipher = AESGCM(sealer.file_key(head[len(MAGIC) :], label))
    counter = 0
    stored = _read_full(source, CHUNK + TAG)
    while True:
        following = _read_full(source, CHUNK + TAG) if len(stored) == CHUNK + TAG else b""
        last = not following
        try:
            sink.write(cipher.decrypt(_nonce(counter, last), stored, None))
        except (InvalidTag, ValueError):
            raise Damaged("it does not authenticate (altered, truncated or another file)") from None
        if progress is not None:
            progress(len(stored))
        if last:
            return
        stored, counter = following, counter + 1


class _Hashing:
    """A binary reader or writer that hashes and counts what passes through it."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.digest = hashlib.sha256()
        self.size = 0

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        self.digest.update(data)
        self.size += len(data)
        return data

    def write(self, data: bytes) -> int:
        self.digest.update(data)
        self.size += len(data)
        return self.inner.write(data)


def _create_private(path: Path) -> BinaryIO:
    path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
    return os.fdopen(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb")


def seal_file(
    src: Path, dst: Path, sealer: Sealer, label: str, progress: Progress | None = None
) -> tuple[int, str]:
    """Seal ``src`` into the new file ``dst`` (0600, fsynced); (size, SHA-256) of ``dst``."""
    with open(src, "rb") as reader, _create_private(Path(dst)) as raw:
        writer = _Hashing(raw)  # type: ignore[arg-type]
        seal_stream(reader, writer, sealer, label, progress)  # type: ignore[arg-type]
        raw.flush()
        os.fsync(raw.fileno())
    return writer.size, writer.digest.hexdigest()


def open_file(
    src: Path, dst: Path, sealer: Sealer, label: str, progress: Progress | None = None
) -> tuple[int, str]:
    """Open the sealed ``src`` into the new file ``dst`` (0600, fsynced); (size, SHA-256) of
    ``src`` as stored, for a caller that checks it against a manifest. On Damaged, ``dst`` is
    removed."""
    try:
        with open(src, "rb") as raw, _create_private(Path(dst)) as writer:
            reader = _Hashing(raw)  # type: ignore[arg-type]
            open_stream(reader, writer, sealer, label, progress)  # type: ignore[arg-type]
            writer.flush()
            os.fsync(writer.fileno())
    except SealingError:
        Path(dst).unlink(missing_ok=True)
        raise
    return reader.size, reader.digest.hexdigest()
