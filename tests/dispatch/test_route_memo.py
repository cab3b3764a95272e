"""The route memo: the same question on the roads is answered once for a while; new points are a
new question; straight lines standing in for a resting engine are not kept."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.dispatch.routing.memo import RouteMemo
from appliance.dispatch.routing.setup import make_router
from appliance.settings import load_settings

A, B, C = (40.1795, 44.4933), (40.1897, 44.5054), (40.1850, 44.4990)


@pytest.fixture
def counted_router(routed_data_dir: Path, monkeypatch: pytest.MonkeyPatch):
    router = make_router(load_settings({"data_dir": str(routed_data_dir)}, environ={}))
    asked: list[tuple] = []
    real_route = router.engine.route

    def route(points):
        asked.append(tuple(points))
        return real_route(points)

    monkeypatch.setattr(router.engine, "route", route)
    return router, asked


def test_a_repeated_question_is_answered_from_memory_with_the_same_road_answer(counted_router):
    router, asked = counted_router
    memo = RouteMemo(router)
    first = memo.route([A, B])
    assert first.method == "road"
    assert memo.route([A, B]) == first
    assert len(asked) == 1


def test_a_new_fix_or_another_stop_is_a_new_question(counted_router):
    router, asked = counted_router
    memo = RouteMemo(router)
    memo.route([A, B])
    memo.route([C, B])
    memo.route([A, B, C])
    assert len(asked) == 3


def test_answers_expire_after_their_time(counted_router):
    router, asked = counted_router
    memo = RouteMemo(router, ttl=0.0)
    memo.route([A, B])
    memo.route([A, B])
    assert len(asked) == 2


def test_the_memo_forgets_the_oldest_question_beyond_its_size(counted_router):
    router, asked = counted_router
    memo = RouteMemo(router, size=2)
    for points in ([A, B], [B, C], [C, A], [A, B]):
        memo.route(points)
    assert len(asked) == 4


def test_a_straight_line_standing_in_for_a_failing_engine_is_not_kept(counted_router, monkeypatch):
    from appliance.dispatch.routing.engines import RoutingUnavailable

    router, asked = counted_router

    def failing(points):
        asked.append(tuple(points))
        raise RoutingUnavailable("stopped")

    monkeypatch.setattr(router.engine, "route", failing)
    memo = RouteMemo(router)
    assert memo.route([A, B]).method == "straight_line"
    assert memo.route([A, B]).method == "straight_line"
    assert len(asked) == 2
