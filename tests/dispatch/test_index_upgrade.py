"""An install whose address index is the previous release's format (issue 46): the appliance
rebuilds it alone from the extract its road data was built from, one process at a time, logging
it; without that extract the log and the readiness answer name the exact command. The old index is
the previous release's own (tests/data/previous_release/addresses.sqlite, see its README)."""

from __future__ import annotations

import fcntl
import json
import logging
import os
import shutil
import threading
from pathlib import Path

import pytest

from appliance.dispatch.geocoding.build import INDEX_NAME, INDEX_VERSION
from appliance.dispatch.geocoding.search import IndexMissing, search
from appliance.dispatch.geocoding.upgrade import (
    LOCK_NAME,
    index_format,
    readiness,
    rebuild_command,
    upgrade_stale_index,
)
from tests.dispatch.test_geo_search import write_extract

OLD_INDEX = Path(__file__).resolve().parents[1] / "data" / "previous_release" / "addresses.sqlite"


def _install(routing: Path, source: Path, files_from: Path | None = None) -> None:
    """routing/current → a build folder holding the previous release's index and its build.json."""
    build = routing / "build-20261127T120000000000"
    if files_from is not None:  # the road data itself, so that the routing check reaches the index
        shutil.copytree(files_from, build, symlinks=True)
    else:
        build.mkdir(parents=True)
    shutil.copyfile(OLD_INDEX, build / INDEX_NAME)
    info = {"source": str(source), "builtAt": "2026-11-27T12:00:00.000Z", "addressEntries": 14}
    (build / "build.json").write_text(json.dumps(info))
    (routing / "current").unlink(missing_ok=True)
    (routing / "current").symlink_to(build.name, target_is_directory=True)


@pytest.fixture
def old_install(tmp_path: Path) -> Path:
    data_dir = tmp_path / "data"
    _install(data_dir / "routing", write_extract(tmp_path / "streets.osm.pbf"))
    return data_dir


def test_the_previous_releases_index_is_refused_by_the_search(old_install: Path) -> None:
    assert index_format(old_install) == 0 < INDEX_VERSION
    with pytest.raises(IndexMissing):
        search(old_install, "Abovyan 10")


def test_an_old_index_is_rebuilt_from_its_recorded_extract_and_the_rebuild_is_logged(
    old_install: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.WARNING, "appliance.routing")
    outcome = upgrade_stale_index(old_install)
    assert outcome.state == "rebuilt", outcome
    assert index_format(old_install) == INDEX_VERSION
    assert search(old_install, "Abovyan 10")[0].label == "Աբովյան փողոց 10"
    assert readiness(old_install) is None
    logged = [r.getMessage() for r in caplog.records]
    assert any("(format 0; this version reads" in m and "rebuilding it from" in m for m in logged)
    assert any("rebuilt from" in m and "entries" in m for m in logged)
    # Once current, nothing more is done.
    assert upgrade_stale_index(old_install).state == "current"


def test_while_another_process_holds_the_lock_the_index_is_left_to_it(old_install: Path) -> None:
    fd = os.open(old_install / "routing" / LOCK_NAME, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        assert upgrade_stale_index(old_install).state == "rebuilding"
        assert index_format(old_install) == 0
        assert "being rebuilt" in (readiness(old_install) or "")
    finally:
        os.close(fd)
    assert upgrade_stale_index(old_install).state == "rebuilt"


def test_without_its_extract_the_log_says_the_exact_command(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    data_dir = tmp_path / "data"
    _install(data_dir / "routing", tmp_path / "gone" / "armenia.osm.pbf")
    caplog.set_level(logging.WARNING, "appliance.routing")
    command = f"appliance routing build --pbf {tmp_path}/gone/armenia.osm.pbf --data-dir {data_dir}"
    assert rebuild_command(data_dir) == command
    outcome = upgrade_stale_index(data_dir)
    assert outcome.state == "no_source" and f"`{command}`" in outcome.detail
    assert f"the extract it was built from, {tmp_path}/gone/armenia.osm.pbf, is not there" in outcome.detail
    assert any(command in r.getMessage() for r in caplog.records)
    assert index_format(data_dir) == 0  # nothing half-done


def test_without_its_extract_the_readiness_answer_names_the_command(
    data_dir: Path, road_data: Path, dispatch_app, tmp_path: Path
) -> None:
    # The session's road data copied (never changed in place: other tests share it), old index in.
    built = (road_data / "current").resolve()
    _install(data_dir / "routing", tmp_path / "gone.osm.pbf", files_from=built)
    answer = dispatch_app.test_client().get("/healthz")
    assert answer.status_code == 503
    routing = answer.json["checks"]["routing"]
    assert routing["status"] == "not_built"
    command = f"appliance routing build --pbf {tmp_path}/gone.osm.pbf --data-dir {data_dir}"
    assert f"`{command}`" in routing["detail"]


def test_the_first_search_on_an_old_index_answers_503_and_starts_the_rebuild(
    data_dir: Path, tmp_path: Path, dispatch_client, dispatcher
) -> None:
    _install(data_dir / "routing", write_extract(tmp_path / "streets.osm.pbf"))
    answer = dispatch_client.get("/geo/search?q=Abovyan%2010", headers=dispatcher.headers)
    assert answer.status_code == 503
    for thread in [t for t in threading.enumerate() if t.name == "index-upgrade"]:
        thread.join()
    assert index_format(data_dir) == INDEX_VERSION
    answer = dispatch_client.get("/geo/search?q=Abovyan%2010", headers=dispatcher.headers)
    assert answer.status_code == 200 and answer.json["results"][0]["label"] == "Աբովյան փողոց 10"
