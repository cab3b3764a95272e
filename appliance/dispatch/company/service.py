"""Company settings, depots, billing and logo rules; every query scoped to the caller's company."""

from __future__ import annotations

import dataclasses
from datetime import datetime
from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.objects import IMAGE_TYPES, StorageUnavailable, new_key
from appliance.common.passwords import hash_password
from appliance.common.problems import Invalid, NotFound, Unavailable, UnsupportedMediaType
from appliance.dispatch import audit
from appliance.dispatch.accounts import TRIAL, TRIAL_PLAN, normalise_email
from appliance.dispatch.company.serializers import company_body, depot_body
from appliance.dispatch.db import database
from appliance.dispatch.models import Company, Courier, Depot, Membership, Order, User
from appliance.dispatch.orders import proof
from appliance.dispatch.runtime import DispatchRuntime

PLANS: list[dict[str, Any]] = [
    {"plan": "start", "deliveriesPerMonth": 500, "couriers": 5, "priceAmd": 15000},
    {"plan": "city", "deliveriesPerMonth": 3000, "couriers": 25, "priceAmd": 39000},
    {"plan": "network", "deliveriesPerMonth": None, "couriers": None, "priceAmd": None},
]


@dataclasses.dataclass(frozen=True)
class NewCompany:
    company: Company
    owner: User
    owner_existed: bool


def create_company(
    *,
    name: str,
    city: str,
    phone: str | None,
    owner_email: str,
    owner_name: str,
    depot: dict[str, Any],
    owner_password: str | None = None,
    owner_confirmed: bool,
) -> NewCompany:
    """A company on the trial plan with its owner and default depot (``depot``: name, address,
    lat, lon). Runs inside the caller's write transaction, so sign-up can add its emailed link to
    the same change.

    The owner is the account of ``owner_email``, made when there is none (with a password hash
    when ``owner_password`` is given). An account that exists already becomes owner at once only
    when ``owner_confirmed`` (an operator at the CLI); otherwise its membership stays pending until
    its holder uses the emailed link (proof of the mailbox), so nobody can make someone else's
    account the owner of a company."""
    email = normalise_email(owner_email)
    moment = clock.now()
    company = Company.create(
        name=name.strip(),
        city=city,
        phone=phone,
        plan=TRIAL_PLAN,
        trial_ends_at=moment + TRIAL,
        created_at=moment,
    )
    owner = User.get_or_none(User.email == email)
    existed = owner is not None
    if owner is None:
        owner = User.create(
            email=email,
            display_name=owner_name,
            created_at=moment,
            last_company=company,
            password_hash=hash_password(owner_password) if owner_password else None,
            # The operator at the CLI vouches for the address; a sign-up proves it through its link.
            email_confirmed=owner_confirmed,
        )
    Membership.create(
        user=owner,
        company=company,
        role="owner",
        joined_at=moment,
        status="pending" if existed and not owner_confirmed else "active",
    )
    Depot.create(
        company=company,
        name=depot["name"],
        address=depot["address"],
        lat=depot["lat"],
        lon=depot["lon"],
        is_default=True,
        created_at=moment,
    )
    return NewCompany(company, owner, existed)


def get_company(rt: DispatchRuntime, company_id: int) -> dict[str, Any]:
    return company_body(rt, Company.get_by_id(company_id))


_FIELDS = {
    "name": "name",
    "city": "city",
    "phone": "phone",
    "brandColor": "brand_color",
    "smsSender": "sms_sender",
    "smsTemplate": "sms_template",
    "supportPhone": "support_phone",
    "showCourierPhone": "show_courier_phone",
}
_NOT_NULL = {"name", "city", "brandColor", "showCourierPhone"}


def update_company(rt: DispatchRuntime, company_id: int, changes: dict[str, Any]) -> dict[str, Any]:
    for field in _NOT_NULL:
        if field in changes and changes[field] is None:
            raise Invalid(
                f"{field} cannot be null.", errors=[{"field": field, "message": "must not be null"}]
            )
    with write_transaction(database):
        company = Company.get_by_id(company_id)
        before = _settings_of(company, changes)
        for field, column in _FIELDS.items():
            if field in changes:
                setattr(company, column, changes[field])
        if "logoKey" in changes:
            key = changes["logoKey"]
            if key is not None:
                prefix = f"{company_id}/logos/"
                if not key.startswith(prefix) or not rt.objects.exists(key):
                    raise Invalid(
                        "The logo key was not uploaded for this company.",
                        errors=[{"field": "logoKey", "message": "not uploaded for this company"}],
                    )
                company.logo_url = None
            company.logo_key = key
        if "logoUrl" in changes:
            company.logo_url = changes["logoUrl"]
            if changes["logoUrl"] is not None or "logoKey" not in changes:
                company.logo_key = None if changes["logoUrl"] is not None else company.logo_key
        company.save()
        audit.record(
            "company.settings_changed",
            f"company:{company_id}",
            company_id=company_id,
            before=before,
            after=_settings_of(company, changes),
        )
        return company_body(rt, company)


def _settings_of(company: Company, changes: dict[str, Any]) -> dict[str, Any]:
    """The changed settings' values as they stand (for the audit log)."""
    columns = {**_FIELDS, "logoKey": "logo_key", "logoUrl": "logo_url"}
    return {field: getattr(company, columns[field]) for field in changes if field in columns}


def logo_upload_url(rt: DispatchRuntime, company_id: int, content_type: str) -> dict[str, Any]:
    normalised = content_type.strip().lower()
    if not normalised.startswith("image/"):
        normalised = "image/" + normalised
    if normalised == "image/jpg":
        normalised = "image/jpeg"
    if normalised not in IMAGE_TYPES:
        raise UnsupportedMediaType("Logos must be image/jpeg, image/png or image/webp.")
    try:
        upload = rt.objects.presign_put(new_key(f"{company_id}/logos", normalised), normalised)
    except StorageUnavailable:
        raise Unavailable("Object storage is unavailable.") from None
    return {"key": upload.key, "url": upload.url, "expiresIn": upload.expires_in}


# -- depots ---------------------------------------------------------------------------------------


def list_depots(company_id: int) -> list[dict[str, Any]]:
    query = Depot.select().where(Depot.company == company_id)
    return [depot_body(d) for d in query.order_by(Depot.is_default.desc(), Depot.created_at, Depot.id)]


def _make_default(company_id: int, depot_id: int) -> None:
    Depot.update(is_default=(Depot.id == depot_id)).where(Depot.company == company_id).execute()


def create_depot(
    company_id: int, name: str, address: str, point: dict[str, float], is_default: bool
) -> dict[str, Any]:
    with write_transaction(database):
        first = not Depot.select().where(Depot.company == company_id).exists()
        depot = Depot.create(
            company=company_id,
            name=name,
            address=address,
            lat=point["lat"],
            lon=point["lon"],
            is_default=False,
            created_at=clock.now(),
        )
        if first or is_default:
            _make_default(company_id, depot.id)
        body = depot_body(Depot.get_by_id(depot.id))
        audit.record("depot.created", f"depot:{depot.id}", company_id=company_id, after=body)
        return body


def _own_depot(company_id: int, depot_id: int) -> Depot:
    depot = Depot.get_or_none((Depot.id == depot_id) & (Depot.company == company_id))
    if depot is None:
        raise NotFound("No such depot.")
    return depot


def update_depot(company_id: int, depot_id: int, changes: dict[str, Any]) -> dict[str, Any]:
    with write_transaction(database):
        depot = _own_depot(company_id, depot_id)
        before = depot_body(depot)
        for field in ("name", "address"):
            if changes.get(field) is not None:
                setattr(depot, field, changes[field])
        if changes.get("point") is not None:
            depot.lat, depot.lon = changes["point"]["lat"], changes["point"]["lon"]
        depot.save()
        if changes.get("isDefault"):
            _make_default(company_id, depot.id)
        body = depot_body(Depot.get_by_id(depot.id))
        audit.record("depot.changed", f"depot:{depot.id}", company_id=company_id, before=before, after=body)
        return body


def delete_depot(company_id: int, depot_id: int) -> None:
    with write_transaction(database):
        depot = _own_depot(company_id, depot_id)
        was_default = depot.is_default
        audit.record("depot.deleted", f"depot:{depot.id}", company_id=company_id, before=depot_body(depot))
        depot.delete_instance()
        if was_default:
            oldest = (
                Depot.select().where(Depot.company == company_id).order_by(Depot.created_at, Depot.id).first()
            )
            if oldest is not None:
                _make_default(company_id, oldest.id)


# -- billing --------------------------------------------------------------------------------------


def _month_start() -> datetime:
    local = clock.now().astimezone(clock.YEREVAN)
    return local.replace(day=1, hour=0, minute=0, second=0, microsecond=0)


def deliveries_since(company_id: int, since: datetime) -> int:
    """Delivered orders since ``since``."""
    return (
        Order.select()
        .where((Order.company == company_id) & (Order.status == "delivered") & (Order.finished_at >= since))
        .count()
    )


def billing(company_id: int) -> dict[str, Any]:
    company = Company.get_by_id(company_id)
    row = next(p for p in PLANS if p["plan"] == company.plan)
    period_start = _month_start()
    trial_active = company.trial_ends_at is not None and company.trial_ends_at > clock.now()
    return {
        "plan": company.plan,
        "priceAmd": row["priceAmd"],
        "limits": {"deliveriesPerMonth": row["deliveriesPerMonth"], "couriers": row["couriers"]},
        "usage": {
            "deliveriesThisMonth": deliveries_since(company_id, period_start),
            "activeCouriers": Courier.select()
            .where((Courier.company == company_id) & Courier.active)
            .count(),
            "periodStart": clock.iso(period_start),
        },
        "trialEndsAt": clock.iso(company.trial_ends_at),
        "trialActive": trial_active,
        "invoices": [],
        "plans": [dict(p) for p in PLANS],
    }


def change_plan(company_id: int, plan: str) -> dict[str, Any]:
    with write_transaction(database):
        before = Company.get_by_id(company_id).plan
        Company.update(plan=plan).where(Company.id == company_id).execute()
        audit.record(
            "company.plan_changed",
            f"company:{company_id}",
            company_id=company_id,
            before={"plan": before},
            after={"plan": plan},
        )
    return billing(company_id)


def order_settings(company_id: int) -> dict[str, Any]:
    company = Company.get_by_id(company_id)
    return {
        "importStatus": company.import_status,
        "integrationOrdersReady": company.integration_orders_ready,
        "proofRequired": proof.kinds_of(company.proof_required),
    }


def update_order_settings(company_id: int, changes: dict[str, Any]) -> dict[str, Any]:
    columns = {
        "importStatus": Company.import_status,
        "integrationOrdersReady": Company.integration_orders_ready,
        "proofRequired": Company.proof_required,
    }
    stored = {**changes}
    if "proofRequired" in stored:
        stored["proofRequired"] = proof.stored(stored["proofRequired"])
    if changes:
        with write_transaction(database):
            before = order_settings(company_id)
            Company.update({columns[name]: value for name, value in stored.items()}).where(
                Company.id == company_id
            ).execute()
            audit.record(
                "company.order_settings_changed",
                f"company:{company_id}",
                company_id=company_id,
                before={k: before[k] for k in changes},
                after=changes,
            )
    return order_settings(company_id)
