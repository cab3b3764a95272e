"""JSON shapes of a company, its logo link and its depots (their OpenAPI models are in schemas.py)."""

from __future__ import annotations

from typing import Any

from appliance.common import clock
from appliance.dispatch.models import Company, Depot
from appliance.dispatch.runtime import DispatchRuntime


def logo_url(rt: DispatchRuntime, company: Company) -> str | None:
    if company.logo_key:
        return rt.objects.presign_get(company.logo_key)
    return company.logo_url


def company_body(rt: DispatchRuntime, company: Company) -> dict[str, Any]:
    return {
        "id": str(company.id),
        "name": company.name,
        "city": company.city,
        "phone": company.phone,
        "plan": company.plan,
        "trialEndsAt": clock.iso(company.trial_ends_at),
        "brandColor": company.brand_color,
        "logoUrl": logo_url(rt, company),
        "hasUploadedLogo": bool(company.logo_key),
        "smsSender": company.sms_sender,
        "smsTemplate": company.sms_template,
        "supportPhone": company.support_phone,
        "showCourierPhone": company.show_courier_phone,
        "createdAt": clock.iso(company.created_at),
    }


def depot_body(depot: Depot) -> dict[str, Any]:
    return {
        "id": str(depot.id),
        "name": depot.name,
        "address": depot.address,
        "point": {"lat": depot.lat, "lon": depot.lon},
        "isDefault": depot.is_default,
        "createdAt": clock.iso(depot.created_at),
    }
