"""`appliance map build`: the real tilemaker turns the extract into <data_dir>/tiles.mbtiles."""

from __future__ import annotations

import datetime
import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.dispatch.tiles import build as tiles_build
from tests.geo_fixtures import ROAD_A, ROAD_B
from tests.map_fixtures import metadata, stored_tiles

needs_tilemaker = pytest.mark.skipif(
    shutil.which("tilemaker") is None,
    reason="tilemaker is not installed (Debian package tilemaker; .ci/system-packages.sh installs it)",
)


def run_build(pbf: Path, data_dir: Path, *extra: str):
    return CliRunner().invoke(cli, ["map", "build", "--pbf", str(pbf), "--data-dir", str(data_dir), *extra])


@needs_tilemaker
def test_map_build_writes_the_tiles_reports_the_contract_json_and_shows_progress(
    tmp_path: Path, yerevan_pbf: Path
) -> None:
    data_dir = tmp_path / "data"
    result = run_build(yerevan_pbf, data_dir, "--json")
    assert result.exit_code == 0, result.output

    info = json.loads(result.stdout)["tiles"]
    assert set(info) == {"source", "builtAt", "seconds", "minZoom", "maxZoom"}
    assert info["source"] == str(yerevan_pbf.resolve())
    assert datetime.datetime.fromisoformat(info["builtAt"].replace("Z", "+00:00")).tzinfo is not None
    assert isinstance(info["seconds"], float | int) and info["seconds"] >= 0
    assert (info["minZoom"], info["maxZoom"]) == (0, 14)
    assert "tilemaker: Reading .pbf" in result.stderr
    assert "map tiles ready" in result.stderr

    mbtiles = data_dir / "tiles.mbtiles"
    meta = metadata(mbtiles)
    assert (int(meta["minzoom"]), int(meta["maxzoom"])) == (info["minZoom"], info["maxZoom"])
    assert meta["appliance:builtAt"] == info["builtAt"]
    assert {z for z, *_ in stored_tiles(mbtiles)} == set(range(15))
    assert sorted(p.name for p in data_dir.iterdir()) == ["tiles.mbtiles"]  # no temporary file left


def test_the_built_metadata_bounds_hold_the_translated_roads(map_tiles: Path) -> None:
    west, south, east, north = (float(v) for v in metadata(map_tiles)["bounds"].split(","))
    for lat, lon in (ROAD_A, ROAD_B):
        assert west < lon < east and south < lat < north
    lon, lat, zoom = (float(v) for v in metadata(map_tiles)["center"].split(","))
    assert west < lon < east and south < lat < north and zoom == 14


@needs_tilemaker
def test_an_extract_tilemaker_cannot_read_fails_in_one_line_and_keeps_the_previous_tiles(
    tmp_path: Path, yerevan_pbf: Path, map_tiles: Path
) -> None:
    data_dir = tmp_path / "data"
    data_dir.mkdir()
    shutil.copy(map_tiles, data_dir / "tiles.mbtiles")
    before = (data_dir / "tiles.mbtiles").read_bytes()
    truncated = tmp_path / "truncated.osm.pbf"
    truncated.write_bytes(yerevan_pbf.read_bytes()[:300])  # a real header, then nothing

    result = run_build(truncated, data_dir)

    assert result.exit_code == 1
    assert result.stdout == ""
    # Progress lines, then the error on one line with tilemaker's own last words.
    error = result.stderr.strip().splitlines()[-1]
    assert error.startswith("error: tilemaker failed: ")
    assert "decompression" in error
    assert (data_dir / "tiles.mbtiles").read_bytes() == before
    assert sorted(p.name for p in data_dir.iterdir()) == ["tiles.mbtiles"]


def test_a_file_that_is_not_an_extract_is_refused_in_one_line_without_a_file(tmp_path: Path) -> None:
    bad = tmp_path / "bad.osm.pbf"
    bad.write_bytes(b"nope")
    result = run_build(bad, tmp_path / "data")
    assert result.exit_code == 1
    assert result.stderr == f"error: {bad}: not an OpenStreetMap extract (.osm.pbf)\n"
    assert not (tmp_path / "data" / "tiles.mbtiles").exists()


def test_a_missing_extract_is_refused_in_one_line_as_a_usage_error(tmp_path: Path) -> None:
    result = run_build(tmp_path / "missing.osm.pbf", tmp_path / "data")
    assert result.exit_code == 2
    assert result.stderr.startswith(
        f"error: Invalid value for '--pbf': File '{tmp_path / 'missing.osm.pbf'}' does not exist."
    )
    assert result.stderr.endswith(" map build --help')\n") and result.stderr.count("\n") == 1


def test_without_tilemaker_the_build_says_which_package_to_install(
    tmp_path: Path, yerevan_pbf: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(tiles_build.shutil, "which", lambda _name: None)
    result = run_build(yerevan_pbf, tmp_path / "data", "--json")
    assert result.exit_code == 1
    assert result.stderr == "error: tilemaker is not installed (Debian package tilemaker)\n"
    assert result.stdout == ""
