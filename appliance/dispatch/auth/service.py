"""Sign-in rules: password, magic link, refresh rotation with reuse detection, logout,
switch-company, signup and invite acceptance. Every function runs its change in one transaction
and returns plain dicts for the routes."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.passwords import hash_password, verify_password
from appliance.common.problems import Conflict, Forbidden, Gone, NotFound, Unauthorized
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.auth import links, mail_texts
from appliance.dispatch.auth.guards import Caller
from appliance.dispatch.auth.serializers import session_body
from appliance.dispatch.auth.sessions import (
    IssuedTokens,
    access_token_for,
    new_refresh_token,
    start_session,
    token_hash,
)
from appliance.dispatch.company.serializers import logo_url
from appliance.dispatch.company.service import create_company
from appliance.dispatch.db import database
from appliance.dispatch.models import (
    AuthSession,
    Company,
    Courier,
    LinkToken,
    Membership,
    RefreshToken,
    User,
)
from appliance.dispatch.runtime import DispatchRuntime

# -- the user's language and the landing company ---------------------------------------------------


def set_language(user: User, language: str) -> User:
    with write_transaction(database):
        User.update(language=language).where(User.id == user.id).execute()
    user.language = language
    return user


def _landing_membership(user: User) -> Membership | None:
    """The active membership of the company used last, else the oldest active one."""
    active = Membership.select().where((Membership.user == user.id) & (Membership.status == "active"))
    if user.last_company_id is not None:
        last = active.where(Membership.company == user.last_company_id).first()
        if last is not None:
            return last
    return active.order_by(Membership.joined_at, Membership.id).first()


def _sign_in(rt: DispatchRuntime, user: User) -> dict[str, Any]:
    membership = _landing_membership(user)
    if membership is None:
        raise Forbidden("This account belongs to no active company.")
    tokens = start_session(membership, rt.settings, rt.master_key)
    User.update(last_company=membership.company_id).where(User.id == user.id).execute()
    return session_body(membership, tokens)


# -- password, refresh, logout, switch --------------------------------------------------------------


def login(rt: DispatchRuntime, email: str, password: str) -> dict[str, Any]:
    user = User.get_or_none(User.email == normalise_email(email))
    if not verify_password(user.password_hash if user else None, password) or user is None:
        raise Unauthorized("The email or password is not correct.")
    with write_transaction(database):
        return _sign_in(rt, user)


def _end_family_on_reuse(refresh_token: str) -> bool:
    """A rotated-out token came back: someone holds a copy, so the whole family ends (committed
    on its own, before the 401 is answered)."""
    with write_transaction(database):
        row = RefreshToken.get_or_none(RefreshToken.token_hash == token_hash(refresh_token))
        if row is None or row.rotated_at is None:
            return False
        AuthSession.update(revoked_at=clock.now(), revoked_reason="refresh_token_reuse").where(
            (AuthSession.id == row.session_id) & AuthSession.revoked_at.is_null()
        ).execute()
        return True


def refresh(rt: DispatchRuntime, refresh_token: str) -> dict[str, Any]:
    if _end_family_on_reuse(refresh_token):
        raise Unauthorized("The refresh token was already used; the session has been ended.")
    with write_transaction(database):
        row = RefreshToken.get_or_none(RefreshToken.token_hash == token_hash(refresh_token))
        if row is None or row.rotated_at is not None:
            raise Unauthorized("The refresh token is not valid.")
        session = AuthSession.get_by_id(row.session_id)
        if session.revoked_at is not None or row.expires_at <= clock.now():
            raise Unauthorized("The refresh token has expired or was revoked.")
        membership = Membership.get_or_none(
            (Membership.user == session.user_id) & (Membership.company == session.company_id)
        )
        if membership is None or membership.status != "active":
            raise Unauthorized("The membership of this session is no longer active.")
        row.rotated_at = clock.now()
        row.save()
        tokens = IssuedTokens(
            access_token=access_token_for(membership, session.id, rt.settings, rt.master_key),
            refresh_token=new_refresh_token(session, rt.settings),
            expires_in=rt.settings.access_token_seconds,
            session_id=session.id,
        )
        return session_body(membership, tokens)


def logout(caller: Caller) -> None:
    with write_transaction(database):
        AuthSession.update(revoked_at=clock.now(), revoked_reason="logout").where(
            (AuthSession.id == caller.session_id) & AuthSession.revoked_at.is_null()
        ).execute()


def switch_company(
    rt: DispatchRuntime, caller: Caller, company_id: int, refresh_token: str | None
) -> dict[str, Any]:
    with write_transaction(database):
        membership = Membership.get_or_none(
            (Membership.user == caller.user.id)
            & (Membership.company == company_id)
            & (Membership.status == "active")
        )
        if membership is None:
            raise Forbidden("You are not an active member of that company.")
        if refresh_token:
            row = RefreshToken.get_or_none(RefreshToken.token_hash == token_hash(refresh_token))
            if row is not None:
                AuthSession.update(revoked_at=clock.now(), revoked_reason="switched").where(
                    (AuthSession.id == row.session_id) & (AuthSession.user == caller.user.id)
                ).execute()
        tokens = start_session(membership, rt.settings, rt.master_key)
        User.update(last_company=company_id).where(User.id == caller.user.id).execute()
        return session_body(membership, tokens)


# -- signup and magic links ------------------------------------------------------------------------


def login_link_url(rt: DispatchRuntime, token: str) -> str:
    return f"{rt.settings.dispatch_public_url}/login?token={token}"


def invite_link_url(rt: DispatchRuntime, token: str) -> str:
    return f"{rt.settings.dispatch_public_url}/invite/{token}"


def signup(
    rt: DispatchRuntime, company: dict[str, Any], owner: dict[str, Any], depot: dict[str, Any]
) -> dict[str, Any]:
    mailer = rt.mailer
    with write_transaction(database):
        created = create_company(
            name=company["name"],
            city=company.get("city") or "Yerevan",
            phone=company.get("phone"),
            owner_email=owner["email"],
            owner_name=owner["name"],
            depot={
                "name": depot["name"],
                "address": depot["address"],
                "lat": depot["point"]["lat"],
                "lon": depot["point"]["lon"],
            },
            owner_confirmed=False,
        )
        user, new_company = created.owner, created.company
        token, _ = links.issue("magic", links.MAGIC_LIFETIME, user=user, company=new_company)
        subject, text = mail_texts.mail(
            "welcome",
            user.language,
            name=owner["name"],
            company=new_company.name,
            link=login_link_url(rt, token),
        )
        mail_id = mailer.enqueue(user.email, subject, text)
    sent = mailer.deliver(mail_id)
    return {"company": {"id": str(new_company.id), "name": new_company.name}, "emailSent": sent}


def request_magic_link(rt: DispatchRuntime, email: str) -> None:
    """Email a sign-in link when the account exists; the caller always answers the same."""
    mailer = rt.mailer
    user = User.get_or_none(User.email == normalise_email(email))
    if user is None:
        return
    with write_transaction(database):
        token, _ = links.issue("magic", links.MAGIC_LIFETIME, user=user)
        subject, text = mail_texts.mail("magic_link", user.language, link=login_link_url(rt, token))
        mail_id = mailer.enqueue(user.email, subject, text)
    mailer.deliver(mail_id)


def verify_magic_link(rt: DispatchRuntime, token: str) -> dict[str, Any]:
    with write_transaction(database):
        row = links.find(token, ("magic",))
        if row is None or links.state(row) != "usable" or not links.consume(row):
            raise Unauthorized("The sign-in link is invalid, used or expired.")
        user = User.get_by_id(row.user_id)
        user.email_confirmed = True
        if row.company_id is not None:
            user.last_company = row.company_id
            Membership.update(status="active").where(
                (Membership.user == user.id)
                & (Membership.company == row.company_id)
                & (Membership.status == "pending")
            ).execute()
        user.save()
        return _sign_in(rt, user)


# -- invites and member login links ----------------------------------------------------------------


def invite_preview(rt: DispatchRuntime, token: str) -> dict[str, Any]:
    row = links.find(token, ("invite", "sign_in"))
    if row is None or links.state(row) == "revoked":
        raise NotFound("No such invite.")
    state = links.state(row)
    if state in {"used", "expired"}:
        raise Gone(
            f"This link was already {state}." if state == "used" else "This link has expired.", code=state
        )
    company = Company.get_by_id(row.company_id)
    inviter = User.get_or_none(User.id == row.invited_by_id) if row.invited_by_id else None
    return {
        "kind": row.kind,
        "company": {
            "name": company.name,
            "brandColor": company.brand_color,
            "logoUrl": logo_url(rt, company),
        },
        "role": row.role,
        "name": row.name,
        "invitedBy": {"userId": str(inviter.id), "name": inviter.display_name} if inviter else None,
        "expiresAt": clock.iso(row.expires_at),
    }


def _join(row: LinkToken, user: User) -> Membership:
    moment = clock.now()
    membership = Membership.create(
        user=user, company=row.company_id, role=row.role, vehicle=row.vehicle, joined_at=moment
    )
    if (
        row.role == "courier"
        and Courier.get_or_none((Courier.company == row.company_id) & (Courier.user == user.id)) is None
    ):
        Courier.create(
            company=row.company_id,
            user=user,
            display_name=user.display_name,
            phone=row.phone or user.phone,
            vehicle_label=row.vehicle,
            created_at=moment,
        )
    return membership


def accept_invite(
    rt: DispatchRuntime, token: str, caller: Caller | None, password: str | None, display_name: str | None
) -> dict[str, Any]:
    with write_transaction(database):
        row = links.find(token, ("invite", "sign_in"))
        if row is None or links.state(row) != "usable":
            raise NotFound("The invite is invalid, used or expired.")
        if row.kind == "sign_in":
            membership = Membership.get_or_none(
                (Membership.user == row.user_id) & (Membership.company == row.company_id)
            )
            if membership is None or membership.status != "active":
                raise NotFound("The sign-in link is no longer valid.")
            links.consume(row)
            tokens = start_session(membership, rt.settings, rt.master_key)
            User.update(last_company=row.company_id).where(User.id == row.user_id).execute()
            return session_body(membership, tokens)
        if caller is not None:
            user = caller.user
            if Membership.get_or_none((Membership.user == user.id) & (Membership.company == row.company_id)):
                raise Conflict("You are already a member of this company.", code="already_member")
        else:
            email = normalise_email(row.email) if row.email else None
            if email and User.get_or_none(User.email == email) is not None:
                raise Conflict(
                    "An account with this email exists: sign in first, then accept.", code="sign_in_required"
                )
            user = User.create(
                email=email,
                phone=row.phone,
                display_name=display_name or row.name,
                password_hash=hash_password(password) if password else None,
                created_at=clock.now(),
            )
        if not links.consume(row):
            raise NotFound("The invite is invalid, used or expired.")
        membership = _join(row, user)
        tokens = start_session(membership, rt.settings, rt.master_key)
        User.update(last_company=row.company_id).where(User.id == user.id).execute()
        return session_body(membership, tokens)
