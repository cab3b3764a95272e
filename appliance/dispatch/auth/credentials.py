"""Company-set passwords: the password a dispatcher gives a courier (POST /couriers, PATCH
/couriers/{id}), as the specification's courier create asks, without reopening the takeover that
a password chosen by someone other than the address's owner would be (docs/identity.md,
*Company-set passwords*).

Such a password is a credential of one membership, not of the account:
- it signs in only to the courier membership of the company whose dispatcher set it, and the
  session it opens acts only there (no switch, no other membership shown, never another role);
- it never proves the address, and any proof of the address (a sign-up, magic, password or
  mailed invite link used) drops every one of them and ends the sessions opened with them;
- an address that already has an account gets a separate account made for this company alone
  (no e-mail of its own; the address lives on the credential), so the existing account's sign-in,
  profile and memberships are untouched and the caller learns nothing of it. When the address is
  later proven, that account's memberships move to the proven one.

Every function runs inside the caller's write transaction."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.passwords import verify_password
from appliance.dispatch.models import AuthSession, CompanyCredential, Courier, Membership, User

# A courier credential opens a courier membership only.
ROLE = "courier"


def active(user_id: int, company_id: int) -> CompanyCredential | None:
    return CompanyCredential.get_or_none(
        (CompanyCredential.user == user_id)
        & (CompanyCredential.company == company_id)
        & CompanyCredential.revoked_at.is_null()
    )


def address_of(user: User, company_id: int) -> str | None:
    """The address an account is known by in a company: its own, or, for an account made for the
    company alone, the one its dispatcher typed."""
    if user.email:
        return user.email
    row = (
        CompanyCredential.select(CompanyCredential.email)
        .where((CompanyCredential.user == user.id) & (CompanyCredential.company == company_id))
        .order_by(CompanyCredential.id.desc())
        .first()
    )
    return row.email if row is not None else None


def end_sessions(credential_ids: list[int], reason: str, *, keep: str | None = None) -> None:
    if not credential_ids:
        return
    query = AuthSession.update(revoked_at=clock.now(), revoked_reason=reason).where(
        AuthSession.credential.in_(credential_ids) & AuthSession.revoked_at.is_null()
    )
    if keep is not None:
        query = query.where(AuthSession.id != keep)
    query.execute()


def _revoke(rows: list[CompanyCredential], reason: str, *, keep_session: str | None = None) -> None:
    ids = [row.id for row in rows]
    if not ids:
        return
    CompanyCredential.update(revoked_at=clock.now(), revoked_reason=reason).where(
        CompanyCredential.id.in_(ids) & CompanyCredential.revoked_at.is_null()
    ).execute()
    end_sessions(ids, reason, keep=keep_session)


def grant(
    user: User,
    company_id: int,
    email: str,
    password_hash: str,
    set_by: int | None,
    *,
    keep_session: str | None = None,
) -> CompanyCredential:
    """Set the membership's company-set password (``password_hash``: hashed by the caller before
    its transaction, so argon2's tenth of a second is not spent holding the write lock); one set
    before it stops, and so do the sessions opened with it (but ``keep_session``, the caller's own
    when the courier replaces it)."""
    previous = list(
        CompanyCredential.select().where(
            (CompanyCredential.user == user.id)
            & (CompanyCredential.company == company_id)
            & CompanyCredential.revoked_at.is_null()
        )
    )
    row = CompanyCredential.create(
        user=user.id,
        company=company_id,
        email=email,
        password_hash=password_hash,
        set_by=set_by,
        created_at=clock.now(),
    )
    if previous:
        _revoke(previous, "replaced", keep_session=keep_session)
        if keep_session is not None:
            AuthSession.update(credential=row.id).where(AuthSession.id == keep_session).execute()
    return row


def match(email: str, password: str) -> tuple[CompanyCredential, Membership] | None:
    """The company-set password of ``email`` that ``password`` is, with the active courier
    membership it opens. At least one full verification runs, so an address without any costs the
    same as one with one."""
    rows = list(
        CompanyCredential.select(CompanyCredential, Membership)
        .join(
            Membership,
            on=(
                (Membership.user == CompanyCredential.user)
                & (Membership.company == CompanyCredential.company)
            ),
            attr="membership",
        )
        .where(
            (CompanyCredential.email == email)
            & CompanyCredential.revoked_at.is_null()
            & (Membership.role == ROLE)
            & (Membership.status == "active")
        )
        .order_by(CompanyCredential.id)
    )
    if not rows:
        verify_password(None, password)
        return None
    found = None
    for row in rows:
        # Every row is verified (no early exit), so the time says nothing of which one matched.
        if verify_password(row.password_hash, password) and found is None:
            found = (row, row.membership)
    return found


def may_set(user: User, company_id: int) -> bool:
    """Whether the company may (re)set the courier's password: only while the address is not
    proven (an account made for the company alone counts as proven once a proof handed its
    address's passwords over)."""
    if user.email_confirmed:
        return False
    if user.email:
        return True
    return not (
        CompanyCredential.select()
        .where(
            (CompanyCredential.user == user.id)
            & (CompanyCredential.company == company_id)
            & (CompanyCredential.revoked_reason == "address_proven")
        )
        .exists()
    )


def still_valid(credential_id: int, user_id: int, company_id: int) -> bool:
    """Whether a session's credential still opens its membership (a refresh checks it)."""
    return (
        CompanyCredential.select()
        .where(
            (CompanyCredential.id == credential_id)
            & (CompanyCredential.user == user_id)
            & (CompanyCredential.company == company_id)
            & CompanyCredential.revoked_at.is_null()
        )
        .exists()
    )


def address_proven(user: User) -> None:
    """The holder of ``user``'s address has just used a link sent to it: every company-set
    password of the address stops, with the sessions opened with them, and the accounts made for
    a company alone under this address hand their memberships to this, the proven account."""
    if not user.email:
        return
    rows = list(CompanyCredential.select().where(CompanyCredential.email == user.email))
    _revoke([row for row in rows if row.revoked_at is None], "address_proven")
    for local_id in sorted({row.user_id for row in rows if row.user_id != user.id}):
        _hand_over(local_id, user, [row.company_id for row in rows if row.user_id == local_id])


def _hand_over(local_id: int, user: User, companies: list[int]) -> None:
    """Move a company-only account's memberships and courier profiles (in ``companies``) to the
    proven account, where it is not a member already."""
    local = User.get_or_none((User.id == local_id) & User.email.is_null())
    if local is None:
        return
    for company_id in sorted(set(companies)):
        if (
            Membership.select()
            .where((Membership.user == user.id) & (Membership.company == company_id))
            .exists()
        ):
            continue  # already a member there on its own account: the company-only one stays apart
        Membership.update(user=user.id, session_epoch=Membership.session_epoch + 1).where(
            (Membership.user == local.id) & (Membership.company == company_id)
        ).execute()
        Courier.update(user=user.id).where(
            (Courier.user == local.id) & (Courier.company == company_id)
        ).execute()
    AuthSession.update(revoked_at=clock.now(), revoked_reason="address_proven").where(
        (AuthSession.user == local.id) & AuthSession.revoked_at.is_null()
    ).execute()


def courier_account(email: str, fields: dict[str, Any]) -> User:
    """The account a dispatcher's new courier signs in with: the address's own account, made now
    (unproven), when it has none; else one made for this company alone, so that the address's
    existing account is neither changed nor revealed."""
    taken = User.select().where(User.email == email).exists()
    return User.create(
        email=None if taken else email,
        phone=fields.get("phone"),
        display_name=fields["displayName"],
        email_confirmed=False,
        created_at=clock.now(),
    )
