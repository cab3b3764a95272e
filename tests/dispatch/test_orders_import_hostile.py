"""Hostile workbooks (issue 41): a crafted .xlsx is a 4xx Problem and never stops a serving process,
a zip that lies about its sizes is refused without being inflated past the cap, and a normal
workbook reads exactly as calamine reads it in process."""

from __future__ import annotations

import datetime
import io
import json
import resource
import stat
import struct
import subprocess
import sys
import threading
import zipfile
from pathlib import Path

import pytest
import requests
from click.testing import CliRunner
from python_calamine import CalamineWorkbook

from appliance.cli import cli
from appliance.common.problems import PayloadTooLarge
from appliance.dispatch.orders import sheets, workbook_process
from tests.conftest import BACKEND, free_port, serve_command
from tests.dispatch.import_helpers import (
    HEADER,
    SHEET_NS,
    far_apart_xlsx,
    handmade_xlsx,
    post_file,
    repeated_ods,
    row,
    xlsx_bytes,
)

ROOT = Path(__file__).resolve().parents[2]
XLSX = "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet"


def _wait(url: str, process: subprocess.Popen) -> None:
    for _ in range(600):
        if process.poll() is not None:
            raise AssertionError(process.stderr.read() if process.stderr else "server exited")
        try:
            requests.get(url, timeout=30)
            return
        except (requests.ConnectionError, requests.Timeout):
            threading.Event().wait(0.1)  # several serving processes: the port accepts before they serve
    raise AssertionError(f"{url} did not answer")


@pytest.mark.server
def test_a_crafted_workbook_never_stops_a_serving_process(settings) -> None:
    """The pen test's upload, repeated against a real `appliance serve`: every upload is a 413
    Problem, nothing is imported, and every request to either port meanwhile is answered (each
    upload is followed by a full round of requests to both)."""
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    dispatcher = make_member(create_app(settings), make_company(), "dispatcher")
    dispatch_port, engine_port = free_port(), free_port()
    process = subprocess.Popen(
        serve_command(settings.data_dir, dispatch_port, engine_port),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    dispatch, engine = f"http://127.0.0.1:{dispatch_port}", f"http://127.0.0.1:{engine_port}"
    probes = [(f"{dispatch}/orders", dispatcher.headers), (f"{engine}/health/live", {})]
    rounds = threading.Semaphore(0)
    unanswered: list[str] = []
    done = threading.Event()

    def probe() -> None:
        while not done.is_set():
            for url, headers in probes:
                try:
                    requests.get(url, headers=headers, timeout=30).raise_for_status()
                except requests.RequestException as exc:
                    unanswered.append(f"{url}: {exc!r}")
            rounds.release()

    try:
        _wait(f"{engine}/health/live", process)
        _wait(f"{dispatch}/openapi.json", process)
        prober = threading.Thread(target=probe)
        prober.start()
        try:
            for dimension in (True, False, True, False, False):  # declared, then only in its cells
                response = requests.post(
                    f"{dispatch}/orders/import",
                    files={"file": ("orders.xlsx", far_apart_xlsx(dimension=dimension), XLSX)},
                    headers=dispatcher.headers,
                    timeout=120,
                )
                assert response.status_code == 413, response.text
                assert response.headers["Content-Type"].startswith("application/problem+json")
                detail = response.json()["detail"]
                assert "is it really a day's orders" in detail or "A1:XFD1048576" in detail, detail
                for _ in range(2):  # a round that began after the upload ended
                    assert rounds.acquire(timeout=120)
            orders = requests.get(f"{dispatch}/orders", headers=dispatcher.headers, timeout=30)
            assert orders.status_code == 200 and orders.json()["orders"] == []
        finally:
            done.set()
            prober.join()
    finally:
        process.terminate()
        _out, log = process.communicate(timeout=60)
    assert unanswered == []
    assert "exited (status" not in log, log  # no serving process died and was replaced


def test_a_sheet_declaring_the_whole_grid_is_413_before_any_reader_starts() -> None:
    with pytest.raises(PayloadTooLarge, match="range A1:XFD1048576 is larger than an import reads"):
        sheets.read_rows(far_apart_xlsx(dimension=True))


def test_cells_far_apart_with_no_declared_range_are_413_and_the_process_lives_on() -> None:
    """No <dimension>: the reader's child asks for 512 GB and dies of it, not this process."""
    with pytest.raises(PayloadTooLarge, match="more memory to read than an import may use"):
        sheets.read_rows(far_apart_xlsx(dimension=False))


def test_a_workbook_whose_shared_strings_multiply_past_the_limits_is_413() -> None:
    """One 2,000-character shared string named by 24 columns of 10,000 rows: 480 M characters
    from a 300 KB file, built by the reader before any row is counted."""
    cells = "".join(
        f'<row r="{r}">'
        + "".join(f'<c r="{chr(65 + c)}{r}" t="s"><v>0</v></c>' for c in range(24))
        + "</row>"
        for r in range(1, 10_001)
    )
    data = handmade_xlsx(cells, dimension="A1:X10000", shared=["n" * 2000])
    assert len(data) < sheets.MAX_BYTES
    with pytest.raises(PayloadTooLarge, match=r"more memory to read|more text than an import may"):
        sheets.read_rows(data)


def test_an_ods_whose_repeated_cells_fill_twenty_million_cells_is_413() -> None:
    """Repeat counts in a 900-byte OpenDocument file: 2.6 GB and 26 s when read in process."""
    data = repeated_ods(10_000, 2_000)
    assert len(data) < 1000
    with pytest.raises(PayloadTooLarge, match=r"more memory to read|At most 256 columns"):
        sheets.read_rows(data)


def test_a_reader_past_its_time_is_killed_and_the_upload_is_413(monkeypatch) -> None:
    """No time at all: the child is killed before it answers, whatever it was doing."""
    monkeypatch.setattr(workbook_process, "WALL_SECONDS", 0)
    with pytest.raises(PayloadTooLarge, match="takes too long to read"):
        sheets.read_rows(xlsx_bytes([HEADER, list(row(1).values())]))


def _lying_zip(real_bytes: int) -> bytes:
    """A workbook whose shared strings declare 2,000 bytes and inflate to ``real_bytes``."""
    base = xlsx_bytes([HEADER, list(row(1).values())])
    source = zipfile.ZipFile(io.BytesIO(base))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=1) as archive:
        for info in source.infolist():
            archive.writestr(info.filename, source.read(info))
        with archive.open("xl/sharedStrings.xml", "w") as part:
            part.write(f'<sst xmlns="{SHEET_NS}">'.encode())
            for _ in range(real_bytes // (1024 * 1024)):
                part.write(b" " * (1024 * 1024))
            part.write(b"</sst>")
    data = bytearray(out.getvalue())
    at = data.find(b"PK\x01\x02")  # the central directory: every entry's uncompressed size lies
    while at >= 0:
        name_length = struct.unpack_from("<H", data, at + 28)[0]
        if data[at + 46 : at + 46 + name_length] == b"xl/sharedStrings.xml":
            struct.pack_into("<I", data, at + 24, 2000)
            local = struct.unpack_from("<I", data, at + 42)[0]
            struct.pack_into("<I", data, local + 22, 2000)  # and so does its local header
        at = data.find(b"PK\x01\x02", at + 4)
    return bytes(data)


def test_a_zip_whose_declared_sizes_lie_is_413_without_being_inflated_past_the_cap(
    dispatch_client, dispatcher
) -> None:
    data = _lying_zip(300 * 1024 * 1024)
    declared = sum(info.file_size for info in zipfile.ZipFile(io.BytesIO(data)).infolist())
    assert declared < 100_000 and len(data) < sheets.MAX_BYTES
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    response = post_file(dispatch_client, dispatcher, data)
    assert response.status_code == 413, response.json
    assert response.mimetype == "application/problem+json"
    assert "unpacks to more than 100 MB" in response.json["detail"]
    grown_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - peak
    assert grown_kb < 50 * 1024  # the 300 MB were counted as they came, never held


def test_a_zip_whose_parts_are_not_their_declared_sizes_is_400() -> None:
    with pytest.raises(sheets.BadRequest, match="not the sizes it declares"):
        sheets.read_rows(_lying_zip(1024 * 1024))


def _exact_workbook() -> bytes:
    return xlsx_bytes(
        [
            [*HEADER, "deliveryWindowStart", "deliveryWindowEnd", "floor", "isCod", "noteToCourier"],
            [
                "X-1",
                "Գայանե Պետրոսյան",
                37491123456,
                5000,
                "Աբովյան 1",
                40.18,
                44.51,
                datetime.datetime(2026, 11, 26, 10, 0, 30),
                datetime.date(2026, 11, 27),
                datetime.time(12, 30),
                True,
                'a "quoted"\nnote, ; ',
            ],
            ["X-2", "Анна", "091 22 33 44", 2500.5, None, -0.0, 1e-7, None, None, 4, False, "@not a formula"],
            [],
            ["X-4", "", "", "", "", "", "", datetime.timedelta(hours=3, minutes=15), "", "", "", "x" * 2000],
        ]
    )


def test_a_normal_workbook_is_read_exactly_as_calamine_reads_it_in_process() -> None:
    data = _exact_workbook()
    book = CalamineWorkbook.from_filelike(io.BytesIO(data))
    expected = list(book.get_sheet_by_index(0).iter_rows())
    rows = sheets.read_rows(data)
    assert rows == expected
    assert [[type(cell) for cell in r] for r in rows] == [[type(cell) for cell in r] for r in expected]


def test_the_reader_starts_as_the_frozen_executable_starts_it(monkeypatch, tmp_path) -> None:
    """PyInstaller's executable is cli.py frozen, and sys.executable is that executable: an
    executable that runs cli.py stands for it (no -m, no PYTHONPATH)."""
    executable = tmp_path / "appliance"
    executable.write_text(f'#!/bin/sh\nexec "{sys.executable}" "{ROOT / "cli.py"}" "$@"\n')
    executable.chmod(stat.S_IRWXU)
    monkeypatch.setattr(sys, "frozen", True, raising=False)
    monkeypatch.setattr(sys, "executable", str(executable))
    assert workbook_process.command(_limits())[:2] == [str(executable), "_read-workbook"]
    data = _exact_workbook()
    assert sheets.read_rows(data)[1][0] == "X-1"
    with pytest.raises(PayloadTooLarge, match="more memory"):
        sheets.read_rows(far_apart_xlsx(dimension=False))


def _limits():
    from appliance.dispatch.orders.workbook_child import Limits

    return Limits(max_bytes=1, max_rows=1, max_columns=1, memory_bytes=1, cpu_seconds=1)


@pytest.mark.skipif(BACKEND == "postgres", reason="the command reads the data directory's own databases")
def test_the_command_refuses_a_crafted_workbook_in_one_line(
    dispatch_app, company, settings, tmp_path
) -> None:
    path = tmp_path / "orders.xlsx"
    path.write_bytes(far_apart_xlsx(dimension=False))
    result = CliRunner().invoke(
        cli, ["orders", "import", str(path), "--company", str(company.id), "--data-dir", settings.data_dir]
    )
    assert result.exit_code == 1
    assert "more memory to read than an import may use" in result.output


def test_the_readers_answer_is_plain_json_rows() -> None:
    """What the child writes: one JSON array per row, then the count (nothing a parent would
    execute, unlike a pickle)."""
    from appliance.dispatch.orders.workbook_child import COMMAND, Limits

    limits = Limits(
        max_bytes=sheets.MAX_BYTES, max_rows=10, max_columns=30, memory_bytes=2**30, cpu_seconds=30
    )
    done = subprocess.run(
        workbook_process.command(limits),
        input=xlsx_bytes([["a", "b"], [1, datetime.datetime(2026, 1, 2, 3, 4)]]),
        capture_output=True,
        env=workbook_process.environment(),
        check=True,
    )
    assert COMMAND in workbook_process.command(limits)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert lines == [["a", "b"], [1.0, {"datetime": "2026-01-02T03:04:00"}], {"rows": 2}]
