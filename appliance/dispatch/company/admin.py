"""Administration without HTTP: create and list companies (used by the CLI and the demo)."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.passwords import hash_password
from appliance.common.problems import Conflict, Invalid
from appliance.dispatch.auth.service import TRIAL, normalise_email
from appliance.dispatch.db import database
from appliance.dispatch.geo_types import in_service_area
from appliance.dispatch.models import Company, Depot, Membership, User


def create_company(
    *,
    name: str,
    city: str,
    phone: str | None,
    owner_email: str,
    owner_name: str,
    owner_password: str | None,
    depot_name: str,
    depot_address: str,
    depot_lat: float,
    depot_lon: float,
) -> dict[str, Any]:
    if not 2 <= len(name.strip()) <= 120:
        raise Invalid("The company name must be 2..120 characters.")
    if not in_service_area(depot_lat, depot_lon):
        raise Invalid("The depot lies outside the service area (lat 38.8..41.4, lon 43.4..46.7).")
    if owner_password is not None and len(owner_password) < 8:
        raise Invalid("The owner password must be at least 8 characters.")
    email = normalise_email(owner_email)
    with write_transaction(database):
        moment = clock.now()
        user = User.get_or_none(User.email == email)
        if user is not None and owner_password is not None:
            raise Conflict(
                f"An account for {email} exists already; create the company without --owner-password."
            )
        company = Company.create(
            name=name.strip(),
            city=city,
            phone=phone,
            plan="start",
            trial_ends_at=moment + TRIAL,
            created_at=moment,
        )
        if user is None:
            user = User.create(
                email=email,
                display_name=owner_name,
                created_at=moment,
                last_company=company,
                password_hash=hash_password(owner_password) if owner_password else None,
            )
        Membership.create(user=user, company=company, role="owner", joined_at=moment)
        Depot.create(
            company=company,
            name=depot_name,
            address=depot_address,
            lat=depot_lat,
            lon=depot_lon,
            is_default=True,
            created_at=moment,
        )
    return {
        "company": {"id": str(company.id), "name": company.name},
        "owner": {"userId": str(user.id), "email": email},
    }


def list_companies() -> list[dict[str, Any]]:
    return [
        {
            "id": str(company.id),
            "name": company.name,
            "plan": company.plan,
            "members": Membership.select().where(Membership.company == company.id).count(),
        }
        for company in Company.select().order_by(Company.id)
    ]
