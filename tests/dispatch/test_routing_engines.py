"""Road routing over real roads (Monaco's network moved onto Yerevan), and the fallback."""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import numpy as np
import polyline
import pytest
import requests
from click.testing import CliRunner

from appliance.cli import cli
from appliance.dispatch.routing.build import DATA_NAME, osrm_home
from appliance.dispatch.routing.engines import (
    EmbeddedOSRM,
    RemoteOSRM,
    Router,
    RoutingUnavailable,
    StraightLine,
    haversine_m,
)
from appliance.dispatch.routing.setup import routing_probe
from tests.conftest import free_port
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C


@pytest.fixture
def embedded(road_data: Path) -> EmbeddedOSRM:
    return EmbeddedOSRM(road_data / "current" / DATA_NAME)


def test_the_embedded_engine_answers_a_route_on_real_roads(embedded: EmbeddedOSRM) -> None:
    result = embedded.route([ROAD_A, ROAD_B])
    assert result.method == "road"
    assert result.distance_m > haversine_m(ROAD_A, ROAD_B)  # roads are never shorter than the crow flies
    assert result.duration_s > 0
    shape = polyline.decode(result.geometry, 6)
    assert haversine_m(shape[0], ROAD_A) < 200
    assert haversine_m(shape[-1], ROAD_B) < 200
    assert len(result.legs) == 1


def test_one_way_streets_make_the_matrix_asymmetric(embedded: EmbeddedOSRM) -> None:
    table = embedded.table([ROAD_A, ROAD_B, ROAD_C], [ROAD_A, ROAD_B, ROAD_C])
    assert table.method == "road"
    assert [table.durations[i][i] for i in range(3)] == [0.0, 0.0, 0.0]
    assert table.durations[0][1] != table.durations[1][0]
    legs = embedded.route([ROAD_A, ROAD_C, ROAD_B]).legs
    assert legs[0][0] == pytest.approx(table.durations[0][2], rel=0.05)


def test_a_stopped_engine_hands_over_to_straight_lines_and_health_reports_it(embedded: EmbeddedOSRM) -> None:
    router = Router(embedded, StraightLine(1.4, 25.0))
    assert router.route([ROAD_A, ROAD_B]).method == "road"
    assert routing_probe(router)().status == "pass"
    embedded.stop()
    fallback = router.route([ROAD_A, ROAD_B])
    assert fallback.method == "straight_line"
    assert fallback.distance_m == pytest.approx(haversine_m(ROAD_A, ROAD_B) * 1.4)
    assert router.table([ROAD_A], [ROAD_B]).method == "straight_line"
    check = routing_probe(router)()
    assert check.status == "fail"
    embedded.start()
    assert router.route([ROAD_A, ROAD_B]).method == "road"


def test_healthz_reports_routing_degraded_when_the_engine_stops(
    routed_data_dir, settings, monkeypatch
) -> None:
    from appliance.common import health
    from appliance.dispatch.app import create_app

    app = create_app(settings)
    client = app.test_client()
    assert client.get("/healthz").json["checks"]["routing"]["status"] == "pass"
    app.extensions["dispatch"].router.engine.stop()
    later = health.monotonic() + health.CACHE_SECONDS  # the kept result has expired
    monkeypatch.setattr(health, "monotonic", lambda: later)
    body = client.get("/healthz").json
    assert body["checks"]["routing"]["status"] == "fail"
    assert "routing" in body["failing"]


def test_health_says_not_built_before_any_road_data_exists(dispatch_client) -> None:
    assert dispatch_client.get("/healthz").json["checks"]["routing"]["status"] == "not_built"


def test_the_straight_line_estimate_uses_the_detour_factor_and_city_speed() -> None:
    line = StraightLine(detour=1.5, speed_kmh=36.0)
    result = line.route([ROAD_A, ROAD_B])
    assert result.distance_m == pytest.approx(haversine_m(ROAD_A, ROAD_B) * 1.5)
    assert result.duration_s == pytest.approx(result.distance_m / 10.0)
    assert polyline.decode(result.geometry, 6)[0] == pytest.approx(ROAD_A, abs=1e-6)


def test_an_osrm_server_by_url_answers_like_the_embedded_engine(
    road_data: Path, embedded: EmbeddedOSRM
) -> None:
    port = free_port()
    server = subprocess.Popen(
        [
            str(osrm_home() / "bin" / "osrm-routed"),
            "--algorithm",
            "ch",
            "-i",
            "127.0.0.1",
            "-p",
            str(port),
            str(road_data / "current" / DATA_NAME),
        ],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        remote = RemoteOSRM(f"http://127.0.0.1:{port}")
        deadline = time.monotonic() + 20
        while True:
            try:
                requests.get(f"http://127.0.0.1:{port}/", timeout=1)
                break
            except requests.ConnectionError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.1)
        result = remote.route([ROAD_A, ROAD_B])
        assert result.method == "road"
        assert result.duration_s == pytest.approx(embedded.route([ROAD_A, ROAD_B]).duration_s, rel=0.01)
        table = remote.table([ROAD_A, ROAD_B], [ROAD_C])
        assert len(table.durations) == 2 and len(table.durations[0]) == 1
    finally:
        server.terminate()
        server.wait(10)


def test_an_unreachable_osrm_server_is_unavailable_not_an_error() -> None:
    remote = RemoteOSRM(f"http://127.0.0.1:{free_port()}", timeout=1)
    with pytest.raises(RoutingUnavailable):
        remote.route([ROAD_A, ROAD_B])


def test_routing_build_reports_its_build_and_a_bad_extract_keeps_the_previous_data(
    tmp_path: Path, yerevan_pbf: Path
) -> None:
    runner = CliRunner()
    result = runner.invoke(
        cli, ["routing", "build", "--pbf", str(yerevan_pbf), "--data-dir", str(tmp_path), "--json"]
    )
    assert result.exit_code == 0, result.output
    info = json.loads(result.stdout)["routing"]
    assert set(info) == {"source", "builtAt", "seconds", "addressEntries"}
    assert info["addressEntries"] > 0  # the address index, from the same extract
    current = (tmp_path / "routing" / "current").resolve()
    broken = tmp_path / "broken.osm.pbf"
    broken.write_bytes(b"not an extract")
    failed = runner.invoke(cli, ["routing", "build", "--pbf", str(broken), "--data-dir", str(tmp_path)])
    assert failed.exit_code == 1
    assert (tmp_path / "routing" / "current").resolve() == current
    assert EmbeddedOSRM(current / DATA_NAME).route([ROAD_A, ROAD_B]).method == "road"
    assert len(list((tmp_path / "routing").glob("build-*"))) == 1


def test_a_running_engine_loads_new_road_data_once_a_build_completes(
    tmp_path: Path, yerevan_pbf: Path
) -> None:
    from appliance.dispatch.routing.build import build, current_osrm_file

    build(yerevan_pbf, tmp_path, progress=lambda _line: None)
    engine = EmbeddedOSRM(current_osrm_file(tmp_path))
    first = engine.route([ROAD_A, ROAD_B])
    old_folder = engine.loaded_from
    assert old_folder is not None and old_folder.name.startswith("build-")
    build(yerevan_pbf, tmp_path, progress=lambda _line: None)
    again = engine.route([ROAD_A, ROAD_B])
    assert engine.loaded_from is not None and engine.loaded_from != old_folder
    assert engine.loaded_from == (tmp_path / "routing" / "current").resolve()
    assert not old_folder.exists()
    assert again.duration_s == pytest.approx(first.duration_s)


def test_a_failing_routing_server_is_rested_while_health_keeps_asking_it() -> None:
    import http.server
    import threading

    hits: list[str] = []

    class Failing(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            hits.append(self.path)
            body = b'{"code": "InvalidUrl"}'
            self.send_response(500)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Failing)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        router = Router(
            RemoteOSRM(f"http://127.0.0.1:{server.server_address[1]}"),
            StraightLine(1.4, 25.0),
            retry_after=600,
        )
        assert router.route([ROAD_A, ROAD_B]).method == "straight_line"
        assert router.table([ROAD_A], [ROAD_B]).method == "straight_line"
        assert router.route([ROAD_B, ROAD_C]).method == "straight_line"
        assert len(hits) == 1 and hits[0].startswith("/route/v1/driving/")
        assert routing_probe(router)().status == "fail"
        assert len(hits) == 2
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


def test_the_duration_matrix_is_the_engines_table_in_one_numpy_array(embedded: EmbeddedOSRM) -> None:
    points = [ROAD_A, ROAD_B, ROAD_C]
    table = embedded.table(points, points)
    matrix = Router(embedded, StraightLine(1.4, 25.0)).duration_matrix(points)
    assert matrix.method == "road"
    assert matrix.seconds.shape == (3, 3)
    np.testing.assert_allclose(matrix.seconds, np.array(table.durations, dtype=float))


def test_the_straight_line_matrix_matches_its_table_and_stands_in_for_a_stopped_engine(
    embedded: EmbeddedOSRM,
) -> None:
    line = StraightLine(1.4, 25.0)
    points = [ROAD_A, ROAD_B, ROAD_C]
    expected = np.array(line.table(points, points).durations)
    np.testing.assert_allclose(line.durations(points), expected)
    embedded.stop()
    matrix = Router(embedded, line).duration_matrix(points)
    assert matrix.method == "straight_line"
    np.testing.assert_allclose(matrix.seconds, expected)


def test_pairs_the_engine_cannot_route_are_filled_from_straight_lines_and_stay_road() -> None:
    class Partial:
        name = "partial"

        def durations(self, points):
            seconds = np.full((len(points), len(points)), 60.0)
            seconds[0, 1] = np.nan
            return seconds

    line = StraightLine(1.4, 25.0)
    matrix = Router(Partial(), line).duration_matrix([ROAD_A, ROAD_B])  # type: ignore[arg-type]
    assert matrix.method == "road"
    assert matrix.seconds[0, 1] == pytest.approx(line.durations([ROAD_A, ROAD_B])[0, 1])
    assert matrix.seconds[1, 0] == 60.0


def test_road_data_built_before_contraction_hierarchies_is_still_served(
    road_data: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "mld"
    shutil.copytree((road_data / "current").resolve(), folder)
    for hierarchy in folder.glob("*.hsgr"):
        hierarchy.unlink()
    for tool in ("osrm-partition", "osrm-customize"):
        command = [str(osrm_home() / "bin" / tool), str(folder / DATA_NAME)]
        subprocess.run(command, check=True, capture_output=True)
    engine = EmbeddedOSRM(folder / DATA_NAME)
    assert engine.route([ROAD_A, ROAD_B]).method == "road"
    assert engine.durations([ROAD_A, ROAD_B]).shape == (2, 2)
