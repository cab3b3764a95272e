"""Courier rules shared by the dispatcher's and the courier's endpoints."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

import peewee

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, NotFound
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.auth import links, mail_texts
from appliance.dispatch.auth.guards import Caller
from appliance.dispatch.auth.service import invite_link_url
from appliance.dispatch.couriers.lookups import open_shift
from appliance.dispatch.couriers.serializers import courier_body, shift_body
from appliance.dispatch.db import database
from appliance.dispatch.events.store import record_event
from appliance.dispatch.models import (
    AuthSession,
    Courier,
    Membership,
    Order,
    Shift,
    User,
)
from appliance.dispatch.orders import ids
from appliance.dispatch.orders.state import transition
from appliance.dispatch.runtime import DispatchRuntime


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
    today = _day_start(clock.now())
    week = today - timedelta(days=today.weekday())  # Monday, Asia/Yerevan

    def window(since: datetime | None) -> dict[str, int]:
        query = Order.select().where((Order.last_courier == courier_id) & (Order.status == "delivered"))
        if since is not None:
            query = query.where(Order.finished_at >= since)
        rows = list(query.select(Order.amount_amd, Order.collected_amount_amd))
        return {
            "delivered": len(rows),
            "amountAmd": sum(r.amount_amd for r in rows),
            "collectedAmd": sum(r.collected_amount_amd or 0 for r in rows),
        }

    return {
        "today": window(today),
        "week": window(week),
        "allTime": window(None),
        "dayStart": clock.iso(today),
        "weekStart": clock.iso(week),
        "timeZone": "Asia/Yerevan",
    }


# -- profiles ------------------------------------------------------------------------------------


def list_couriers(company_id: int) -> list[dict[str, Any]]:
    return [
        courier_body(c) for c in Courier.select().where(Courier.company == company_id).order_by(Courier.id)
    ]


def create_courier(rt: DispatchRuntime, caller: Caller, fields: dict[str, Any]) -> dict[str, Any]:
    """A courier profile waiting for its account, and an invite mailed (never shown) to its
    address; accepting the invite attaches the account that proved the mailbox.

    Whether the address has an account, here or in another company, changes nothing in the
    answer (no enumeration across companies), and no account is made or joined by the dispatcher
    alone. The dispatcher's ``password`` is not kept: a password chosen by someone other than the
    address's owner never signs in (docs/identity.md)."""
    email = normalise_email(fields["email"])
    mailer = rt.mailer
    with write_transaction(database):
        courier = Courier.create(
            company=caller.company_id,
            user=None,
            display_name=fields["displayName"],
            phone=fields.get("phone"),
            vehicle_label=fields.get("vehicleLabel"),
            created_at=clock.now(),
        )
        token, _ = links.issue(
            "invite",
            links.INVITE_LIFETIME,
            company=caller.company_id,
            role="courier",
            name=fields["displayName"],
            email=email,
            phone=fields.get("phone"),
            vehicle=fields.get("vehicleLabel"),
            invited_by=caller.user.id,
            courier=courier,
        )
        invitee = User.get_or_none(User.email == email)
        subject, text = mail_texts.mail(
            "invite",
            invitee.language if invitee else caller.user.language,
            name=fields["displayName"],
            inviter=caller.user.display_name,
            company=caller.company.name,
            role="courier",
            link=invite_link_url(rt, token),
        )
        mailer.enqueue(email, subject, text)  # sent by the mail worker (common/mail.py)
        body = courier_body(courier)
    return body


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
    with write_transaction(database):
        courier = own_courier(company_id, courier_id)
        for field, column in columns.items():
            if field in changes and field != "active":
                setattr(courier, column, changes[field])
        courier.save()
        if "active" in changes and bool(changes["active"]) != bool(courier.active):
            set_courier_active(courier, bool(changes["active"]), actor_id)
        else:
            record_event(
                company_id, "courier.updated", {"courierId": str(courier.id), "active": courier.active}
            )
        return courier_body(courier)
