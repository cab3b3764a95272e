"""The Session body: the caller, the company acted in, every membership and, when just issued,
the tokens (its OpenAPI model is schemas.Session)."""

from __future__ import annotations

from typing import Any

import peewee

from appliance.common.compiled import CompiledSelect, Slot
from appliance.dispatch.auth import credentials
from appliance.dispatch.auth.sessions import (
    IssuedTokens,
)
from appliance.dispatch.db import database
from appliance.dispatch.models import (
    Company,
    Courier,
    Membership,
    User,
)

# One query, its text built once (GET /me is on every page load): every membership of the user,
# its company and the user's courier profile there.
_MEMBERSHIPS = CompiledSelect(
    lambda: (
        Membership.select(Membership.role, Membership.status, Company.id, Company.name, Courier.id)
        .join(Company, on=(Membership.company == Company.id))
        .join(
            Courier,
            peewee.JOIN.LEFT_OUTER,
            on=((Courier.company == Membership.company) & (Courier.user == Membership.user)),
        )
        .where(Membership.user == Slot("user_id"))
        .order_by(Membership.joined_at, Membership.id)
        .tuples()
    )
)


def session_body(
    membership: Membership,
    tokens: IssuedTokens | None = None,
    *,
    user: User | None = None,
    company: Company | None = None,
    scoped: bool = False,
) -> dict[str, Any]:
    """``scoped``: a session opened with a company-set password, which sees only its company (none
    of the account's other memberships, docs/identity.md)."""
    user = user or User.get_by_id(membership.user_id)
    company = company or Company.get_by_id(membership.company_id)
    memberships = _MEMBERSHIPS.raw_rows(database, user_id=user.id)  # text and integers as stored
    if scoped:
        memberships = [row for row in memberships if row[2] == company.id]
    courier_id = next((c for _, _, cid, _, c in memberships if cid == company.id), None)
    body: dict[str, Any] = {
        "user": {
            "id": str(user.id),
            "email": user.email if user.email else credentials.address_of(user, company.id),
            "phone": user.phone,
            "displayName": user.display_name,
            "language": user.language,
            "role": "courier" if membership.role == "courier" else "dispatcher",
            "companyRole": membership.role,
            "companyId": str(company.id),
            "courierId": str(courier_id) if courier_id else None,
        },
        "company": {
            "id": str(company.id),
            "name": company.name,
            "city": company.city,
            "plan": company.plan,
            "brandColor": company.brand_color,
        },
        "role": membership.role,
        "memberships": [
            {"companyId": str(cid), "companyName": name, "role": role, "status": status}
            for role, status, cid, name, _ in memberships
        ],
    }
    if tokens is not None:
        body.update(
            accessToken=tokens.access_token,
            refreshToken=tokens.refresh_token,
            tokenType="Bearer",
            expiresIn=tokens.expires_in,
        )
    return body
