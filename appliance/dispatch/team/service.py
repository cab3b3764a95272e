"""Team rules: who may invite, change or hand a sign-in link to whom; a company always keeps an
active owner; a role change or disable ends the member's sessions at once.

An invite's link, accepted without a session, answers whether its address has an account (the
specification's 409 sign_in_required): what an inviter can learn that way is bounded (invites
naming an address, per company per rolling hour) and every invite is on record for the company's
owners to read (issue 41)."""

from __future__ import annotations

import math
from datetime import timedelta
from typing import Any

from appliance.common import clock
from appliance.common.db import locked, write_transaction
from appliance.common.problems import Conflict, Forbidden, NotFound, TooManyRequests
from appliance.dispatch import audit
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.auth import links, mail_texts
from appliance.dispatch.auth.guards import Caller
from appliance.dispatch.auth.service import invite_link_url
from appliance.dispatch.couriers.service import end_sessions, set_courier_active
from appliance.dispatch.db import database
from appliance.dispatch.models import Company, Courier, InviteRecord, LinkToken, Membership, User
from appliance.dispatch.runtime import DispatchRuntime
from appliance.dispatch.team.serializers import invite_body, invite_record_body, member_body

# Invites naming an address a company may make in any rolling hour: enough to bring a team in,
# too few to sweep a list of addresses for accounts.
ADDRESSED_INVITES_PER_HOUR = 20
INVITE_WINDOW = timedelta(hours=1)
# How far back GET /company/invites/history reads.
HISTORY_LIMIT = 500


def _pending_invites(company_id: int):
    return LinkToken.select().where(
        (LinkToken.company == company_id)
        & (LinkToken.kind == "invite")
        & LinkToken.used_at.is_null()
        & LinkToken.revoked_at.is_null()
        & (LinkToken.expires_at > clock.now())
    )


def team(company_id: int, *, contacts_of_self_only: int | None = None) -> dict[str, Any]:
    """The company's members and pending invites. With ``contacts_of_self_only`` (the user id of
    a courier asking), every ``email`` and ``phone`` but that user's own is null (issue 41 item 11):
    a courier needs no colleague's or invitee's contact, and the office's phone comes with
    GET /courier/me (``dispatchPhone``), which is what the courier app calls."""
    memberships = (
        Membership.select(Membership, User)
        .join(User)
        .where(Membership.company == company_id)
        .order_by(Membership.joined_at, Membership.id)
    )
    members = [member_body(m, m.user) for m in memberships]
    invites = [invite_body(row) for row in _pending_invites(company_id).order_by(LinkToken.id)]
    if contacts_of_self_only is not None:
        own = str(contacts_of_self_only)
        members = [m if m["userId"] == own else _without_contacts(m) for m in members]
        invites = [_without_contacts(i) for i in invites]
    return {"members": members, "invites": invites}


def _without_contacts(body: dict[str, Any]) -> dict[str, Any]:
    return {**body, "email": None, "phone": None}


def _membership(company_id: int, user_id: int) -> Membership:
    membership = Membership.get_or_none((Membership.company == company_id) & (Membership.user == user_id))
    if membership is None:
        raise NotFound("No such member.")
    return membership


def invite(rt: DispatchRuntime, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
    if caller.role != "owner" and fields["role"] != "courier":
        raise Forbidden("Only an owner can invite dispatchers and owners.")
    mailer = rt.mailer
    email = normalise_email(fields["email"]) if fields.get("email") else None
    with write_transaction(database):
        if email:
            _hold_addressed_invites(caller.company_id)
        token, row = links.issue(
            "invite",
            links.INVITE_LIFETIME,
            company=caller.company_id,
            role=fields["role"],
            name=fields["name"],
            email=email,
            phone=fields.get("phone"),
            vehicle=fields.get("vehicle"),
            invited_by=caller.user.id,
        )
        link = invite_link_url(rt, token)
        mail_id = None
        if email:
            invitee = User.get_or_none(User.email == email)
            subject, text = mail_texts.mail(
                "invite",
                invitee.language if invitee else caller.user.language,
                name=fields["name"],
                inviter=caller.user.display_name,
                company=caller.company.name,
                role=fields["role"],
                link=link,
            )
            mail_id = mailer.enqueue(email, subject, text)  # sent by the mail worker (common/mail.py)
        _record_invite(caller, row)
        audit.record(
            "member.invited",
            f"invite:{row.id}",
            company_id=caller.company_id,
            after={"role": row.role, "name": row.name, "email": row.email, "phone": row.phone},
            caller=caller,
        )
    return {"invite": invite_body(row), "link": link, "emailed": mail_id is not None}


def _hold_addressed_invites(company_id: int) -> None:
    """429 (with Retry-After) once the company made ADDRESSED_INVITES_PER_HOUR invites naming an
    address within the last hour. Inside the invite's transaction, the company's row locked
    (PostgreSQL; SQLite's write transaction serialises), so two at once cannot both pass."""
    locked(Company.select().where(Company.id == company_id)).first()
    since = clock.now() - INVITE_WINDOW
    recent = [
        row.created_at
        for row in InviteRecord.select(InviteRecord.created_at)
        .where(
            (InviteRecord.company == company_id)
            & InviteRecord.email.is_null(False)
            & (InviteRecord.created_at > since)
        )
        .order_by(InviteRecord.created_at.desc())
        .limit(ADDRESSED_INVITES_PER_HOUR)
    ]
    if len(recent) < ADDRESSED_INVITES_PER_HOUR:
        return
    wait = (recent[-1] + INVITE_WINDOW - clock.now()).total_seconds()
    raise TooManyRequests(
        f"This company has invited {ADDRESSED_INVITES_PER_HOUR} addresses within the last hour; "
        "invite more later, or invite by link without an address.",
        code="invite_limit",
        headers={"Retry-After": str(max(1, math.ceil(wait)))},
    )


def _record_invite(caller: Caller, row: LinkToken) -> None:
    InviteRecord.create(
        company=caller.company_id,
        link_id=row.id,
        invited_by_id=caller.user.id,
        inviter_name=caller.user.display_name,
        role=row.role,
        name=row.name,
        email=row.email,
        phone=row.phone,
        created_at=row.created_at,
    )


def invite_history(company_id: int) -> dict[str, Any]:
    """Every invite the company made, newest first, with what became of its link."""
    records = list(
        InviteRecord.select()
        .where(InviteRecord.company == company_id)
        .order_by(InviteRecord.created_at.desc(), InviteRecord.id.desc())
        .limit(HISTORY_LIMIT)
    )
    ids = [r.link_id for r in records if r.link_id is not None]
    links_by_id = {row.id: row for row in LinkToken.select().where(LinkToken.id.in_(ids))} if ids else {}
    return {"invites": [invite_record_body(r, links_by_id.get(r.link_id)) for r in records]}


def revoke_invite(caller: Caller, invite_id: int) -> None:
    with write_transaction(database):
        row = _pending_invites(caller.company_id).where(LinkToken.id == invite_id).first()
        if row is None or (caller.role != "owner" and row.role != "courier"):
            raise NotFound("No such invite.")
        LinkToken.update(revoked_at=clock.now()).where(LinkToken.id == row.id).execute()
        audit.record("invite.revoked", f"invite:{row.id}", company_id=caller.company_id, caller=caller)


def change_member(caller: Caller, user_id: int, role: str | None, status: str | None) -> dict[str, Any]:
    with write_transaction(database):
        membership = locked(
            Membership.select().where(
                (Membership.company == caller.company_id) & (Membership.user == user_id)
            )
        ).first()
        if membership is None:
            raise NotFound("No such member.")
        # A dispatcher may only switch a courier on or off.
        if caller.role != "owner" and (
            membership.role != "courier" or (role is not None and role != "courier")
        ):
            raise Forbidden("A dispatcher can only enable or disable couriers.")
        new_role = role if role is not None else membership.role
        new_status = status if status is not None else membership.status
        changed = new_role != membership.role or new_status != membership.status
        if (
            membership.role == "owner"
            and membership.status == "active"
            and (new_role != "owner" or new_status != "active")
        ):
            others = (
                Membership.select()
                .where(
                    (Membership.company == caller.company_id)
                    & (Membership.role == "owner")
                    & (Membership.status == "active")
                    & (Membership.id != membership.id)
                )
                .count()
            )
            if others == 0:
                raise Conflict("The company must keep one active owner.")
        if changed:
            audit.record(
                "member.changed",
                f"user:{user_id}",
                company_id=caller.company_id,
                before={"role": membership.role, "status": membership.status},
                after={"role": new_role, "status": new_status},
                caller=caller,
            )
            membership.role = new_role
            membership.status = new_status
            membership.session_epoch += 1
            membership.save()
            end_sessions(membership.company_id, membership.user_id)
            if (
                new_role == "courier"
                and Courier.get_or_none((Courier.company == caller.company_id) & (Courier.user == user_id))
                is None
            ):
                user = User.get_by_id(user_id)
                Courier.create(
                    company=caller.company_id,
                    user=user_id,
                    display_name=user.display_name,
                    phone=user.phone,
                    created_at=clock.now(),
                )
            courier = Courier.get_or_none((Courier.company == caller.company_id) & (Courier.user == user_id))
            if courier is not None:  # a courier's membership and profile are one switch
                active = new_role == "courier" and new_status == "active"
                if bool(courier.active) != active:
                    set_courier_active(courier, active, caller.user.id)
        return member_body(membership, User.get_by_id(user_id))


def login_link(rt: DispatchRuntime, caller: Caller, user_id: int) -> dict[str, Any]:
    with write_transaction(database):
        membership = _membership(caller.company_id, user_id)
        if membership.role == "owner":
            raise Forbidden("Sign-in links are never issued for owners.")
        if membership.role == "dispatcher" and caller.role != "owner":
            raise Forbidden("Only an owner can issue a sign-in link for a dispatcher.")
        user = User.get_by_id(user_id)
        if user.password_hash or user.email_confirmed:
            raise Conflict("This member can sign in already.", code="has_sign_in")
        if (
            Membership.select()
            .where((Membership.user == user_id) & (Membership.company != caller.company_id))
            .exists()
        ):
            raise Conflict("This member also belongs to another company.", code="other_company")
        if membership.status != "active":
            raise Conflict("This member is disabled.", code="disabled")
        # A new link replaces the member's older unused ones.
        LinkToken.update(revoked_at=clock.now()).where(
            (LinkToken.kind == "sign_in")
            & (LinkToken.user == user_id)
            & (LinkToken.company == caller.company_id)
            & LinkToken.used_at.is_null()
            & LinkToken.revoked_at.is_null()
        ).execute()
        token, row = links.issue(
            "sign_in",
            links.LOGIN_LINK_LIFETIME,
            company=caller.company_id,
            user=user_id,
            role=membership.role,
            name=user.display_name,
            invited_by=caller.user.id,
        )
    return {"link": invite_link_url(rt, token), "expiresAt": clock.iso(row.expires_at)}
