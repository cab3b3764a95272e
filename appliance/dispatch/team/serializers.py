"""JSON shapes of team members and invites (their OpenAPI models are in schemas.py)."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.dispatch.auth import credentials, links
from appliance.dispatch.models import Courier, InviteRecord, LinkToken, Membership, User


def member_body(membership: Membership, user: User) -> dict[str, Any]:
    courier = Courier.get_or_none((Courier.company == membership.company_id) & (Courier.user == user.id))
    # A courier is shown as the company knows them (the profile's name, and its phone when it has
    # one): a company-only account (docs/identity.md) shows nothing the company did not enter.
    return {
        "userId": str(user.id),
        "name": courier.display_name if courier else user.display_name,
        "role": membership.role,
        "status": membership.status,
        "email": user.email or credentials.address_of(user, membership.company_id),
        "phone": (courier.phone if courier else None) or user.phone,
        "courierId": str(courier.id) if courier else None,
        "vehicle": membership.vehicle or (courier.vehicle_label if courier else None),
        "joinedAt": clock.iso(membership.joined_at),
    }


def invite_body(row: LinkToken) -> dict[str, Any]:
    inviter = User.get_or_none(User.id == row.invited_by_id) if row.invited_by_id else None
    return {
        "id": str(row.id),
        "role": row.role,
        "name": row.name,
        "expiresAt": clock.iso(row.expires_at),
        "phone": row.phone,
        "email": row.email,
        "vehicle": row.vehicle,
        "invitedBy": {"userId": str(inviter.id), "name": inviter.display_name} if inviter else None,
        "createdAt": clock.iso(row.created_at),
    }


def invite_record_body(record: InviteRecord, link: LinkToken | None) -> dict[str, Any]:
    """One invite made, as the owner reads it: who invited which address as what, and when; the
    state of its link (``removed`` once housekeeping deleted the expired link)."""
    return {
        "id": str(record.id),
        "inviteId": str(record.link_id) if record.link_id is not None else None,
        "role": record.role,
        "name": record.name,
        "email": record.email,
        "phone": record.phone,
        "invitedBy": (
            {"userId": str(record.invited_by_id), "name": record.inviter_name}
            if record.invited_by_id is not None
            else None
        ),
        "createdAt": clock.iso(record.created_at),
        "state": links.state(link) if link is not None else "removed",
    }
