"""The administrator's sign-in: a password (argon2) and a TOTP code (RFC 6238, pyotp), each code
accepted once; five failures lock sign-in for 15 minutes; a session is a random token whose hash
is stored, valid for ``SESSION`` and revoked at sign-out."""

from __future__ import annotations

import dataclasses
import hashlib
import secrets
from datetime import datetime, timedelta

import pyotp

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.keys import seal, unseal
from appliance.common.passwords import hash_password, verify_password
from appliance.engine.admin.models import AdminAccount, AdminSession
from appliance.engine.db import database

SESSION = timedelta(minutes=30)
LOCK = timedelta(minutes=15)
MAX_FAILURES = 5
PURPOSE = "engine-admin-totp"
CONTEXT = "admin:1"
ISSUER = "Appliance payout engine"


class SignInRefused(Exception):
    """Wrong password or code, or sign-in locked (the message says which, never which part)."""


@dataclasses.dataclass(frozen=True)
class Enrolment:
    secret: str
    uri: str


def set_password(master_key: bytes, password: str, *, keep_totp: bool = False) -> Enrolment | None:
    """Set the administrator's password; a new TOTP secret unless ``keep_totp`` (returned once, for
    the authenticator app). Every session ends."""
    if len(password) < 12:
        raise ValueError("the administrator's password needs at least 12 characters")
    hashed = hash_password(password)  # before the write lock: argon2 takes a few hundred ms
    with write_transaction(database):
        account = AdminAccount.get_or_none(AdminAccount.id == 1)
        if keep_totp and account is not None:
            secret = None
            cipher = account.totp_cipher
        else:
            secret = pyotp.random_base32()
            cipher = seal(master_key, PURPOSE, CONTEXT, secret)
        AdminAccount.insert(
            id=1, password_hash=hashed, totp_cipher=cipher, updated_at=clock.now()
        ).on_conflict(
            conflict_target=[AdminAccount.id],
            update={
                AdminAccount.password_hash: hashed,
                AdminAccount.totp_cipher: cipher,
                AdminAccount.failures: 0,
                AdminAccount.locked_until: None,
                AdminAccount.updated_at: clock.now(),
            },
        ).execute()
        AdminSession.update(revoked_at=clock.now()).where(AdminSession.revoked_at.is_null()).execute()
    if secret is None:
        return None
    return Enrolment(secret, pyotp.TOTP(secret).provisioning_uri(name="administrator", issuer_name=ISSUER))


def totp_of(master_key: bytes) -> pyotp.TOTP | None:
    account = AdminAccount.get_or_none(AdminAccount.id == 1)
    return None if account is None else pyotp.TOTP(unseal(master_key, PURPOSE, CONTEXT, account.totp_cipher))


def _token_hash(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def sign_in(master_key: bytes, password: str, code: str, remote: str) -> str:
    """A new session's token, or SignInRefused."""
    moment = clock.now()
    account = AdminAccount.get_or_none(AdminAccount.id == 1)
    password_ok = verify_password(account.password_hash if account else None, password)
    refusal = None
    with write_transaction(database):  # a refusal commits its failure count, then is raised
        account = AdminAccount.get_or_none(AdminAccount.id == 1)
        if account is None:
            raise SignInRefused("No administrator is set: run `appliance admin set-password`.")
        if account.locked_until is not None and account.locked_until > moment:
            raise SignInRefused("Sign-in is locked after too many failures; try again later.")
        step = _matching_step(master_key, account, code, moment)
        if not password_ok or step is None:
            failures = account.failures + 1
            AdminAccount.update(
                failures=0 if failures >= MAX_FAILURES else failures,
                locked_until=moment + LOCK if failures >= MAX_FAILURES else account.locked_until,
            ).where(AdminAccount.id == 1).execute()
            refusal = "The password or the code is not correct."
        else:
            AdminAccount.update(failures=0, locked_until=None, last_totp_step=step).where(
                AdminAccount.id == 1
            ).execute()
            token = secrets.token_urlsafe(32)
            AdminSession.create(
                token_hash=_token_hash(token),
                created_at=moment,
                expires_at=moment + SESSION,
                remote=remote[:100],
            )
    if refusal is not None:
        raise SignInRefused(refusal)
    return token


def _matching_step(master_key: bytes, account: AdminAccount, code: str, moment: datetime) -> int | None:
    """The time step of ``code`` (this one or the one either side, for clock drift) if it is later
    than the last code accepted: a code is used once."""
    if not (code.isdigit() and len(code) == 6):
        return None
    totp = pyotp.TOTP(unseal(master_key, PURPOSE, CONTEXT, account.totp_cipher))
    now_step = int(moment.timestamp()) // totp.interval
    for step in (now_step - 1, now_step, now_step + 1):
        if step > account.last_totp_step and secrets.compare_digest(totp.generate_otp(step), code):
            return step
    return None


def session_of(token: str | None) -> AdminSession | None:
    if not token or len(token) > 100:
        return None
    return AdminSession.get_or_none(
        (AdminSession.token_hash == _token_hash(token))
        & AdminSession.revoked_at.is_null()
        & (AdminSession.expires_at > clock.now())
    )


def sign_out(token: str | None) -> None:
    if token:
        with write_transaction(database):
            AdminSession.update(revoked_at=clock.now()).where(
                AdminSession.token_hash == _token_hash(token)
            ).execute()
