"""HTTP benchmark from outside: wrk (a C load generator) against the appliance and, in the same
run, against a bare Flask + waitress + SQLite app (bare_app.py, the ceiling of the stack).

Each endpoint is driven for --seconds with --threads wrk threads and --connections connections;
the table prints req/s, p50, p99, max, errors and the share of the bare app's figure (GET endpoints
against the bare GET; the GPS batch against the bare batch insert, in points per second; signed
payouts against the bare GET). The bare app is measured right before and right after each set of
appliance rows and the mean of the two is the 100 % (the load drifts on a shared machine). Every
run follows an unmeasured warm-up of --warmup seconds, the bare app's too, and the appliance is
driven only once serve has said "listening", which it says when every serving process serves.

    python bench/http/run.py [--seconds 8] [--warmup 2] [--processes 1,2,4] [--only me,track]

Data: a company with a depot, a dispatcher and a courier on shift with a fix, a day of 2,000
orders, a second company with a day of one order, a tracking link for an order on its way, and an
engine operator with pre-signed payout requests that were never sent (replays are refused by
design, so each request is signed once).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE.parent))

import requests  # noqa: E402
from support import free_port  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common import clock  # noqa: E402
from appliance.common.db import connection, write_transaction  # noqa: E402
from appliance.demo import COURIER_AT, SAMPLE_STREETS  # noqa: E402
from appliance.dispatch.app import create_app as create_dispatch_app  # noqa: E402
from appliance.dispatch.auth.sessions import start_session  # noqa: E402
from appliance.dispatch.db import database  # noqa: E402
from appliance.dispatch.models import Company, Courier, Depot, Membership, User  # noqa: E402
from appliance.dispatch.routing import build as routing  # noqa: E402
from appliance.engine.app import create_app as create_engine_app  # noqa: E402
from appliance.engine.auth.operators import create_operator  # noqa: E402
from appliance.engine.protocol import canonical_string, sign_request  # noqa: E402
from appliance.settings import load_settings  # noqa: E402

LUA = HERE / "lua"
ORDERS_IN_BIG_DAY = 2000


@dataclass
class Seeded:
    dispatcher: str  # access tokens
    courier: str
    small_dispatcher: str
    day: str
    track_token: str
    operator_id: str
    secret: str


def _company(name: str, settings, master_key: bytes, *, with_courier: bool) -> tuple[str, str | None, int]:
    now = clock.now()
    company = Company.create(name=name, created_at=now)
    Depot.create(
        company=company,
        name="Depot",
        address="Yerevan",
        lat=40.1800,
        lon=44.4950,
        is_default=True,
        created_at=now,
    )
    tokens: dict[str, str] = {}
    courier_id = 0
    for role in ("dispatcher", "courier") if with_courier else ("dispatcher",):
        user = User.create(email=f"{role}@{name.lower()}.am", display_name=f"{role} {name}", created_at=now)
        membership = Membership.create(user=user, company=company, role=role, joined_at=now)
        if role == "courier":
            courier_id = Courier.create(company=company, user=user, display_name="Narek", created_at=now).id
        tokens[role] = start_session(membership, settings, master_key).access_token
    return tokens["dispatcher"], tokens.get("courier"), courier_id


def _order(client, headers: dict[str, str], n: int) -> dict:
    response = client.post(
        "/orders",
        headers=headers,
        json={
            "recipientName": f"Recipient {n}",
            "recipientPhone": "+37400000000",
            "addressLabelHy": f"Address {n}",
            # inside the sample streets (appliance/sample), so that routes run on roads
            "pin": {"lat": 40.176 + (n % 97) * 0.0002, "lon": 44.488 + (n % 89) * 0.0002},
            "amountAmd": 1000 + n,
        },
    )
    assert response.status_code == 201, response.get_json()
    return response.get_json()["order"]


def seed(data: Path) -> Seeded:
    settings = load_settings({"data_dir": str(data), "rate_limits": "off"}, environ={})
    migrate_all(settings)
    routing.build(SAMPLE_STREETS, data, lambda _line: None)  # tracking and ETAs on real roads
    app = create_dispatch_app(settings)
    rt = app.extensions["dispatch"]
    with connection(database), write_transaction(database):
        dispatcher, courier, courier_id = _company("Big", rt.settings, rt.master_key, with_courier=True)
        small, _, _ = _company("Small", rt.settings, rt.master_key, with_courier=False)
    assert courier is not None
    d_headers = {"Authorization": f"Bearer {dispatcher}"}
    c_headers = {"Authorization": f"Bearer {courier}"}
    client = app.test_client()
    assert client.post("/courier/shift/start", headers=c_headers).status_code == 201
    fix = {
        "lat": COURIER_AT[0],
        "lon": COURIER_AT[1],
        "capturedAt": (clock.now() - timedelta(seconds=30)).isoformat(),
    }
    assert client.post("/courier/location", headers=c_headers, json={"points": [fix]}).status_code == 202
    started = time.monotonic()
    orders = [_order(client, d_headers, n) for n in range(ORDERS_IN_BIG_DAY)]
    _order(client, {"Authorization": f"Bearer {small}"}, 0)
    print(f"seeded {ORDERS_IN_BIG_DAY + 1} orders in {time.monotonic() - started:.1f} s", flush=True)
    on_way = orders[0]["id"]
    client.post(f"/orders/{on_way}/status", json={"status": "ready"}, headers=d_headers)
    client.post(f"/orders/{on_way}/assign", json={"courierId": courier_id}, headers=d_headers)
    client.post(f"/courier/orders/{on_way}/status", json={"status": "picked_up"}, headers=c_headers)
    track_token = client.post(f"/orders/{on_way}/tracking", headers=d_headers).get_json()["token"]

    engine = create_engine_app(load_settings({"data_dir": str(data)}, environ={}))
    with engine.app_context():
        operator = create_operator(engine.extensions["engine"].master_key, "op_bench0001")
    return Seeded(
        dispatcher=dispatcher,
        courier=courier,
        small_dispatcher=small,
        day=clock.now().astimezone(clock.YEREVAN).date().isoformat(),
        track_token=track_token,
        operator_id=operator["operatorId"],
        secret=operator["secret"],
    )


def _presign(path: Path, operator_id: str, secret: str, count: int) -> None:
    """Unique payout requests (new payout ids and keys on every call) signed now, one per line;
    the engine admits a timestamp within its signature window, so they are signed just before use."""
    now = int(time.time())
    run = uuid.uuid4().hex[:8]
    with path.open("w") as out:
        for n in range(count):
            key = uuid.uuid4().hex
            body = json.dumps(
                {
                    "payoutId": f"pyo_{run}{n:09d}",
                    "asset": "USDC",
                    "amountMinor": str(1000 + n),
                    "destination": f"0x{0xB0000 + n:040x}",
                },
                separators=(",", ":"),
            )
            timestamp = str(now)
            signature = sign_request(
                secret, canonical_string("POST", "/v1/payouts", timestamp, key, body.encode())
            )
            headers = [
                f"X-Operator-Id: {operator_id}",
                f"X-Timestamp: {timestamp}",
                f"X-Signature: {signature}",
                f"Idempotency-Key: {key}",
                "Content-Type: application/json",
            ]
            out.write("\t".join(["POST", "/v1/payouts", *headers, body]) + "\n")


def measure(
    name: str, url: str, script: str, args, headers=(), env=None, units: int = 1, warmup_env=None
) -> Figure:
    """A warm-up run of ``args.warmup`` seconds whose figures are dropped (each serving process
    prepares its statements and fills its caches on its first requests), then the measured run."""
    if args.warmup > 0:
        wrk(
            name,
            url,
            script,
            args,
            headers,
            warmup_env if warmup_env is not None else env,
            units,
            args.warmup,
        )
    return wrk(name, url, script, args, headers, env, units)


# -- processes ---------------------------------------------------------------------------------------


def _wait_for(url: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    deadline = time.monotonic() + timeout
    while True:
        try:
            requests.get(url, timeout=2)
            return
        except (requests.ConnectionError, requests.Timeout):  # the port accepts before the processes are up
            if time.monotonic() > deadline or process.poll() is not None:
                raise SystemExit(f"{url} did not answer (see the server's log in {log})") from None
            time.sleep(0.2)


def _wait_for_line(text: str, process: subprocess.Popen, log: Path, timeout: float = 90) -> None:
    """Until the server prints ``text`` (with several processes, serve says "listening" once
    every one of them serves: connections opened earlier would all land on the first one up)."""
    deadline = time.monotonic() + timeout
    while text not in log.read_text(errors="replace"):
        if time.monotonic() > deadline or process.poll() is not None:
            raise SystemExit(f"the server did not print {text!r} (see its log in {log})")
        time.sleep(0.1)


def _start(args: list[str], log: Path, env: dict[str, str] | None = None) -> subprocess.Popen:
    # Each server in its own process group, so that stopping it stops all of its processes.
    return subprocess.Popen(
        args,
        stdout=log.open("ab"),
        stderr=subprocess.STDOUT,
        env={**os.environ, **(env or {})},
        start_new_session=True,
    )


def _stop(process: subprocess.Popen) -> None:
    try:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(30)
    except ProcessLookupError:
        pass
    except subprocess.TimeoutExpired:
        os.killpg(process.pid, signal.SIGKILL)


# -- wrk ---------------------------------------------------------------------------------------------


@dataclass
class Figure:
    name: str
    requests_per_second: float
    p50_ms: float
    p99_ms: float
    errors: int
    # wrk's worst single request; its p99 is corrected for coordinated omission (a request that
    # waited also stands for those its connection would have sent meanwhile), so one stall of a
    # second lifts a 6 s row's p99 close to a second while the max shows the stall itself
    unit_per_request: int = 1  # points per request for batches
    max_ms: float = 0.0

    @property
    def units_per_second(self) -> float:
        return self.requests_per_second * self.unit_per_request


def wrk(
    name: str, url: str, script: str, args, headers=(), env=None, units: int = 1, seconds: int | None = None
) -> Figure:
    seconds = args.seconds if seconds is None else seconds
    command = ["wrk", "-t", str(args.threads), "-c", str(args.connections), "-d", f"{seconds}s"]
    command += ["--latency", "-s", str(LUA / script)]
    for header in headers:
        command += ["-H", header]
    command.append(url)
    environ = {**os.environ, "BENCH_LUA_DIR": str(LUA), "BENCH_THREADS": str(args.threads), **(env or {})}
    output = subprocess.run(command, capture_output=True, text=True, env=environ, check=True).stdout
    line = next(ln for ln in output.splitlines() if ln.startswith("WRK_JSON "))
    figures = json.loads(line.removeprefix("WRK_JSON "))
    return Figure(
        name=name,
        requests_per_second=figures["requests"] / figures["seconds"],
        p50_ms=figures["p50_us"] / 1000,
        p99_ms=figures["p99_us"] / 1000,
        errors=figures["non2xx"] + figures["socket_errors"],
        max_ms=figures["max_us"] / 1000,
        unit_per_request=units,
    )


def _batch_env(path: str, base: int) -> dict[str, str]:
    return {"BENCH_PATH": path, "BENCH_POINTS": "50", "BENCH_BASE_SECONDS": str(base)}


def run_appliance(seeded: Seeded, data: Path, processes: int, args, only: set[str]) -> list[Figure]:
    dispatch_port, engine_port = free_port(), free_port()
    server = _start(
        [
            sys.executable,
            "-m",
            "appliance",
            "serve",
            "--data-dir",
            str(data),
            "--dispatch-port",
            str(dispatch_port),
            "--engine-port",
            str(engine_port),
        ],
        data / "appliance.log",
        {
            "APPLIANCE_RATE_LIMITS": "off",
            "APPLIANCE_LOG_LEVEL": "WARNING",
            "APPLIANCE_PROCESSES": str(processes),  # 0 (the default) would mean one per core and one more
        },
    )
    dispatch = f"http://127.0.0.1:{dispatch_port}"
    engine = f"http://127.0.0.1:{engine_port}"
    figures: list[Figure] = []
    try:
        _wait_for_line("engine listening on", server, data / "appliance.log")
        _wait_for(dispatch + "/healthz", server, data / "appliance.log")
        _wait_for(engine + "/openapi.json", server, data / "appliance.log")
        bearer = f"Authorization: Bearer {seeded.dispatcher}"
        plan = [
            ("me", "GET /me", dispatch + "/me", "get.lua", [bearer], None, 1),
            (
                "orders1",
                "GET /orders?date= (1 order)",
                f"{dispatch}/orders?date={seeded.day}",
                "get.lua",
                [f"Authorization: Bearer {seeded.small_dispatcher}"],
                None,
                1,
            ),
            (
                "orders2000",
                f"GET /orders?date= ({ORDERS_IN_BIG_DAY:,} orders)",
                # as the console asks for a day: every order in one answer (1.2 MB of JSON)
                f"{dispatch}/orders?date={seeded.day}&limit={ORDERS_IN_BIG_DAY}",
                "get.lua",
                [bearer],
                None,
                1,
            ),
            (
                "orders2000",
                f"GET /orders?date= ({ORDERS_IN_BIG_DAY:,} orders), gzip",
                # as the console's browser asks for it: Accept-Encoding gzip (73 KB)
                f"{dispatch}/orders?date={seeded.day}&limit={ORDERS_IN_BIG_DAY}",
                "get.lua",
                [bearer, "Accept-Encoding: gzip, deflate, br"],
                None,
                1,
            ),
            ("track", "GET /track/{token}", f"{dispatch}/track/{seeded.track_token}", "get.lua", [], None, 1),
            (
                "location",
                "POST /courier/location (50 points)",
                dispatch + "/courier/location",
                "batch.lua",
                [f"Authorization: Bearer {seeded.courier}"],
                # Each run its own hour in the past, so that no stamp repeats between runs.
                _batch_env("/courier/location", int(time.time()) - 3600 * (2 + processes) - 600),
                50,
            ),
            (
                "payouts",
                "POST /v1/payouts (signed)",
                engine + "/v1/payouts",
                "signed.lua",
                [],
                {"BENCH_SIGNED_FILE": str(data / f"signed-payouts-{processes}.tsv")},
                1,
            ),
        ]
        for key, name, url, script, headers, env, units in plan:
            if only and key not in only:
                continue
            warmup_env = env
            if key == "payouts":
                # Signed requests are never sent twice: the warm-up has its own.
                warmup_env = {"BENCH_SIGNED_FILE": str(data / f"signed-warmup-{processes}.tsv")}
                _presign(
                    Path(warmup_env["BENCH_SIGNED_FILE"]),
                    seeded.operator_id,
                    seeded.secret,
                    1500 * args.warmup,
                )
                _presign(
                    data / f"signed-payouts-{processes}.tsv",
                    seeded.operator_id,
                    seeded.secret,
                    args.payouts or 3000 * args.seconds,
                )
            elif key == "location" and env is not None:
                # the half hour before the measured run's stamps: no point is sent twice
                warmup_env = {**env, "BENCH_BASE_SECONDS": str(int(env["BENCH_BASE_SECONDS"]) - 1800)}
            figures.append(measure(name, url, script, args, headers, env, units, warmup_env))
    finally:
        _stop(server)
    return figures


def run_bare(data: Path, args) -> tuple[Figure, Figure]:
    port = free_port()
    bare = _start(
        [sys.executable, str(HERE / "bare_app.py"), str(port), str(data / "bare.db"), "8"], data / "bare.log"
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url + "/ok", bare, data / "bare.log")
        get = measure("bare GET /ok", url + "/ok", "get.lua", args)
        base = int(time.time()) - 3600
        batch = measure(
            "bare POST /batch (50 points)",
            url + "/batch",
            "batch.lua",
            args,
            env=_batch_env("/batch", base),
            units=50,
            warmup_env=_batch_env("/batch", base - 1800),
        )
    finally:
        _stop(bare)
    return get, batch


# Issue 30's targets, with serve's default processes (three on two cores): each row's share of the bare app
# (GET rows of the bare GET, the GPS batch of the bare batch insert in points, signed payouts of
# the bare GET), its p99, and no request over MAX_MS (the last judged on a 30 s run: --seconds 30).
TARGETS: dict[str, tuple[str, float, float | None]] = {
    "GET /me": ("get", 1.00, 25),
    "GET /orders?date= (1 order)": ("get", 1.00, 25),
    "GET /track/{token}": ("get", 1.00, 25),
    "POST /courier/location (50 points)": ("batch", 0.60, 60),
    "POST /v1/payouts (signed)": ("get", 0.60, 60),
}
MAX_MS = 100


def _mean(first: Figure, second: Figure) -> Figure:
    return Figure(
        first.name,
        (first.requests_per_second + second.requests_per_second) / 2,
        (first.p50_ms + second.p50_ms) / 2,
        max(first.p99_ms, second.p99_ms),
        first.errors + second.errors,
        first.unit_per_request,
        max(first.max_ms, second.max_ms),
    )


HEADER = f"{'endpoint':42} {'req/s':>8} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} {'errors':>6}"


def _row(figure: Figure) -> str:
    return (
        f"{figure.name:42} {figure.requests_per_second:8.0f} {figure.p50_ms:7.1f} {figure.p99_ms:7.1f}"
        f" {figure.max_ms:7.1f} {figure.errors:6d}"
    )


def print_table(label: str, figures: list[Figure], bare_get: Figure, bare_batch: Figure) -> None:
    print(f"\n{label}")
    print(f"{HEADER} {'of bare':>8}  target")
    for figure in figures:
        kind, share_target, p99_target = TARGETS.get(figure.name, ("get", None, None))
        ceiling = bare_batch if kind == "batch" else bare_get
        share = figure.units_per_second / ceiling.units_per_second
        goals = []
        if share_target is not None:
            goals.append(f">= {share_target:.0%} {'ok' if share >= share_target else 'MISSED'}")
        if p99_target is not None:
            goals.append(f"p99 < {p99_target} ms {'ok' if figure.p99_ms < p99_target else 'MISSED'}")
        if figure.name.endswith("orders), gzip"):  # the console's browser asks like this
            goals.append(f"p99 < 50 ms {'ok' if figure.p99_ms < 50 else 'MISSED'}")
        if figure.name in ("GET /me", "GET /track/{token}"):
            goals.append(f"p50 < 5 ms {'ok' if figure.p50_ms < 5 else 'MISSED'}")
        if figure.name in TARGETS:
            goals.append(f"max < {MAX_MS} ms {'ok' if figure.max_ms < MAX_MS else 'MISSED'}")
        print(f"{_row(figure)} {share:8.1%}  {', '.join(goals)}")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--seconds", type=int, default=8)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--connections", type=int, default=8)
    parser.add_argument("--warmup", type=int, default=2, help="seconds of unmeasured load before each run")
    cores = os.cpu_count() or 1
    # one process, one per core, one per core and one more (serve's default), and two per core
    parser.add_argument("--processes", default=f"1,{cores},{cores + 1},{2 * cores}")
    parser.add_argument(
        "--payouts",
        type=int,
        default=0,
        help="pre-signed payout requests per run (default: 3,000 a second of the run, so none runs out)",
    )
    parser.add_argument(
        "--only", default="", help="comma-separated: me,orders1,orders2000,track,location,payouts"
    )
    args = parser.parse_args()
    only = {item for item in args.only.split(",") if item}
    counts = sorted({int(n) for n in args.processes.split(",")})
    if not shutil.which("wrk"):
        raise SystemExit("wrk is not installed (Debian: apt-get install wrk)")
    data = Path(tempfile.mkdtemp(prefix="bench-http-"))
    try:
        seeded = seed(data)
        print(
            f"wrk: {args.threads} threads, {args.connections} connections, {args.seconds} s each; {os.cpu_count()} cores"
        )
        for processes in counts:
            # The ceiling is measured right before and right after the appliance's rows, and its
            # mean is the 100 %: on a shared machine the load drifts within a run.
            before = run_bare(data, args)
            figures = run_appliance(seeded, data, processes, args, only)
            after = run_bare(data, args)
            bare_get, bare_batch = _mean(before[0], after[0]), _mean(before[1], after[1])
            print("\nbare Flask + waitress (8 threads) + SQLite WAL, before and after")
            print(HEADER)
            for figure in (*before, *after):
                print(
                    _row(figure)
                    + (f"  ({figure.units_per_second:.0f} points/s)" if figure.unit_per_request > 1 else "")
                )
            label = f"appliance, {processes} serving process{'es' if processes > 1 else ''}"
            print_table(label, figures, bare_get, bare_batch)
    except BaseException:
        print(f"(data and logs kept in {data})")
        raise
    shutil.rmtree(data, ignore_errors=True)


if __name__ == "__main__":
    main()
