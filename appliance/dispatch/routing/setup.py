"""The router the dispatch service uses, chosen by settings, and its health probe."""

from __future__ import annotations

from pathlib import Path

from appliance.common.health import Check, Probe
from appliance.dispatch.geocoding.upgrade import readiness
from appliance.dispatch.routing.build import current_osrm_file
from appliance.dispatch.routing.engines import (
    EmbeddedOSRM,
    RemoteOSRM,
    RoadEngine,
    RoadServer,
    Router,
    RoutingUnavailable,
    StraightLine,
    Valhalla,
)
from appliance.settings import Settings

# Two points in central Yerevan for the health probe's real route.
PROBE_POINTS = [(40.1776, 44.5126), (40.1872, 44.5152)]
REMOTE_RETRY_AFTER_S = 15.0


def make_router(settings: Settings) -> Router:
    engine: RoadEngine | None
    if settings.routing_engine == "embedded":
        engine = EmbeddedOSRM(current_osrm_file(settings.data_dir))
    elif settings.routing_engine == "osrm":
        engine = RemoteOSRM(settings.routing_url)
    elif settings.routing_engine == "valhalla":
        engine = Valhalla(settings.routing_url)
    else:
        engine = None
    # A server that does not answer is left alone for a while; the embedded engine fails at once.
    retry_after = REMOTE_RETRY_AFTER_S if isinstance(engine, RoadServer) else 0.0
    return Router(
        engine,
        StraightLine(settings.straight_line_detour, settings.straight_line_speed_kmh),
        retry_after=retry_after,
    )


def routing_probe(router: Router, data_dir: Path | None = None) -> Probe:
    """A real route between two points of Yerevan; with ``data_dir``, also the address index built
    with the road data: one of an older format is not_built, saying how it is mended (issue 46)."""

    def probe() -> Check:
        engine = router.engine
        if engine is None:
            return Check("fail", "road routing is switched off; estimates use straight lines")
        if isinstance(engine, EmbeddedOSRM) and not engine.built:
            return Check("not_built", "no road data built: run `appliance routing build --pbf FILE`")
        try:
            result = engine.route(PROBE_POINTS)
        except RoutingUnavailable as exc:
            return Check("fail", str(exc))
        stale = readiness(data_dir) if data_dir is not None else None
        if stale is not None:
            return Check("not_built", stale)
        return Check("pass", data={"engine": engine.name, "probeSeconds": round(result.duration_s, 1)})

    return probe
