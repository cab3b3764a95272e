"""The fee rules themselves, without a database: which zone a pin lies in (a ray cast), whether a
drawn polygon is one (a simple ring: no crossing edges, an area), and the fee of one order.

Rounding, every part in whole drams: the distance part is the rate times the road metres / 1000,
rounded half up; the weight part charges every started kilogram above the threshold; the cash part
is the cash on delivery times the basis points / 10 000, rounded half up (0.5 dram up, as a cashier
would). Each part is rounded on its own and the parts are added.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

Vertex = tuple[float, float]  # (lat, lon)

MAX_VERTICES = 200


def contains(polygon: Sequence[Vertex], lat: float, lon: float) -> bool:
    """Whether (lat, lon) lies inside the ring (even-odd ray cast along the longitude axis; the
    zones are a city's size, so lat/lon is a plane for this purpose). A point on an edge may fall
    either side."""
    inside = False
    n = len(polygon)
    for i in range(n):
        (y1, x1), (y2, x2) = polygon[i], polygon[(i + 1) % n]
        if (y1 > lat) != (y2 > lat):
            cross = x1 + (lat - y1) * (x2 - x1) / (y2 - y1)
            if lon < cross:
                inside = not inside
    return inside


def _orientation(a: Vertex, b: Vertex, c: Vertex) -> float:
    return (b[0] - a[0]) * (c[1] - a[1]) - (b[1] - a[1]) * (c[0] - a[0])


def _on_segment(a: Vertex, b: Vertex, p: Vertex) -> bool:
    return min(a[0], b[0]) <= p[0] <= max(a[0], b[0]) and min(a[1], b[1]) <= p[1] <= max(a[1], b[1])


def _cross(a: Vertex, b: Vertex, c: Vertex, d: Vertex) -> bool:
    o1, o2, o3, o4 = (
        _orientation(a, b, c),
        _orientation(a, b, d),
        _orientation(c, d, a),
        _orientation(c, d, b),
    )
    if ((o1 > 0 and o2 < 0) or (o1 < 0 and o2 > 0)) and ((o3 > 0 and o4 < 0) or (o3 < 0 and o4 > 0)):
        return True
    return (
        (o1 == 0 and _on_segment(a, b, c))
        or (o2 == 0 and _on_segment(a, b, d))
        or (o3 == 0 and _on_segment(c, d, a))
        or (o4 == 0 and _on_segment(c, d, b))
    )


def polygon_problem(polygon: Sequence[Vertex]) -> str | None:
    """Why ``polygon`` is not a simple ring a zone can be, or None. The ring is given open (the
    first vertex is not repeated at the end); at most MAX_VERTICES, so the pairwise edge check is
    at most 20 000 pairs."""
    n = len(polygon)
    if n < 3 or n > MAX_VERTICES:
        return f"a zone has 3 to {MAX_VERTICES} vertices"
    if len(set(polygon)) != n:
        return "a vertex repeats"
    for i in range(n):
        a, b = polygon[i], polygon[(i + 1) % n]
        for j in range(i + 1, n):
            if j == i or (j + 1) % n == i or j == (i + 1) % n:
                continue  # edges sharing a vertex
            if _cross(a, b, polygon[j], polygon[(j + 1) % n]):
                return "its edges cross"
    area2 = sum(
        polygon[i][1] * polygon[(i + 1) % n][0] - polygon[(i + 1) % n][1] * polygon[i][0] for i in range(n)
    )
    if abs(area2) < 1e-12:
        return "the polygon has no area"
    return None


@dataclasses.dataclass(frozen=True)
class Zone:
    id: int
    polygon: tuple[Vertex, ...]
    base_fee_amd: int = 0
    per_km_amd: int = 0
    weight_threshold_kg: float = 0.0
    per_kg_amd: int = 0
    cod_basis_points: int = 0


def zone_of(zones: Sequence[Zone], lat: float, lon: float) -> Zone | None:
    """The first zone (lowest id: the first drawn) whose polygon holds the pin."""
    for zone in sorted(zones, key=lambda z: z.id):
        if contains(zone.polygon, lat, lon):
            return zone
    return None


@dataclasses.dataclass(frozen=True)
class Parts:
    base_amd: int
    distance_amd: int
    weight_amd: int
    cod_amd: int

    @property
    def total(self) -> int:
        return self.base_amd + self.distance_amd + self.weight_amd + self.cod_amd


def fee(zone: Zone, *, distance_m: float | None, weight_kg: float | None, cod_amd: int) -> Parts:
    """The fee of an order in ``zone``: ``distance_m`` on roads from the depot (None: no depot,
    no distance part); ``cod_amd`` the cash to collect (0 for a prepaid order)."""
    metres = round(distance_m) if distance_m is not None else 0
    distance = (zone.per_km_amd * metres + 500) // 1000
    over = round((weight_kg or 0.0) - zone.weight_threshold_kg, 6)
    weight = zone.per_kg_amd * math.ceil(over) if over > 0 else 0
    cod = (max(cod_amd, 0) * zone.cod_basis_points + 5000) // 10000
    return Parts(zone.base_fee_amd, distance, weight, cod)
