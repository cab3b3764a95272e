"""Road engines behind one small interface, and the straight-line fallback.

Every answer carries ``method``: ``road`` when a road engine produced it, ``straight_line`` when
the fallback did. Points are (lat, lon) everywhere in this package; OSRM wants (lon, lat) and
the conversion happens only here.
"""

from __future__ import annotations

import dataclasses
import itertools
import logging
import math
import threading
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Literal, Protocol
from urllib.parse import urljoin

import numpy as np
import polyline
import requests

log = logging.getLogger("appliance.routing")

Point = tuple[float, float]  # (lat, lon)
Method = Literal["road", "straight_line"]


class RoutingUnavailable(Exception):
    """The road engine cannot answer (not built, stopped, unreachable or failing)."""


@dataclasses.dataclass(frozen=True)
class RouteResult:
    duration_s: float
    distance_m: float
    geometry: str  # polyline, precision 6
    legs: list[tuple[float, float]]  # (duration s, distance m) between consecutive points
    method: Method


@dataclasses.dataclass(frozen=True)
class TableResult:
    durations: list[list[float | None]]
    distances: list[list[float | None]]
    method: Method


@dataclasses.dataclass(frozen=True)
class DurationMatrix:
    """Seconds between every pair of the points asked for (row: from, column: to), as one numpy
    array: what a planner needs from a table, without a Python object per cell."""

    seconds: np.ndarray  # float64, square; NaN where the engine found no route
    method: Method
    # True where the road engine found no route (the straight-line estimate stands in): what the
    # planner names "unreachable" when it leaves such a stop out. None: every pair was answered.
    unreachable: np.ndarray | None = None


class RoadEngine(Protocol):
    name: str

    def route(self, points: Sequence[Point]) -> RouteResult: ...

    def table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult: ...

    def durations(self, points: Sequence[Point]) -> np.ndarray:
        """Seconds between every pair of ``points`` in one table request (NaN: no route)."""
        ...


def haversine_m(a: Point, b: Point) -> float:
    lat1, lon1, lat2, lon2 = map(math.radians, (a[0], a[1], b[0], b[1]))
    h = math.sin((lat2 - lat1) / 2) ** 2 + math.cos(lat1) * math.cos(lat2) * math.sin((lon2 - lon1) / 2) ** 2
    return 2 * 6371008.8 * math.asin(math.sqrt(h))


class StraightLine:
    """Haversine distance times a detour factor, driven at a city speed."""

    name = "straight_line"

    def __init__(self, detour: float, speed_kmh: float) -> None:
        self.detour = detour
        self.speed_ms = speed_kmh / 3.6

    def _leg(self, a: Point, b: Point) -> tuple[float, float]:
        distance = haversine_m(a, b) * self.detour
        return distance / self.speed_ms, distance

    def route(self, points: Sequence[Point]) -> RouteResult:
        legs = [self._leg(a, b) for a, b in itertools.pairwise(points)]
        return RouteResult(
            duration_s=sum(d for d, _ in legs),
            distance_m=sum(m for _, m in legs),
            geometry=polyline.encode(list(points), 6),
            legs=legs,
            method="straight_line",
        )

    def table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult:
        cells = [[self._leg(s, d) for d in destinations] for s in sources]
        return TableResult(
            durations=[[c[0] for c in row] for row in cells],
            distances=[[c[1] for c in row] for row in cells],
            method="straight_line",
        )

    def durations(self, points: Sequence[Point]) -> np.ndarray:
        radians = np.radians(np.asarray(points, dtype=np.float64).reshape(-1, 2))
        lat, lon = radians[:, 0], radians[:, 1]
        h = (
            np.sin((lat[None, :] - lat[:, None]) / 2) ** 2
            + np.cos(lat[:, None]) * np.cos(lat[None, :]) * np.sin((lon[None, :] - lon[:, None]) / 2) ** 2
        )
        metres = 2 * 6371008.8 * np.arcsin(np.sqrt(np.clip(h, 0.0, 1.0)))
        return metres * self.detour / self.speed_ms


def _lonlat(points: Sequence[Point]) -> list[tuple[float, float]]:
    return [(lon, lat) for lat, lon in points]


def _matrix(rows: Any) -> list[list[float | None]]:
    return [[None if value is None else float(value) for value in row] for row in rows]


def _seconds(rows: Any, size: int) -> np.ndarray:
    """A table answer's rows (null where no route) as a float64 array with NaN for null, read
    row by row from the engine's own sequences (no Python list per row)."""
    if not size:
        return np.zeros((0, 0))
    # Taking the rows out first, then each row's values, is the fastest way measured through the
    # bindings' sequences (1,000 x 1,000: 0.13 s; np.array on the answer: 0.6 s).
    return np.vstack([np.fromiter(row, np.float64, size) for row in list(rows)])


class EmbeddedOSRM:
    """OSRM in-process (osrm-bindings) over the data built by `appliance routing build`.

    Contraction hierarchies (CH) when the data has them: a many-to-many table of 1,000 points
    takes about a tenth of what the multi-level (MLD) search needs, and routes are the same
    shortest paths. Data built before CH was added (MLD only) is still served, with MLD."""

    name = "osrm-embedded"

    def __init__(self, osrm_file: Path) -> None:
        self.osrm_file = Path(osrm_file)
        self._engine: Any = None
        self._lock = threading.Lock()
        self._stopped = False
        self.loaded_from: Path | None = None  # the build folder the engine was loaded from

    @property
    def built(self) -> bool:
        return (
            self.osrm_file.with_suffix(".osrm.properties").exists()
            or Path(str(self.osrm_file) + ".properties").exists()
        )

    def _get(self) -> Any:
        if self._stopped:
            raise RoutingUnavailable("the embedded routing engine is stopped")
        # `routing build` switches routing/current to a new folder when it completes: a running
        # server loads the new data on its next request.
        folder = self.osrm_file.parent.resolve()
        if self._engine is None or folder != self.loaded_from:
            with self._lock:
                if self._engine is None or folder != self.loaded_from:
                    if not self.built:
                        raise RoutingUnavailable("no road data built")
                    import osrm

                    storage = folder / self.osrm_file.name
                    algorithm = "CH" if Path(str(storage) + ".hsgr").exists() else "MLD"
                    try:
                        self._engine = osrm.OSRM(
                            storage_config=str(storage), algorithm=algorithm, use_shared_memory=False
                        )
                    except Exception as exc:  # the bindings raise plain exceptions on bad data
                        raise RoutingUnavailable(f"cannot load road data: {exc}") from exc
                    self.loaded_from = folder
                    log.info("road data loaded from %s (%s)", folder, algorithm)
        return self._engine

    def stop(self) -> None:
        """Release the engine; calls answer RoutingUnavailable until start()."""
        with self._lock:
            self._stopped = True
            self._engine = None
            self.loaded_from = None

    def start(self) -> None:
        with self._lock:
            self._stopped = False

    def route(self, points: Sequence[Point]) -> RouteResult:
        import osrm

        params = osrm.RouteParameters(coordinates=_lonlat(points), geometries="polyline6", overview="full")
        try:
            answer = self._get().Route(params)
        except RoutingUnavailable:
            raise
        except Exception as exc:
            raise RoutingUnavailable(f"route failed: {exc}") from exc
        if answer["code"] != "Ok" or not answer["routes"]:
            raise RoutingUnavailable(f"route answered {answer['code']}")
        return _osrm_route(answer["routes"][0])

    def table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult:
        import osrm

        coordinates = _lonlat(list(sources) + list(destinations))
        params = osrm.TableParameters(
            coordinates=coordinates,
            sources=list(range(len(sources))),
            destinations=list(range(len(sources), len(coordinates))),
            annotations=["duration", "distance"],
        )
        answer = self._table(params)
        return TableResult(_matrix(answer["durations"]), _matrix(answer["distances"]), "road")

    def durations(self, points: Sequence[Point]) -> np.ndarray:
        import osrm

        # Every point is a source and a destination: one coordinate list, durations only, no hints.
        params = osrm.TableParameters(
            coordinates=_lonlat(points), annotations=["duration"], generate_hints=False
        )
        return _seconds(self._table(params)["durations"], len(points))

    def _table(self, params: Any) -> dict[str, Any]:
        """The engine's answer to a table request, or RoutingUnavailable saying why not."""
        try:
            answer = self._get().Table(params)
        except RoutingUnavailable:
            raise
        except Exception as exc:
            raise RoutingUnavailable(f"table failed: {exc}") from exc
        if answer["code"] != "Ok":
            raise RoutingUnavailable(f"table answered {answer['code']}")
        return answer


def _osrm_route(best: dict[str, Any]) -> RouteResult:
    """A route of an OSRM answer (embedded or served: the same JSON), geometry as polyline6."""
    return RouteResult(
        duration_s=float(best["duration"]),
        distance_m=float(best["distance"]),
        geometry=str(best["geometry"]),
        legs=[(float(leg["duration"]), float(leg["distance"])) for leg in best["legs"]],
        method="road",
    )


class RoadServer:
    """A road engine reached over HTTP by URL: one session, a short connect timeout, and every
    failure to get a JSON answer (refused, timed out, not JSON) is the engine being unavailable."""

    name: str
    label: str  # how an unavailable answer names the server

    def __init__(self, url: str, *, timeout: float = 5.0) -> None:
        self.url = url.rstrip("/") + "/"
        self.timeout = (min(2.0, timeout), timeout)  # connect, read
        self.session = requests.Session()

    def _answer(self, method: str, path: str, **options: Any) -> tuple[requests.Response, Any]:
        try:
            response = self.session.request(method, urljoin(self.url, path), timeout=self.timeout, **options)
            return response, response.json()
        except (requests.RequestException, ValueError) as exc:
            raise RoutingUnavailable(f"{self.label}: {exc}") from exc


class RemoteOSRM(RoadServer):
    """An OSRM server (osrm-routed or compatible) by URL, car profile ``driving``."""

    name = "osrm"
    label = "OSRM server"

    def _get(self, service: str, points: Sequence[Point], params: dict[str, str]) -> dict[str, Any]:
        coords = ";".join(f"{lon:.6f},{lat:.6f}" for lat, lon in points)
        response, body = self._answer("GET", f"{service}/v1/driving/{coords}", params=params)
        if response.status_code != 200 or body.get("code") != "Ok":
            raise RoutingUnavailable(f"OSRM server answered {response.status_code} {body.get('code')}")
        return body

    def route(self, points: Sequence[Point]) -> RouteResult:
        body = self._get("route", points, {"overview": "full", "geometries": "polyline6"})
        return _osrm_route(body["routes"][0])

    def table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult:
        points = list(sources) + list(destinations)
        params = {
            "sources": ";".join(str(i) for i in range(len(sources))),
            "destinations": ";".join(str(i) for i in range(len(sources), len(points))),
            "annotations": "duration,distance",
        }
        body = self._get("table", points, params)
        return TableResult(_matrix(body["durations"]), _matrix(body["distances"]), "road")

    def durations(self, points: Sequence[Point]) -> np.ndarray:
        body = self._get("table", points, {"annotations": "duration"})
        seconds = np.array(body["durations"], dtype=np.float64)
        if seconds.shape != (len(points), len(points)):
            raise RoutingUnavailable("OSRM server: the matrix does not match the request's size")
        return seconds


class Valhalla(RoadServer):
    """A Valhalla server by URL (auto costing); shapes are already precision 6."""

    name = "valhalla"
    label = "Valhalla server"

    def _post(self, service: str, payload: dict[str, Any]) -> dict[str, Any]:
        response, body = self._answer("POST", service, json=payload)
        if response.status_code != 200:
            raise RoutingUnavailable(f"Valhalla server answered {response.status_code}")
        return body

    def route(self, points: Sequence[Point]) -> RouteResult:
        try:
            return self._route(points)
        except (KeyError, TypeError, ValueError, IndexError) as exc:  # an answer without `trip`…
            raise RoutingUnavailable(
                f"Valhalla server: malformed route answer ({type(exc).__name__}: {exc})"
            ) from exc

    def _route(self, points: Sequence[Point]) -> RouteResult:
        body = self._post(
            "route",
            {
                "locations": [{"lat": lat, "lon": lon} for lat, lon in points],
                "costing": "auto",
                "units": "km",
            },
        )
        trip = body["trip"]
        shape: list[tuple[float, float]] = []
        for leg in trip["legs"]:
            part = polyline.decode(leg["shape"], 6)
            shape.extend(part if not shape else part[1:])
        return RouteResult(
            duration_s=float(trip["summary"]["time"]),
            distance_m=float(trip["summary"]["length"]) * 1000,
            geometry=polyline.encode(shape, 6),
            legs=[
                (float(leg["summary"]["time"]), float(leg["summary"]["length"]) * 1000)
                for leg in trip["legs"]
            ],
            method="road",
        )

    def table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult:
        try:
            result = self._table(sources, destinations)
        except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
            raise RoutingUnavailable(
                f"Valhalla server: malformed matrix answer ({type(exc).__name__}: {exc})"
            ) from exc
        if len(result.durations) != len(sources) or any(
            len(row) != len(destinations) for row in result.durations
        ):
            raise RoutingUnavailable("Valhalla server: the matrix does not match the request's size")
        return result

    def durations(self, points: Sequence[Point]) -> np.ndarray:
        return np.array(self.table(points, points).durations, dtype=np.float64)

    def _table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult:
        body = self._post(
            "sources_to_targets",
            {
                "sources": [{"lat": lat, "lon": lon} for lat, lon in sources],
                "targets": [{"lat": lat, "lon": lon} for lat, lon in destinations],
                "costing": "auto",
                "units": "km",
            },
        )
        rows = body["sources_to_targets"]
        return TableResult(
            durations=[[c.get("time") for c in row] for row in rows],
            distances=[
                [None if c.get("distance") is None else c["distance"] * 1000 for c in row] for row in rows
            ],
            method="road",
        )


class Router:
    """The configured road engine, with the straight-line fallback when it cannot answer.

    ``retry_after`` (seconds) spares requests the wait for an engine that just failed: a server
    that times out would otherwise cost every estimate its timeout. The health probe asks the
    engine directly, so it sees the engine come back at once.
    """

    def __init__(
        self, engine: RoadEngine | None, fallback: StraightLine, *, retry_after: float = 0.0
    ) -> None:
        self.engine = engine
        self.fallback = fallback
        self.retry_after = retry_after
        self._resting_until = 0.0

    def _engine(self) -> RoadEngine | None:
        if self.engine is None or time.monotonic() < self._resting_until:
            return None
        return self.engine

    def _failed(self, what: str, exc: RoutingUnavailable) -> None:
        if self.retry_after:
            self._resting_until = time.monotonic() + self.retry_after
        log.warning("road %s unavailable, using straight lines: %s", what, exc)

    def route(self, points: Sequence[Point]) -> RouteResult:
        engine = self._engine()
        if engine is not None:
            try:
                return engine.route(points)
            except RoutingUnavailable as exc:
                self._failed("route", exc)
        return self.fallback.route(points)

    def table(self, sources: Sequence[Point], destinations: Sequence[Point]) -> TableResult:
        engine = self._engine()
        if engine is not None:
            try:
                result = engine.table(sources, destinations)
                if all(v is not None for row in result.durations for v in row):
                    return result
                # Unreachable pairs: fill them from the fallback, but the answer stays "road".
                line = self.fallback.table(sources, destinations)
                return TableResult(
                    durations=[
                        [v if v is not None else line.durations[i][j] for j, v in enumerate(row)]
                        for i, row in enumerate(result.durations)
                    ],
                    distances=[
                        [v if v is not None else line.distances[i][j] for j, v in enumerate(row)]
                        for i, row in enumerate(result.distances)
                    ],
                    method="road",
                )
            except RoutingUnavailable as exc:
                self._failed("matrix", exc)
        return self.fallback.table(sources, destinations)

    def duration_matrix(self, points: Sequence[Point]) -> DurationMatrix:
        """Seconds between every pair of ``points`` from one table request to the engine;
        unreachable pairs are filled from the straight-line estimate (the answer stays "road")."""
        engine = self._engine()
        if engine is not None:
            try:
                seconds = engine.durations(points)
                missing = np.isnan(seconds)
                if missing.any():
                    seconds = np.where(missing, self.fallback.durations(points), seconds)
                    return DurationMatrix(seconds, "road", missing)
                return DurationMatrix(seconds, "road")
            except RoutingUnavailable as exc:
                self._failed("matrix", exc)
        return DurationMatrix(self.fallback.durations(points), "straight_line")
