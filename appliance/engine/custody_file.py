"""custody.key at rest: the 24 words in plain text, or encrypted under a passphrase: scrypt
(n = 2^17, r = 8, p = 1: 128 MB of memory) derives an AES-256-GCM key, and the file is one line of
JSON naming the format, the scrypt parameters, the salt, the nonce and the ciphertext (the
parameters are authenticated with it).

Why not age: files written with age (through pyrage, by the first version of this feature) are
still opened, but age sets the scrypt work factor by timing scrypt on the machine at hand, both
when it encrypts and when it decrypts, and refuses a file whose factor is more than 16 times what
it measured. A key encrypted on a quiet or fast machine then cannot be opened on a busy or slower
one (a backup restored to a smaller host; `serve` restarted at a load average of 20), with an
error that looks like a wrong passphrase. Fixed parameters, written in the file and bounded when
read, open the same everywhere. `appliance custody encrypt` rewrites an age file in this format.

The passphrase comes from ``APPLIANCE_CUSTODY_PASSPHRASE`` (the setting custody_passphrase), else
the file the setting ``custody_passphrase_file`` names (systemd's ``LoadCredential=`` puts one in
``$CREDENTIALS_DIRECTORY``), else a prompt, which only a command run on a terminal offers (``ask``);
without any of them an encrypted key cannot be opened and the error says which to give.

scrypt costs a few tenths of a second per opening on purpose; a key opened once is kept for the
process (by the SHA-256 of the file and of the passphrase), so that a command opening it twice
pays once. Under ``serve`` only the signer and its keeper ever see the passphrase
(appliance/engine/signer/keeper.py): never ``serve`` itself nor its serving processes.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import threading
from collections.abc import Callable
from pathlib import Path

import pyrage
from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.scrypt import Scrypt

from appliance.engine.custody import (
    ENCRYPTED,
    ENVIRONMENT,
    PLAIN_FILE,
    Custody,
    CustodyError,
    custody_path,
    new_mnemonic,
)
from appliance.settings import Settings

FORMAT = "appliance-custody-key/1"
SCRYPT_N, SCRYPT_R, SCRYPT_P = 2**17, 8, 1
# Bounds on what a file may ask for when it is opened (a crafted file must not take a gigabyte
# more or run for minutes): scrypt needs 128 * r * n bytes.
MAX_SCRYPT_MEMORY = 1 << 30
MAX_SCRYPT_P = 4
# The first version wrote age files (pyrage); they are still opened.
ARMOR = b"-----BEGIN AGE ENCRYPTED FILE-----"
BINARY = b"age-encryption.org/v1"
NO_PASSPHRASE = (
    "custody.key is encrypted and no passphrase was given: set APPLIANCE_CUSTODY_PASSPHRASE or the "
    "setting custody_passphrase_file (systemd LoadCredential= fits), or run the command on a "
    "terminal to be asked"
)

Passphrase = Callable[[], str]
# Asks a person for the passphrase (the command line's prompt), or None when nobody can be asked.
Ask = Callable[[bool], "str | None"]

_opened: dict[tuple[str, str], str] = {}
_opened_lock = threading.Lock()


class CustodyPassphraseError(CustodyError):
    """No passphrase, or not the one custody.key was encrypted under."""


WRONG_PASSPHRASE = "the passphrase does not open custody.key (not the one it was encrypted under)"


def is_encrypted(data: bytes) -> bool:
    head = data.lstrip()
    return is_sealed(head) or head.startswith(ARMOR) or head.startswith(BINARY)


def is_sealed(data: bytes) -> bool:
    """Whether ``data`` is in this module's own format (not age's, not the plain words)."""
    return data.lstrip().startswith(b"{") and f'"format": "{FORMAT}"'.encode() in data[:200]


def file_is_encrypted(data_dir: Path) -> bool | None:
    """Whether custody.key is encrypted (None: there is none)."""
    path = custody_path(data_dir)
    return is_encrypted(path.read_bytes()) if path.is_file() else None


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


def _header_bytes(header: dict) -> bytes:
    """The authenticated data: every field but the ciphertext, in a fixed order."""
    return json.dumps(header, sort_keys=True, separators=(",", ":")).encode()


def _derive(passphrase: str, salt: bytes, n: int, r: int, p: int) -> bytes:
    return Scrypt(salt=salt, length=32, n=n, r=r, p=p).derive(passphrase.encode("utf-8"))


def encrypt_words(words: str, passphrase: str) -> bytes:
    if not passphrase:
        raise CustodyPassphraseError("the custody passphrase is empty")
    salt, nonce = os.urandom(16), os.urandom(12)
    header = {
        "format": FORMAT,
        "kdf": "scrypt",
        "n": SCRYPT_N,
        "r": SCRYPT_R,
        "p": SCRYPT_P,
        "salt": _b64(salt),
        "cipher": "aes-256-gcm",
        "nonce": _b64(nonce),
    }
    key = _derive(passphrase, salt, SCRYPT_N, SCRYPT_R, SCRYPT_P)
    sealed = AESGCM(key).encrypt(nonce, (words.strip() + "\n").encode("utf-8"), _header_bytes(header))
    return (json.dumps({**header, "ciphertext": _b64(sealed)}) + "\n").encode("ascii")


def _open_sealed(data: bytes, passphrase: str) -> bytes:
    try:
        document = json.loads(data)
        header = {key: document[key] for key in ("format", "kdf", "n", "r", "p", "salt", "cipher", "nonce")}
        n, r, p = header["n"], header["r"], header["p"]
        salt = base64.b64decode(header["salt"], validate=True)
        nonce = base64.b64decode(header["nonce"], validate=True)
        sealed = base64.b64decode(document["ciphertext"], validate=True)
    except (ValueError, KeyError, TypeError):
        raise CustodyError("custody.key is damaged (not a readable encrypted key)") from None
    if header["format"] != FORMAT or header["kdf"] != "scrypt" or header["cipher"] != "aes-256-gcm":
        raise CustodyError("custody.key is damaged (an unknown encryption)")
    bounded = all(isinstance(v, int) and not isinstance(v, bool) and v >= 1 for v in (n, r, p))
    if not bounded or n < 2 or n & (n - 1) or p > MAX_SCRYPT_P or 128 * r * n > MAX_SCRYPT_MEMORY:
        raise CustodyError("custody.key asks for scrypt parameters beyond the bounds this engine opens")
    if len(nonce) != 12 or len(salt) < 16:
        raise CustodyError("custody.key is damaged (salt or nonce)")
    try:
        return AESGCM(_derive(passphrase, salt, n, r, p)).decrypt(nonce, sealed, _header_bytes(header))
    except InvalidTag:
        raise CustodyPassphraseError(WRONG_PASSPHRASE) from None


def _open_age(data: bytes, passphrase: str) -> bytes:
    try:
        return bytes(pyrage.passphrase.decrypt(data, passphrase))
    except pyrage.DecryptError as exc:
        if "xcessive work" in str(exc):  # age's timing-based ceiling, not the passphrase
            raise CustodyError(
                "custody.key (an age file) asks for more scrypt work than age accepts on this machine "
                "right now (it times the machine at each opening); open it when the machine is less "
                "busy and run `appliance custody encrypt`, which rewrites it in a format that opens "
                "the same everywhere"
            ) from None
        raise CustodyPassphraseError(WRONG_PASSPHRASE) from None


def decrypt_words(data: bytes, passphrase: str) -> str:
    key = (hashlib.sha256(data).hexdigest(), hashlib.sha256(passphrase.encode()).hexdigest())
    with _opened_lock:
        if key in _opened:
            return _opened[key]
    opened = _open_sealed(data, passphrase) if is_sealed(data) else _open_age(data, passphrase)
    try:
        words = opened.decode("utf-8")
    except UnicodeDecodeError:
        raise CustodyError("custody.key decrypts to something that is not the 24 words") from None
    with _opened_lock:
        _opened[key] = words
    return words


def passphrase_of(settings: Settings, ask: Ask | None = None, *, confirm: bool = False) -> Passphrase:
    """Where this command finds the passphrase, asked only when an encrypted key must be opened
    (or written): the environment, the file, then a person (``ask``), in that order."""

    def find() -> str:
        if settings.custody_passphrase:
            return settings.custody_passphrase
        if settings.custody_passphrase_file:
            path = Path(settings.custody_passphrase_file)
            try:
                text = path.read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as exc:
                why = exc.strerror if isinstance(exc, OSError) else "not UTF-8 text"
                raise CustodyPassphraseError(f"custody_passphrase_file {path}: {why}") from None
            passphrase = text.rstrip("\r\n")  # a file's final newline is no part of the passphrase
            if not passphrase:
                raise CustodyPassphraseError(f"custody_passphrase_file {path} is empty")
            return passphrase
        asked = ask(confirm) if ask is not None else None
        if asked is None:
            raise CustodyPassphraseError(NO_PASSPHRASE)
        if not asked:
            raise CustodyPassphraseError("the custody passphrase is empty")
        return asked

    return find


def _write_new(path: Path, data: bytes) -> bool:
    """Write ``path`` (0600) only if it does not exist; False when another process made it first."""
    path.parent.mkdir(parents=True, exist_ok=True)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:
        return False
    with os.fdopen(fd, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())
    _fsync_directory(path.parent)
    return True


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def replace_atomically(path: Path, data: bytes) -> None:
    """``path`` holds ``data`` (0600), all of it or none of it: a crash midway leaves the old file."""
    temp = path.with_name(f".{path.name}.new-{os.getpid()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    try:
        with os.fdopen(fd, "wb") as handle:
            os.fchmod(handle.fileno(), 0o600)
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(temp, path)
    except BaseException:
        temp.unlink(missing_ok=True)
        raise
    _fsync_directory(path.parent)


def create(data_dir: Path, passphrase: str | None) -> tuple[bool, str]:
    """Create custody.key if absent: plain, or encrypted under ``passphrase``; never overwrites
    one. Returns (created, fingerprint); an existing key is opened (with ``passphrase``)."""
    path = custody_path(data_dir)
    if path.exists():
        return False, _open_existing(data_dir, passphrase)
    words = new_mnemonic()
    data = encrypt_words(words, passphrase) if passphrase is not None else (words + "\n").encode()
    if not _write_new(path, data):  # another process created it meanwhile: keep theirs
        return False, _open_existing(data_dir, passphrase)
    return True, Custody(words).fingerprint


def _open_existing(data_dir: Path, passphrase: str | None) -> str:
    custody = load(data_dir, "", None if passphrase is None else lambda: passphrase)
    assert custody is not None
    return custody.fingerprint


def load(data_dir: Path, from_environment: str, passphrase: Passphrase | None) -> Custody | None:
    if from_environment.strip():
        return Custody(from_environment, source=ENVIRONMENT)
    path = custody_path(data_dir)
    if not path.is_file():
        return None
    data = path.read_bytes()
    if not is_encrypted(data):
        return Custody(data.decode("utf-8", errors="replace"), source=PLAIN_FILE)
    if passphrase is None:
        raise CustodyPassphraseError(NO_PASSPHRASE)
    return Custody(decrypt_words(data, passphrase()), source=ENCRYPTED)


def load_for(settings: Settings, ask: Ask | None = None) -> Custody | None:
    """The custody key of ``settings``, its passphrase found as passphrase_of says."""
    return load(settings.data_dir, settings.custody_key, passphrase_of(settings, ask))


def encrypt_in_place(data_dir: Path, passphrase: Passphrase) -> tuple[bool, str]:
    """Encrypt a plain custody.key in place (atomically, 0600); (converted, fingerprint). An
    encrypted one is left as it is, once the passphrase is shown to open it; an age file (the
    first version's format) is rewritten in this module's format under the same passphrase."""
    path = custody_path(data_dir)
    if not path.is_file():
        raise CustodyError(f"there is no custody.key in {data_dir} (appliance custody init creates one)")
    data = path.read_bytes()
    if is_sealed(data):
        return False, Custody(decrypt_words(data, passphrase()), source=ENCRYPTED).fingerprint
    if is_encrypted(data):  # an age file of the first version: rewritten under the same passphrase
        secret = passphrase()
        words = decrypt_words(data, secret)
    else:
        words = data.decode("utf-8", errors="replace")
        secret = ""
    custody = Custody(words)  # a damaged key is refused before anything is written
    secret = secret or passphrase()
    sealed = encrypt_words(" ".join(words.split()), secret)
    # Proven to open before it replaces the only copy of the words.
    if Custody(decrypt_words(sealed, secret)).fingerprint != custody.fingerprint:
        raise CustodyError("the encrypted key does not open to the same key: custody.key left as it was")
    replace_atomically(path, sealed)
    return True, custody.fingerprint


def create_custody_key(data_dir: Path, passphrase: str | None = None) -> tuple[bool, str]:
    """Create custody.key if absent (mode 0600, never overwritten; encrypted under ``passphrase``
    when one is given); returns (created, fingerprint)."""
    return create(Path(data_dir), passphrase)


def load_custody(
    data_dir: Path, from_environment: str, passphrase: Callable[[], str] | None = None
) -> Custody | None:
    """The deployment's custody key: APPLIANCE_CUSTODY_KEY, else custody.key (asking
    ``passphrase()`` only when it is encrypted), else None (the engine still starts; payouts wait
    and deposit addresses answer 503)."""
    return load(Path(data_dir), from_environment, passphrase)
