"""Administration without HTTP: create and list companies (the CLI and the demo). Creating one is
company.service.create_company; this adds what a person at a terminal needs: flat options and
plain-language checks, in one transaction."""

from __future__ import annotations

from typing import Any

from appliance.common.api import is_one_line
from appliance.common.db import write_transaction
from appliance.common.problems import Conflict, Invalid
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.company.service import create_company
from appliance.dispatch.db import database
from appliance.dispatch.geo_types import in_service_area
from appliance.dispatch.models import Company, Membership, User


def create_company_from_options(
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
    texts = {"company name": name, "city": city, "phone": phone or "", "owner name": owner_name}
    texts |= {"depot name": depot_name, "depot address": depot_address}
    for label, text in texts.items():
        if not is_one_line(text):  # as the API's schemas refuse (common/api.py ONE_LINE)
            raise Invalid(f"The {label} must be one line, without control characters.")
    if not in_service_area(depot_lat, depot_lon):
        raise Invalid("The depot lies outside the service area (lat 38.8..41.4, lon 43.4..46.7).")
    if owner_password is not None and len(owner_password) < 8:
        raise Invalid("The owner password must be at least 8 characters.")
    email = normalise_email(owner_email)
    with write_transaction(database):
        if owner_password is not None and User.get_or_none(User.email == email) is not None:
            raise Conflict(
                f"An account for {email} exists already; create the company without --owner-password."
            )
        created = create_company(
            name=name,
            city=city,
            phone=phone,
            owner_email=email,
            owner_name=owner_name,
            owner_password=owner_password,
            depot={"name": depot_name, "address": depot_address, "lat": depot_lat, "lon": depot_lon},
            owner_confirmed=True,
        )
    return {
        "company": {"id": str(created.company.id), "name": created.company.name},
        "owner": {"userId": str(created.owner.id), "email": email},
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
