"""Courier rules shared by the dispatcher's and the courier's endpoints."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.passwords import hash_password
from appliance.common.problems import Conflict, NotFound
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.auth import credentials
from appliance.dispatch.auth.guards import Caller
from appliance.dispatch.couriers import pay
from appliance.dispatch.couriers.lookups import open_shift
from appliance.dispatch.couriers.serializers import courier_body, shift_body
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.models import (
    AuthSession,
    CompanyCredential,
    Courier,
    LinkToken,
    Membership,
    Order,
    Shift,
    User,
)
from appliance.dispatch.orders import ids
from appliance.dispatch.orders.state import transition


def own_courier(company_id: int, courier_id: int) -> Courier:
    ids.require(courier_id, "courier")
    courier = Courier.get_or_none((Courier.id == courier_id) & (Courier.company == company_id))
    if courier is None:
        raise NotFound("No such courier.")
    return courier


# -- shifts ----------------------------------------------------------------------------------------------


def start_shift(courier: Courier) -> dict[str, Any]:
    with write_transaction(database):
        if open_shift(courier.id) is not None:
            raise Conflict("A shift is already open.")
        try:
            with database.atomic():
                shift = Shift.create(courier=courier.id, started_at=clock.now(), open_flag=1)
        except peewee.IntegrityError:
            raise Conflict("A shift is already open.") from None
        Courier.update(online=True).where(Courier.id == courier.id).execute()
        record_event(
            courier.company_id,
            "courier.shift_started",
            {"courierId": str(courier.id), "shiftId": str(shift.id)},
        )
        return shift_body(shift) or {}


def toggle_break(courier: Courier) -> dict[str, Any]:
    with write_transaction(database):
        shift = open_shift(courier.id)
        if shift is None:
            raise Conflict("No shift is open.")
        shift.on_break = not shift.on_break
        shift.save()
        kind = "courier.break_started" if shift.on_break else "courier.break_ended"
        record_event(courier.company_id, kind, {"courierId": str(courier.id), "shiftId": str(shift.id)})
        return shift_body(shift) or {}


def end_shift(courier: Courier, ended_by: int | None) -> dict[str, Any]:
    with write_transaction(database):
        shift = open_shift(courier.id)
        if shift is None:
            raise Conflict("No shift is open.")
        shift.ended_at = clock.now()  # type: ignore[assignment]
        shift.on_break = False
        shift.open_flag = None
        shift.ended_by = ended_by
        shift.save()
        Courier.update(online=False).where(Courier.id == courier.id).execute()
        record_event(
            courier.company_id,
            "courier.shift_ended",
            {
                "courierId": str(courier.id),
                "shiftId": str(shift.id),
                "endedBy": str(ended_by) if ended_by else None,
            },
        )
        return shift_body(shift) or {}


# -- earnings and history --------------------------------------------------------------------------


def _day_start(moment: datetime) -> datetime:
    local = moment.astimezone(clock.YEREVAN)
    return local.replace(hour=0, minute=0, second=0, microsecond=0)


def earnings(courier_id: int) -> dict[str, Any]:
    """Per window: the orders delivered and their value (``amountAmd``, the shop's money, and the
    cash collected), and the courier's pay under the company's rule (couriers/pay.py)."""
    today = _day_start(clock.now())
    week = today - timedelta(days=today.weekday())  # Monday, Asia/Yerevan
    courier = Courier.get_by_id(courier_id)
    rule = pay.rule_of(courier.company_id)

    def window(since: datetime | None) -> dict[str, int]:
        query = Order.select().where((Order.last_courier == courier_id) & (Order.status == "delivered"))
        if since is not None:
            query = query.where(Order.finished_at >= since)
        rows = list(query.select(Order.amount_amd, Order.collected_amount_amd))
        return {
            "delivered": len(rows),
            "amountAmd": sum(r.amount_amd for r in rows),
            "collectedAmd": sum(r.collected_amount_amd or 0 for r in rows),
            **pay.pay(rule, courier_id, since),
        }

    return {
        "today": window(today),
        "week": window(week),
        "allTime": window(None),
        "dayStart": clock.iso(today),
        "weekStart": clock.iso(week),
        "timeZone": "Asia/Yerevan",
        "payRule": pay.rule_body(rule),
    }


# -- profiles ------------------------------------------------------------------------------------


def list_couriers(company_id: int) -> list[dict[str, Any]]:
    return [
        courier_body(c) for c in Courier.select().where(Courier.company == company_id).order_by(Courier.id)
    ]


def create_courier(caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
    """A courier who signs in at once with the password the dispatcher set (the specification's
    courier create): their membership, profile and a company-set password, which opens this
    courier membership only and stops when the address is proven (docs/identity.md).

    An address with an account elsewhere gets an account for this company alone, so the answer,
    and everything the company sees after it, is the same whether or not the address has an
    account; only an address that is already a member here answers 409 (the company's own team)."""
    email = normalise_email(fields["email"])
    password_hash = hash_password(fields["password"])
    with write_transaction(database):
        if _member_here(caller.company_id, email):
            raise Conflict("This address is already a member of your company.", code="already_member")
        user = credentials.courier_account(email, fields)
        courier = _courier_membership(caller.company_id, user, fields)
        credentials.grant(user, caller.company_id, email, password_hash, caller.user.id)
        record_event(caller.company_id, "courier.updated", {"courierId": str(courier.id), "active": True})
        return courier_body(courier)


def _member_here(company_id: int, email: str) -> bool:
    own = User.get_or_none(User.email == email)
    if own is not None and (
        Membership.select().where((Membership.user == own.id) & (Membership.company == company_id)).exists()
    ):
        return True
    return (
        CompanyCredential.select()
        .where(
            (CompanyCredential.company == company_id)
            & (CompanyCredential.email == email)
            & CompanyCredential.revoked_at.is_null()
        )
        .exists()
    )


def _courier_membership(
    company_id: int, user: User, fields: dict[str, Any], profile: Courier | None = None
) -> Courier:
    """The courier membership of ``user`` and its profile (``profile``, one made before its
    account, gets the account)."""
    moment = clock.now()
    Membership.create(
        user=user, company=company_id, role="courier", vehicle=fields.get("vehicleLabel"), joined_at=moment
    )
    if profile is not None:
        Courier.update(user=user).where(Courier.id == profile.id).execute()
        profile.user = user
        return profile
    return Courier.create(
        company=company_id,
        user=user,
        display_name=fields["displayName"],
        phone=fields.get("phone"),
        vehicle_label=fields.get("vehicleLabel"),
        created_at=moment,
    )


def set_courier_password(courier: Courier, password_hash: str, actor_id: int | None) -> None:
    """PATCH /couriers/{id} with ``password`` (inside the caller's transaction): a new company-set
    password for a courier who has not proven their address; the sessions opened with the old one
    end (a lost phone). Never for a proven address: that password is the courier's own."""
    if courier.user_id is None:
        _attach_invited_profile(courier, password_hash, actor_id)
        return
    user = User.get_by_id(courier.user_id)
    membership = Membership.get_or_none(
        (Membership.user == user.id) & (Membership.company == courier.company_id)
    )
    if membership is None or membership.role != credentials.ROLE:
        raise Conflict("Only a courier's password can be set here.", code="not_courier")
    email = credentials.address_of(user, courier.company_id)
    if email is None or not credentials.may_set(user, courier.company_id):
        raise Conflict(
            "This courier has proven their address: only they can change their password.",
            code="address_proven",
        )
    credentials.grant(user, courier.company_id, email, password_hash, actor_id)


def _attach_invited_profile(courier: Courier, password_hash: str, actor_id: int | None) -> None:
    """A profile made by an earlier version (POST /couriers mailed an invite then) gets its
    account now, under the address its invite went to, and the invite stops."""
    invite = (
        LinkToken.select()
        .where((LinkToken.courier == courier.id) & (LinkToken.kind == "invite"))
        .order_by(LinkToken.id.desc())
        .first()
    )
    if invite is None or not invite.email:
        raise Conflict("This courier has no address to sign in with.", code="no_address")
    email = normalise_email(invite.email)
    if _member_here(courier.company_id, email):
        raise Conflict("This address is already a member of your company.", code="already_member")
    fields = {
        "displayName": courier.display_name,
        "phone": courier.phone,
        "vehicleLabel": courier.vehicle_label,
    }
    user = credentials.courier_account(email, fields)
    _courier_membership(courier.company_id, user, fields, profile=courier)
    LinkToken.update(revoked_at=clock.now()).where(
        (LinkToken.courier == courier.id) & LinkToken.used_at.is_null() & LinkToken.revoked_at.is_null()
    ).execute()
    credentials.grant(user, courier.company_id, email, password_hash, actor_id)


def end_sessions(company_id: int, user_id: int, reason: str = "membership_changed") -> None:
    """Revoke every session of the member in this company (their refresh tokens stop working)."""
    AuthSession.update(revoked_at=clock.now(), revoked_reason=reason).where(
        (AuthSession.user == user_id) & (AuthSession.company == company_id) & AuthSession.revoked_at.is_null()
    ).execute()


def set_courier_active(courier: Courier, active: bool, actor_id: int | None) -> None:
    """The one notion of an active courier (inside the caller's transaction): ``Courier.active``
    and the courier's membership move together. A courier switched off cannot sign in, their
    access tokens stop at once (the membership's session epoch moves), assignment and plans skip
    them, and their orders that are assigned but not yet picked up go back to ready (unassigned)
    for someone else; orders already picked up stay with them (the parcel is in their hands) for the
    dispatcher to settle."""
    Courier.update(active=active).where(Courier.id == courier.id).execute()
    courier.active = active
    if courier.user_id:
        membership = Membership.get_or_none(
            (Membership.company == courier.company_id) & (Membership.user == courier.user_id)
        )
        wanted = "active" if active else "disabled"
        if membership is not None and membership.role == "courier" and membership.status != wanted:
            Membership.update(status=wanted, session_epoch=Membership.session_epoch + 1).where(
                Membership.id == membership.id
            ).execute()
            end_sessions(courier.company_id, courier.user_id)
    if not active:
        waiting = Order.select().where((Order.courier == courier.id) & (Order.status == "assigned"))
        for order in list(waiting):
            transition(order, "ready", actor_id, by="dispatcher", reason="courier deactivated")
    record_event(courier.company_id, "courier.updated", {"courierId": str(courier.id), "active": active})


def update_courier(
    company_id: int, courier_id: int, changes: dict[str, Any], actor_id: int | None = None
) -> dict[str, Any]:
    columns = {
        "displayName": "display_name",
        "phone": "phone",
        "vehicleLabel": "vehicle_label",
        "active": "active",
    }
    password_hash = hash_password(changes["password"]) if changes.get("password") else None
    with write_transaction(database):
        courier = own_courier(company_id, courier_id)
        for field, column in columns.items():
            if field in changes and field != "active":
                setattr(courier, column, changes[field])
        courier.save()
        if password_hash is not None:
            set_courier_password(courier, password_hash, actor_id)
        if "active" in changes and bool(changes["active"]) != bool(courier.active):
            set_courier_active(courier, bool(changes["active"]), actor_id)
        else:
            record_event(
                company_id, "courier.updated", {"courierId": str(courier.id), "active": courier.active}
            )
        return courier_body(courier)
