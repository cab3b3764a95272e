"""Delivery fee zones (owners and dispatchers draw them on the console's map) and the fee of an
order: computed when it is created (POST /orders, a shop's key) or imported, kept in
order.delivery_fee_amd, and changed by a dispatcher's PATCH /orders/{id} (audited). The rules and
their rounding are in rules.py; docs/fees.md says them for people.

The distance part asks the project's router for the road distance from the company's default depot
to the pin (a table request per 99 pins of an import); when the router has no roads to answer with (no
road data built, the engine down) its straight-line fallback stands in: the great-circle distance
times the configured detour factor.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

from appliance.common import clock
from appliance.common.db import write_transaction
from appliance.common.problems import Invalid, NotFound
from appliance.dispatch import audit
from appliance.dispatch.db import database
from appliance.dispatch.fees import rules
from appliance.dispatch.models import Depot, FeeZone
from appliance.dispatch.orders import ids

TABLE_CHUNK = 99  # destinations per table request, beside the depot: 100 points
MAX_ZONES = 100  # a company's zones: each order's pin is checked against every one
FIELDS = {
    "name": "name",
    "baseFeeAmd": "base_fee_amd",
    "perKmAmd": "per_km_amd",
    "weightThresholdKg": "weight_threshold_kg",
    "perKgAmd": "per_kg_amd",
    "codBasisPoints": "cod_basis_points",
}


def zone_body(zone: FeeZone) -> dict[str, Any]:
    return {
        "id": str(zone.id),
        "name": zone.name,
        "polygon": [{"lat": lat, "lon": lon} for lat, lon in json.loads(zone.polygon)],
        "baseFeeAmd": zone.base_fee_amd,
        "perKmAmd": zone.per_km_amd,
        "weightThresholdKg": zone.weight_threshold_kg,
        "perKgAmd": zone.per_kg_amd,
        "codBasisPoints": zone.cod_basis_points,
        "createdAt": clock.iso(zone.created_at),
        "updatedAt": clock.iso(zone.updated_at),
    }


def _ring(points: Sequence[dict[str, float]]) -> list[tuple[float, float]]:
    """The vertices as (lat, lon), the closing vertex dropped when the client repeated the first."""
    ring = [(float(p["lat"]), float(p["lon"])) for p in points]
    if len(ring) > 3 and ring[0] == ring[-1]:
        ring.pop()
    problem = rules.polygon_problem(ring)
    if problem is not None:
        raise Invalid(
            "The zone's polygon is not a simple ring of 3 to 200 vertices.",
            errors=[{"field": "polygon", "message": problem}],
        )
    return ring


def list_zones(company_id: int) -> list[dict[str, Any]]:
    return [zone_body(z) for z in FeeZone.select().where(FeeZone.company == company_id).order_by(FeeZone.id)]


def _own_zone(company_id: int, zone_id: int) -> FeeZone:
    ids.require(zone_id, "fee zone")
    zone = FeeZone.get_or_none((FeeZone.id == zone_id) & (FeeZone.company == company_id))
    if zone is None:
        raise NotFound("No such fee zone.")
    return zone


def get_zone(company_id: int, zone_id: int) -> dict[str, Any]:
    return zone_body(_own_zone(company_id, zone_id))


def create_zone(company_id: int, fields: dict[str, Any]) -> dict[str, Any]:
    ring = _ring(fields["polygon"])
    with write_transaction(database):
        if FeeZone.select().where(FeeZone.company == company_id).count() >= MAX_ZONES:
            raise Invalid(
                "A company has at most 100 fee zones.",
                errors=[{"field": "polygon", "message": "at most 100 zones"}],
            )
        moment = clock.now()
        zone = FeeZone(company=company_id, polygon=json.dumps(ring), created_at=moment, updated_at=moment)
        for field, column in FIELDS.items():
            if fields.get(field) is not None:
                setattr(zone, column, fields[field])
        zone.save(force_insert=True)
        body = zone_body(zone)
        audit.record("fee_zone.created", f"fee_zone:{zone.id}", company_id=company_id, after=body)
        return body


def update_zone(company_id: int, zone_id: int, changes: dict[str, Any]) -> dict[str, Any]:
    ring = _ring(changes["polygon"]) if changes.get("polygon") is not None else None
    with write_transaction(database):
        zone = _own_zone(company_id, zone_id)
        before = zone_body(zone)
        for field, column in FIELDS.items():
            if changes.get(field) is not None:
                setattr(zone, column, changes[field])
        if ring is not None:
            zone.polygon = json.dumps(ring)
        zone.updated_at = clock.now()  # type: ignore[assignment]
        zone.save()
        body = zone_body(zone)
        audit.record(
            "fee_zone.changed", f"fee_zone:{zone.id}", company_id=company_id, before=before, after=body
        )
        return body


def delete_zone(company_id: int, zone_id: int) -> None:
    with write_transaction(database):
        zone = _own_zone(company_id, zone_id)
        audit.record("fee_zone.deleted", f"fee_zone:{zone.id}", company_id=company_id, before=zone_body(zone))
        zone.delete_instance()


def _zones(company_id: int) -> list[rules.Zone]:
    return [
        rules.Zone(
            id=z.id,
            polygon=tuple((lat, lon) for lat, lon in json.loads(z.polygon)),
            base_fee_amd=z.base_fee_amd,
            per_km_amd=z.per_km_amd,
            weight_threshold_kg=z.weight_threshold_kg,
            per_kg_amd=z.per_kg_amd,
            cod_basis_points=z.cod_basis_points,
        )
        for z in FeeZone.select().where(FeeZone.company == company_id)
    ]


def _cod(fields: dict[str, Any]) -> int:
    """The cash to collect of a validated OrderCreate (as insert_order reads it)."""
    if not fields.get("isCod"):
        return 0
    cod = fields.get("codAmountAmd")
    return int(cod if cod is not None else fields.get("amountAmd", 0))


def quote_many(company_id: int, orders: Sequence[dict[str, Any] | None], router: Any) -> list[int | None]:
    """The fee of each new order (validated OrderCreate fields; None: no fee asked for, such as an
    imported row still waiting for its pin): None where no zone holds its pin. Table requests from
    the depot to every pin whose zone charges by distance, 99 pins each. Called before the write
    transaction, so that the road engine's answer never holds the database's write lock."""
    zones = _zones(company_id)
    if not zones:
        return [None] * len(orders)
    found = [
        rules.zone_of(zones, f["pin"]["lat"], f["pin"]["lon"]) if f is not None else None for f in orders
    ]
    far = [i for i, zone in enumerate(found) if zone is not None and zone.per_km_amd > 0]
    distances: dict[int, float | None] = {}
    depot = Depot.get_or_none((Depot.company == company_id) & Depot.is_default) if far else None
    if depot is not None:
        # A hundred destinations a request: a road server's table has a size limit (OSRM's
        # --max-table-size is 100 by default), past which it refuses and the straight line stands in.
        for start in range(0, len(far), TABLE_CHUNK):
            part = far[start : start + TABLE_CHUNK]
            pins = [(orders[i]["pin"]["lat"], orders[i]["pin"]["lon"]) for i in part]  # type: ignore[index]
            table = router.table([(depot.lat, depot.lon)], pins)
            distances.update(zip(part, table.distances[0], strict=True))
    fees: list[int | None] = []
    for i, (fields, zone) in enumerate(zip(orders, found, strict=True)):
        if zone is None or fields is None:
            fees.append(None)
            continue
        parts = rules.fee(
            zone, distance_m=distances.get(i), weight_kg=fields.get("weightKg"), cod_amd=_cod(fields)
        )
        fees.append(parts.total)
    return fees


def quote(company_id: int, fields: dict[str, Any], router: Any) -> int | None:
    return quote_many(company_id, [fields], router)[0]
