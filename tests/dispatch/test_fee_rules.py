"""The delivery fee rules without a database: the zone a pin lies in, what a zone's polygon may be,
and each part of the fee with its rounding (docs/fees.md)."""

from __future__ import annotations

import pytest

from appliance.dispatch.fees import rules

SQUARE = ((40.17, 44.50), (40.17, 44.53), (40.19, 44.53), (40.19, 44.50))
# An L shape: the notch (40.185, 44.525) is outside though it is inside the bounding box.
ELL = ((40.17, 44.50), (40.17, 44.53), (40.18, 44.53), (40.18, 44.52), (40.19, 44.52), (40.19, 44.50))


def test_a_pin_inside_a_square_is_in_it_and_one_outside_is_not() -> None:
    assert rules.contains(SQUARE, 40.18, 44.51)
    assert not rules.contains(SQUARE, 40.20, 44.51)
    assert not rules.contains(SQUARE, 40.18, 44.54)


def test_a_concave_zone_leaves_out_its_notch() -> None:
    assert rules.contains(ELL, 40.175, 44.525)
    assert rules.contains(ELL, 40.185, 44.505)
    assert not rules.contains(ELL, 40.185, 44.525)


def test_where_zones_overlap_the_first_drawn_applies() -> None:
    first = rules.Zone(id=3, polygon=SQUARE, base_fee_amd=1000)
    second = rules.Zone(id=7, polygon=SQUARE, base_fee_amd=2000)
    assert rules.zone_of([second, first], 40.18, 44.51) is first
    assert rules.zone_of([second, first], 41.0, 45.0) is None


@pytest.mark.parametrize(
    ("polygon", "problem"),
    [
        (SQUARE[:2], "a zone has 3 to 200 vertices"),
        (tuple((40.0 + i / 1000, 44.5 + (i % 2) / 1000) for i in range(201)), "a zone has 3 to 200 vertices"),
        (((40.17, 44.50), (40.18, 44.51), (40.19, 44.52)), "the polygon has no area"),
        (((40.17, 44.50), (40.19, 44.53), (40.17, 44.53), (40.19, 44.50)), "its edges cross"),
        (((40.17, 44.50), (40.17, 44.53), (40.17, 44.50), (40.19, 44.50)), "a vertex repeats"),
    ],
)
def test_a_polygon_that_is_no_simple_ring_is_refused_with_its_reason(polygon, problem) -> None:
    assert rules.polygon_problem(polygon) == problem


def test_a_square_and_an_l_shape_are_valid_zones() -> None:
    assert rules.polygon_problem(SQUARE) is None
    assert rules.polygon_problem(ELL) is None


def test_the_base_fee_stands_alone_when_no_other_rule_is_set() -> None:
    zone = rules.Zone(id=1, polygon=SQUARE, base_fee_amd=800)
    parts = rules.fee(zone, distance_m=12_345.0, weight_kg=30.0, cod_amd=50_000)
    assert parts == rules.Parts(800, 0, 0, 0) and parts.total == 800


def test_the_distance_part_is_the_rate_times_road_kilometres_rounded_half_up() -> None:
    zone = rules.Zone(id=1, polygon=SQUARE, per_km_amd=150)
    assert rules.fee(zone, distance_m=3_500.0, weight_kg=None, cod_amd=0).distance_amd == 525
    # 150 x 3.4567 km = 518.505 -> 519; 150 x 3.4563 km = 518.445 -> 518
    assert rules.fee(zone, distance_m=3_456.7, weight_kg=None, cod_amd=0).distance_amd == 519
    assert rules.fee(zone, distance_m=3_456.3, weight_kg=None, cod_amd=0).distance_amd == 518
    assert rules.fee(zone, distance_m=None, weight_kg=None, cod_amd=0).distance_amd == 0


def test_every_started_kilogram_above_the_threshold_is_charged() -> None:
    zone = rules.Zone(id=1, polygon=SQUARE, weight_threshold_kg=5.0, per_kg_amd=100)
    assert rules.fee(zone, distance_m=None, weight_kg=5.0, cod_amd=0).weight_amd == 0
    assert rules.fee(zone, distance_m=None, weight_kg=5.2, cod_amd=0).weight_amd == 100
    assert rules.fee(zone, distance_m=None, weight_kg=7.0, cod_amd=0).weight_amd == 200
    assert rules.fee(zone, distance_m=None, weight_kg=None, cod_amd=0).weight_amd == 0


def test_the_cash_part_is_basis_points_of_the_cod_rounded_half_up_to_a_dram() -> None:
    zone = rules.Zone(id=1, polygon=SQUARE, cod_basis_points=150)  # 1.5 %
    assert rules.fee(zone, distance_m=None, weight_kg=None, cod_amd=10_000).cod_amd == 150
    assert rules.fee(zone, distance_m=None, weight_kg=None, cod_amd=1_100).cod_amd == 17  # 16.5 -> 17
    assert rules.fee(zone, distance_m=None, weight_kg=None, cod_amd=1_099).cod_amd == 16  # 16.485
    assert rules.fee(zone, distance_m=None, weight_kg=None, cod_amd=0).cod_amd == 0


def test_the_parts_are_rounded_each_and_added() -> None:
    zone = rules.Zone(
        id=1, polygon=SQUARE, base_fee_amd=500, per_km_amd=100, weight_threshold_kg=2, per_kg_amd=50,
        cod_basis_points=100,
    )  # fmt: skip
    parts = rules.fee(zone, distance_m=2_004.0, weight_kg=3.5, cod_amd=12_345)
    assert parts == rules.Parts(500, 200, 100, 123) and parts.total == 923
