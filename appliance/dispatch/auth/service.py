"""Sign-in rules: password, magic link, refresh rotation with reuse detection, logout,
switch-company, signup, invite acceptance and passwords. Every function runs its change in one
transaction and returns plain dicts for the routes.

A password signs in only an account whose e-mail address has been proven (a link sent to it was
used), and only a person who proved the address sets it (docs/identity.md)."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.db import locked, write_transaction
from appliance.common.passwords import hash_password, verify_password
from appliance.common.problems import Conflict, Forbidden, Gone, NotFound, Unauthorized
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.auth import credentials, links, mail_texts
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
    address = normalise_email(email)
    user = User.get_or_none(User.email == address)
    # Only a proven address's password counts: a password set on an address nobody confirmed was
    # set by someone who may not own it (a full verification still runs, so the answer takes as
    # long either way).
    usable = user.password_hash if user is not None and user.email_confirmed else None
    if verify_password(usable, password) and user is not None:
        with write_transaction(database):
            return _sign_in(rt, user)
    # A password a company's dispatcher set for its courier opens that courier membership only.
    found = credentials.match(address, password)
    if found is None:
        raise Unauthorized("The email or password is not correct.")
    credential, membership = found
    with write_transaction(database):
        if not credentials.still_valid(credential.id, membership.user_id, membership.company_id):
            raise Unauthorized("The email or password is not correct.")
        # The landing company stays the account's own choice: a company-set sign-in lands in its
        # company without moving where the account's own sign-in lands.
        tokens = start_session(membership, rt.settings, rt.master_key, credential.id)
        return session_body(membership, tokens, scoped=True)


def _end_family(session_id: str) -> None:
    AuthSession.update(revoked_at=clock.now(), revoked_reason="refresh_token_reuse").where(
        (AuthSession.id == session_id) & AuthSession.revoked_at.is_null()
    ).execute()


def refresh(rt: DispatchRuntime, refresh_token: str) -> dict[str, Any]:
    """Rotate a refresh token once. The row is locked (PostgreSQL; SQLite's write transaction
    serialises) and rotated by a compare-and-set, so of two uses of one token at the same moment
    exactly one rotates; the other is a rotated-out token coming back, which ends the family."""
    reused = False
    with write_transaction(database):
        row = locked(
            RefreshToken.select().where(RefreshToken.token_hash == token_hash(refresh_token))
        ).first()
        if row is None:
            raise Unauthorized("The refresh token is not valid.")
        if row.rotated_at is not None:
            # Committed with the transaction, before the 401 is answered.
            _end_family(row.session_id)
            reused = True
        else:
            session = AuthSession.get_by_id(row.session_id)
            if session.revoked_at is not None or row.expires_at <= clock.now():
                raise Unauthorized("The refresh token has expired or was revoked.")
            membership = Membership.get_or_none(
                (Membership.user == session.user_id) & (Membership.company == session.company_id)
            )
            if membership is None or membership.status != "active":
                raise Unauthorized("The membership of this session is no longer active.")
            if session.credential_id is not None and (
                membership.role != credentials.ROLE
                or not credentials.still_valid(session.credential_id, session.user_id, session.company_id)
            ):
                raise Unauthorized("The refresh token has expired or was revoked.")
            rotated = (
                RefreshToken.update(rotated_at=clock.now())
                .where((RefreshToken.id == row.id) & RefreshToken.rotated_at.is_null())
                .execute()
            )
            if rotated != 1:
                _end_family(row.session_id)
                reused = True
            else:
                tokens = IssuedTokens(
                    access_token=access_token_for(
                        membership, session.id, rt.settings, rt.master_key, session.credential_id
                    ),
                    refresh_token=new_refresh_token(session, rt.settings),
                    expires_in=rt.settings.access_token_seconds,
                    session_id=session.id,
                )
                body = session_body(membership, tokens, scoped=session.credential_id is not None)
    if reused:
        raise Unauthorized("The refresh token was already used; the session has been ended.")
    return body


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
        # A session opened with a company-set password acts in its company only: for it, every
        # other membership of the account is as if it did not exist.
        if membership is None or (caller.credential_id is not None and company_id != caller.company_id):
            raise Forbidden("You are not an active member of that company.")
        if refresh_token:
            row = RefreshToken.get_or_none(RefreshToken.token_hash == token_hash(refresh_token))
            if row is not None:
                AuthSession.update(revoked_at=clock.now(), revoked_reason="switched").where(
                    (AuthSession.id == row.session_id) & (AuthSession.user == caller.user.id)
                ).execute()
        tokens = start_session(membership, rt.settings, rt.master_key, caller.credential_id)
        if caller.credential_id is None:
            User.update(last_company=company_id).where(User.id == caller.user.id).execute()
        return session_body(membership, tokens, scoped=caller.credential_id is not None)


def end_user_sessions(user_id: int, reason: str, *, keep: str | None = None) -> None:
    """Revoke every session of the user in every company (but ``keep``), inside the caller's
    transaction: their refresh tokens and access tokens stop at once."""
    query = AuthSession.update(revoked_at=clock.now(), revoked_reason=reason).where(
        (AuthSession.user == user_id) & AuthSession.revoked_at.is_null()
    )
    if keep is not None:
        query = query.where(AuthSession.id != keep)
    query.execute()


def _prove_address(user: User, keep_session: str | None = None) -> None:
    """The holder of the address has just used a link sent to it. The first time, whatever was
    set up on the account before by someone else ends: a password nobody proven chose, and every
    session opened without the proof (an invite accepted by its inviter, a member sign-in link).
    Every time, the passwords companies set for the address stop (docs/identity.md)."""
    credentials.address_proven(user)
    if user.email_confirmed:
        return
    user.email_confirmed = True
    user.password_hash = None
    end_user_sessions(user.id, "email_confirmed", keep=keep_session)


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
        mailer.enqueue(user.email, subject, text)
    # Queued with the company; the mail worker sends it (common/mail.py).
    return {"company": {"id": str(new_company.id), "name": new_company.name}, "emailSent": True}


def request_magic_link(rt: DispatchRuntime, email: str) -> None:
    """Email a sign-in link when the account exists; the caller always answers the same, after
    the same work: one row queued by address, composed or dropped by the mail worker
    (auth/requested_mail.py)."""
    with write_transaction(database):
        rt.mailer.enqueue_composed("magic_link", normalise_email(email))


def verify_magic_link(rt: DispatchRuntime, token: str) -> dict[str, Any]:
    with write_transaction(database):
        row = links.find(token, ("magic",))
        if row is None or links.state(row) != "usable" or not links.consume(row):
            raise Unauthorized("The sign-in link is invalid, used or expired.")
        user = User.get_by_id(row.user_id)
        _prove_address(user)
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
    if row.role != "courier":
        return membership
    profile = Courier.get_or_none(Courier.id == row.courier_id) if row.courier_id else None
    if profile is not None and profile.user_id is None:
        # The profile a dispatcher made (POST /couriers) gets the account that accepted its invite.
        Courier.update(user=user).where(Courier.id == profile.id).execute()
    elif Courier.get_or_none((Courier.company == row.company_id) & (Courier.user == user.id)) is None:
        Courier.create(
            company=row.company_id,
            user=user,
            display_name=user.display_name,
            phone=row.phone or user.phone,
            vehicle_label=row.vehicle,
            created_at=moment,
        )
    return membership


def _use_member_sign_in_link(rt: DispatchRuntime, row: LinkToken) -> dict[str, Any]:
    """A member sign-in link (handed over by a dispatcher) signs in once, and only a member it
    may still be issued for: the conditions of issue are checked again at use, since the account
    may have proven its address, set a password or joined another company meanwhile."""
    membership = Membership.get_or_none(
        (Membership.user == row.user_id) & (Membership.company == row.company_id)
    )
    user = User.get_by_id(row.user_id)
    other_company = (
        Membership.select()
        .where((Membership.user == row.user_id) & (Membership.company != row.company_id))
        .exists()
    )
    if (
        membership is None
        or membership.status != "active"
        or user.password_hash
        or user.email_confirmed
        or other_company
    ):
        raise NotFound("The sign-in link is no longer valid.")
    if not links.consume(row):
        raise NotFound("The sign-in link is invalid, used or expired.")
    tokens = start_session(membership, rt.settings, rt.master_key)
    User.update(last_company=row.company_id).where(User.id == row.user_id).execute()
    return session_body(membership, tokens)


COMPANY_SET_SESSION_CANNOT_ACCEPT = (
    "This session was opened with a password your company set: sign in with your own account "
    "first, then accept."
)


def accept_invite(
    rt: DispatchRuntime, token: str, caller: Caller | None, password: str | None, display_name: str | None
) -> dict[str, Any]:
    with write_transaction(database):
        row = links.find(token, ("invite", "sign_in"))
        if row is None or links.state(row) != "usable":
            raise NotFound("The invite is invalid, used or expired.")
        if row.kind == "sign_in":
            return _use_member_sign_in_link(rt, row)
        if row.courier_id is not None:
            profile = Courier.get_or_none(Courier.id == row.courier_id)
            if profile is None or profile.user_id is not None or not profile.active:
                raise NotFound("The invite is invalid, used or expired.")
        if caller is not None and caller.credential_id is not None:
            # A session opened with a password a company set acts in that company only: accepting
            # another company's invite from it would hand an unscoped membership (any role) to
            # whoever holds that password. The address's holder signs in as themselves first.
            raise Conflict(COMPANY_SET_SESSION_CANNOT_ACCEPT, code="sign_in_required")
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
            # A courier's invite (POST /couriers) is only ever mailed: whoever holds it proved the
            # mailbox, so the address is confirmed and the password chosen here is theirs. Any
            # other invite link is shown to the inviter too, so accepting it proves nothing: the
            # account gets no password, and a link to set one goes to the address.
            proven = email is not None and row.courier_id is not None
            user = User.create(
                email=email,
                phone=row.phone,
                display_name=display_name or row.name,
                password_hash=hash_password(password) if password and proven else None,
                email_confirmed=proven,
                created_at=clock.now(),
            )
            if password and email and not proven:
                _mail_password_link(rt, user, "password_set")
        if not links.consume(row):
            raise NotFound("The invite is invalid, used or expired.")
        membership = _join(row, user)
        tokens = start_session(membership, rt.settings, rt.master_key)
        User.update(last_company=row.company_id).where(User.id == user.id).execute()
        body = session_body(membership, tokens)
    return body


# -- passwords -------------------------------------------------------------------------------------


def password_link_url(rt: DispatchRuntime, token: str) -> str:
    return f"{rt.settings.dispatch_public_url}/login?password={token}"


def _mail_password_link(rt: DispatchRuntime, user: User, kind: str) -> int:
    """Queue a link that sets the account's password (inside the caller's transaction); the
    message id to deliver once it commits."""
    token, _ = links.issue("password", links.PASSWORD_LINK_LIFETIME, user=user, email=user.email)
    subject, text = mail_texts.mail(kind, user.language, link=password_link_url(rt, token))
    return rt.mailer.enqueue(user.email, subject, text)


def request_password_link(rt: DispatchRuntime, email: str) -> None:
    """Forgot password: email a link that sets a new one when the account exists (the caller
    always answers the same, after the same work: one row queued by address, composed or dropped
    by the mail worker, auth/requested_mail.py)."""
    with write_transaction(database):
        rt.mailer.enqueue_composed("password_reset", normalise_email(email))


def _use_password_link(token: str, user_id: int | None = None) -> LinkToken | None:
    row = links.find(token, ("password",))
    if row is None or links.state(row) != "usable" or (user_id is not None and row.user_id != user_id):
        return None
    return row if links.consume(row) else None


def _set_password(user: User, password: str, *, proven: bool, keep_session: str | None) -> None:
    """Store a new password (inside the caller's transaction); every other session of the account
    ends, and the account's other unused password links stop working."""
    if proven:
        _prove_address(user, keep_session)
    user.password_hash = hash_password(password)
    user.save()
    end_user_sessions(user.id, "password_changed", keep=keep_session)
    LinkToken.update(revoked_at=clock.now()).where(
        (LinkToken.kind == "password")
        & (LinkToken.user == user.id)
        & LinkToken.used_at.is_null()
        & LinkToken.revoked_at.is_null()
    ).execute()


def reset_password(rt: DispatchRuntime, token: str, password: str) -> dict[str, Any]:
    """Set a password through an emailed link (which proves the address) and sign in."""
    with write_transaction(database):
        row = _use_password_link(token)
        if row is None:
            raise Unauthorized("The password link is invalid, used or expired.")
        user = User.get_by_id(row.user_id)
        _set_password(user, password, proven=True, keep_session=None)
        return _sign_in(rt, user)


def change_password(caller: Caller, password: str, current: str | None, token: str | None) -> None:
    """PATCH /me/password: the current password of a proven account, or a fresh password link of
    the caller's own account. The caller's session stays; every other one ends."""
    with write_transaction(database):
        user = User.get_by_id(caller.user.id)
        if token is not None:
            if _use_password_link(token, user.id) is None:
                raise Forbidden("The password link is invalid, used or expired.", code="invalid_link")
            _set_password(user, password, proven=True, keep_session=caller.session_id)
            return
        if caller.credential_id is not None:
            _replace_company_set_password(caller, user, password, current or "")
            return
        usable = user.password_hash if user.email_confirmed else None
        if not verify_password(usable, current or ""):
            raise Forbidden("The current password is not correct.", code="wrong_password")
        _set_password(user, password, proven=False, keep_session=caller.session_id)


def _replace_company_set_password(caller: Caller, user: User, password: str, current: str) -> None:
    """A courier signed in with the password their company set puts their own in its place. It
    proves nothing about the address, so it stays a company-set password: scoped the same way
    until the address is proven; the calling session stays, the others opened with it end."""
    credential = credentials.active(user.id, caller.company_id)
    if (
        credential is None
        or credential.id != caller.credential_id
        or not verify_password(credential.password_hash, current)
    ):
        raise Forbidden("The current password is not correct.", code="wrong_password")
    credentials.grant(
        user,
        caller.company_id,
        credential.email,
        hash_password(password),
        user.id,
        keep_session=caller.session_id,
    )
