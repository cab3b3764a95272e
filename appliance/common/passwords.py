"""Password hashing with argon2id (argon2-cffi's recommended parameters)."""

from __future__ import annotations

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError, VerifyMismatchError

_hasher = PasswordHasher()
# Verified against when the account does not exist, so that a wrong email costs the same time
# as a wrong password. A fixed hash made with the hasher's own parameters (a test keeps them
# equal): hashing it at import cost every start a third of a second of CPU.
_PLACEHOLDER = (
    "$argon2id$v=19$m=65536,t=3,p=4$n8f2ThbOcThXD2Nw07F7lg$nNeS10s0tFmJbVZQZv8Axr2Jp+soz6aciKb6Ux84uIY"
)


def hash_password(password: str) -> str:
    return _hasher.hash(password)


def verify_password(password_hash: str | None, password: str) -> bool:
    """True when ``password`` matches; runs a full verification even without a hash."""
    try:
        return _hasher.verify(password_hash or _PLACEHOLDER, password) and password_hash is not None
    except (VerifyMismatchError, VerificationError, InvalidHashError):
        return False


def needs_rehash(password_hash: str) -> bool:
    return _hasher.check_needs_rehash(password_hash)
