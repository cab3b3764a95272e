"""The Valhalla client against a real Valhalla: pyvalhalla's own valhalla_build_tiles and
valhalla_service on the test extract (Monaco's roads moved onto Yerevan), on a loopback port."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests

from appliance.dispatch.routing.engines import Router, StraightLine, Valhalla
from tests.conftest import free_port
from tests.geo_fixtures import ROAD_A, ROAD_B, ROAD_C


@pytest.fixture(scope="module")
def valhalla_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    valhalla = pytest.importorskip("valhalla", reason="pyvalhalla is a test dependency (requirements.lock)")
    from tests.geo_fixtures import DATA, translate_extract

    work = tmp_path_factory.mktemp("valhalla")
    pbf = translate_extract(DATA / "monaco.osm.pbf", work / "yerevan.osm.pbf")
    port = free_port()
    config = subprocess.run(
        [
            sys.executable,
            "-m",
            "valhalla.valhalla_build_config",
            "--mjolnir-tile-dir",
            str(work / "tiles"),
            "--mjolnir-tile-extract",
            str(work / "tiles.tar"),
            "--mjolnir-timezone",
            str(work / "tz.sqlite"),
            "--mjolnir-admin",
            str(work / "admins.sqlite"),
            "--httpd-service-listen",
            f"tcp://127.0.0.1:{port}",
            "--httpd-service-loopback",
            f"ipc://{work}/loopback",
            "--httpd-service-interrupt",
            f"ipc://{work}/interrupt",
        ],
        check=True,
        capture_output=True,
        text=True,
    ).stdout
    (work / "valhalla.json").write_text(config)
    binaries = Path(valhalla.__file__).parent / "bin"
    subprocess.run(
        [str(binaries / "valhalla_build_tiles"), "-c", str(work / "valhalla.json"), str(pbf)],
        check=True,
        capture_output=True,
        cwd=work,
    )
    service = subprocess.Popen(
        [str(binaries / "valhalla_service"), str(work / "valhalla.json"), "1"],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        cwd=work,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                requests.get(f"{url}/status", timeout=1)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline and service.poll() is None, (
                    "valhalla_service did not start"
                )
                time.sleep(0.1)
        yield url
    finally:
        service.kill()  # valhalla_service does not stop on SIGTERM while its workers wait
        service.wait(10)


def test_a_real_valhalla_routes_on_the_roads_and_answers_a_matrix(valhalla_url: str) -> None:
    router = Router(Valhalla(valhalla_url), StraightLine(1.3, 25))
    route = router.route([ROAD_A, ROAD_B])
    assert route.method == "road" and route.distance_m > 500 and route.duration_s > 30
    assert len(route.legs) == 1 and route.geometry
    table = router.table([ROAD_A, ROAD_B, ROAD_C], [ROAD_A, ROAD_B, ROAD_C])
    assert table.method == "road"
    assert all(table.durations[i][i] == 0 for i in range(3))
    assert table.durations[0][1] > 0 and table.distances[0][1] > 0


def test_the_dispatch_service_estimates_on_a_real_valhalla(settings, valhalla_url: str) -> None:
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    app = create_app(settings.replace(routing_engine="valhalla", routing_url=valhalla_url))
    client = app.test_client()
    member = make_member(app, make_company("Arev"), "dispatcher")
    body = {"coordinates": [{"lat": ROAD_A[0], "lon": ROAD_A[1]}, {"lat": ROAD_B[0], "lon": ROAD_B[1]}]}
    answer = client.post("/geo/route", json=body, headers=member.headers)
    assert answer.status_code == 200, answer.json
    assert answer.json["method"] == "road" and answer.json["routes"][0]["distance"] > 500
