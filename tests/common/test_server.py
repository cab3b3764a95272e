"""A real server: both listeners answer, and SIGTERM lets a request in flight finish."""

import collections
import contextlib
import os
import queue
import re
import signal
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import requests

from tests.conftest import free_port, serve_command

pytestmark = pytest.mark.server


def _start(
    tmp_path: Path, *extra: str, env: dict[str, str] | None = None
) -> tuple[subprocess.Popen, int, int]:
    dispatch_port, engine_port = free_port(), free_port()
    process = subprocess.Popen(
        serve_command(tmp_path, dispatch_port, engine_port, *extra),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    return process, dispatch_port, engine_port


def _wait(url: str, process: subprocess.Popen) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise AssertionError(process.stderr.read() if process.stderr else "server exited")
        try:
            requests.get(url, timeout=1)
            return
        except (requests.ConnectionError, requests.Timeout):
            # With several serving processes the port accepts before they are ready: wait on.
            time.sleep(0.1)
    raise AssertionError(f"{url} did not answer")


def test_serve_answers_on_both_ports_and_exits_0_on_sigterm(tmp_path: Path) -> None:
    process, dispatch_port, engine_port = _start(tmp_path)
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        # The first probes (a process starting) may take seconds on a busy machine.
        assert requests.get(f"http://127.0.0.1:{engine_port}/health/ready", timeout=30).status_code == 200
        assert requests.get(f"http://127.0.0.1:{dispatch_port}/healthz", timeout=30).status_code in {200, 503}
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=20)
    assert process.returncode == 0
    assert f"dispatch listening on http://127.0.0.1:{dispatch_port}" in out
    assert f"engine listening on http://127.0.0.1:{engine_port}" in out


def test_a_request_in_flight_finishes_cleanly_after_sigterm(tmp_path: Path, settings) -> None:
    """An event stream is a request in flight that would run for minutes: on SIGTERM it ends with
    its closing line (not a reset connection) and the process exits 0."""
    from appliance.dispatch.app import create_app
    from tests.dispatch.factory import make_company, make_member

    app = create_app(settings)
    dispatcher = make_member(app, make_company(), "dispatcher")
    process, dispatch_port, _ = _start(settings.data_dir, "--only", "dispatch")
    try:
        _wait(f"http://127.0.0.1:{dispatch_port}/openapi.json", process)
        lines: list[bytes] = []
        with requests.get(
            f"http://127.0.0.1:{dispatch_port}/events?cursor=0",
            headers=dispatcher.headers,
            stream=True,
            timeout=30,
        ) as response:
            assert response.status_code == 200
            stream = response.iter_lines()
            lines.append(next(stream))  # the stream is open and in flight
            os.kill(process.pid, signal.SIGTERM)
            lines.extend(stream)
        process.communicate(timeout=20)
    finally:
        if process.poll() is None:
            process.kill()
    assert any(line.startswith(b": stream ends") for line in lines)
    assert process.returncode == 0


def test_only_serves_one_service(tmp_path: Path) -> None:
    process, dispatch_port, engine_port = _start(tmp_path, "--only", "engine")
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        with pytest.raises(requests.ConnectionError):
            requests.get(f"http://127.0.0.1:{dispatch_port}/healthz", timeout=2)
    finally:
        process.send_signal(signal.SIGINT)
        process.communicate(timeout=20)
    assert process.returncode == 0


def test_behind_a_trusted_proxy_the_client_address_is_the_forwarded_one() -> None:
    import requests

    from appliance.serving.listener import Listener

    def echo(environ, start_response):
        start_response("200 OK", [("Content-Type", "text/plain")])
        return [environ.get("REMOTE_ADDR", "").encode()]

    for trusted, expected in (("127.0.0.1", "203.0.113.9"), ("", "127.0.0.1")):
        listener = Listener("echo", echo, "127.0.0.1", 0, 2, trusted_proxy=trusted)
        listener.start()
        try:
            answer = requests.get(
                listener.url + "/", headers={"X-Forwarded-For": "203.0.113.9"}, timeout=5
            ).text
        finally:
            listener.stop_accepting()
            listener.close()
        assert answer == expected, trusted


def test_serve_warns_when_links_would_point_nowhere_useful(tmp_path) -> None:
    from appliance.serving.startup_warnings import link_warnings
    from appliance.settings import load_settings

    local = load_settings({"data_dir": str(tmp_path)}, environ={})
    assert link_warnings(local) == []  # a demo on one machine: fine
    exposed = load_settings({"data_dir": str(tmp_path), "host": "0.0.0.0"}, environ={})
    assert any("only this machine" in w for w in link_warnings(exposed))
    plain = load_settings(
        {"data_dir": str(tmp_path), "host": "0.0.0.0", "public_url": "http://d.example.am"}, environ={}
    )
    assert [w for w in link_warnings(plain) if "in the clear" in w]
    good = load_settings(
        {"data_dir": str(tmp_path), "host": "0.0.0.0", "public_url": "https://d.example.am"}, environ={}
    )
    assert link_warnings(good) == []


def _children(pid: int) -> set[int]:
    text = Path(f"/proc/{pid}/task/{pid}/children").read_text()
    return {int(child) for child in text.split()}


def _until(condition, seconds: float = 30) -> None:
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        time.sleep(0.1)


def test_several_serving_processes_share_both_ports_and_stop_together(tmp_path: Path) -> None:
    process, dispatch_port, engine_port = _start(tmp_path, "--processes", "3")
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        _until(lambda: len(_children(process.pid)) == 3)
        for _ in range(12):  # a new connection each time: any process may take it
            for url in (f"{engine_port}/health/live", f"{dispatch_port}/openapi.json"):
                assert requests.get(f"http://127.0.0.1:{url}", timeout=10).status_code == 200
        serving = _children(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        out, _ = process.communicate(timeout=30)
    assert process.returncode == 0
    assert out.count("listening on") == 2  # one line per listener, not per process
    assert not any(Path(f"/proc/{pid}").exists() for pid in serving)


def _server_sockets(port: int) -> int:
    """Connections whose local end is ``port`` still open on the server's side (established, or
    closed by the client and not yet by the server), from /proc/net/tcp."""
    open_states = {"01", "08"}  # ESTABLISHED, CLOSE_WAIT
    count = 0
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with contextlib.suppress(FileNotFoundError), open(table) as lines:
            for line in list(lines)[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] in open_states:
                    count += 1
    return count


def _process_of_each(port: int, connections: int) -> list[str]:
    """Open ``connections`` connections at once, then ask one request on each (kept alive): the
    serving process that answered each, by the per-process prefix of its request id."""
    sockets = [socket.create_connection(("127.0.0.1", port), timeout=10) for _ in range(connections)]
    try:
        prefixes = []
        for sock in sockets:
            sock.sendall(b"GET /health/live HTTP/1.1\r\nHost: localhost\r\n\r\n")
            head = b""
            while b"\r\n\r\n" not in head:
                head += sock.recv(4096)
            found = re.search(rb"(?i)x-request-id: ([0-9a-f]{32})", head)
            assert found, head
            prefixes.append(found.group(1)[:16].decode())
        return prefixes
    finally:
        for sock in sockets:
            sock.close()


def test_connections_opened_together_are_spread_evenly_over_the_serving_processes(tmp_path: Path) -> None:
    """A burst of keep-alive connections (a client opening its pool) would otherwise land mostly on
    whichever process accepts first (1/6/1 of eight over three was seen), whose threads then take
    turns on one interpreter lock while the others idle."""
    process, _, engine_port = _start(tmp_path, "--processes", "3", "--only", "engine")
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        # Every process serving: one connection at a time (closed after each) reaches each of them.
        _until(lambda: len({_process_of_each(engine_port, 1)[0] for _ in range(30)}) == 3)
        for _ in range(3):
            # The closed connections counted off: the servers closed their ends (a fixed pause
            # was not always enough on a busy machine), and their loops turned since.
            _until(lambda: _server_sockets(engine_port) == 0)
            time.sleep(0.3)
            spread = collections.Counter(_process_of_each(engine_port, 6))
            assert sorted(spread.values()) == [2, 2, 2], spread
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def _first_line_with(process: subprocess.Popen, text: str, timeout: float = 60) -> str:
    lines: queue.Queue[str] = queue.Queue()
    threading.Thread(target=lambda: [lines.put(line) for line in process.stdout], daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
        if text in line:
            return line


def test_serve_says_listening_once_every_serving_process_serves(tmp_path: Path) -> None:
    """A client that connects on the "listening" line (a proxy filling its pool, a load test) has
    its connections spread over every process; said as soon as the ports were bound, the first
    process up took them all."""
    process, _, engine_port = _start(tmp_path, "--processes", "3", "--only", "engine")
    try:
        _first_line_with(process, f"engine listening on http://127.0.0.1:{engine_port}")
        spread = collections.Counter(_process_of_each(engine_port, 6))
        assert sorted(spread.values()) == [2, 2, 2], spread
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_the_connection_balance_lets_accept_only_the_processes_holding_the_fewest() -> None:
    from appliance.serving.balance import ConnectionBalance

    balance = ConnectionBalance(3, ["dispatch", "engine"])
    assert balance.may_accept(0, "dispatch", 0)  # the others are not serving yet
    assert balance.may_accept(1, "dispatch", 0)
    assert balance.may_accept(2, "dispatch", 0)
    assert not balance.may_accept(0, "dispatch", 1)  # holds more than 1 and 2
    assert balance.may_accept(0, "engine", 5)  # each listener counts on its own
    assert balance.may_accept(1, "dispatch", 1) is False and balance.may_accept(2, "dispatch", 1)
    balance.not_serving(2)  # stopping or gone: it no longer holds the others back
    assert balance.may_accept(0, "dispatch", 1) and balance.may_accept(1, "dispatch", 1)
    balance.not_serving(0, "dispatch")
    assert balance.may_accept(1, "dispatch", 7)


def test_a_serving_process_that_never_serves_after_its_start_is_killed_to_be_replaced() -> None:
    """A process stuck in its start (stopped there, a lock never granted) never beats: before, the
    parent's watch skipped it for ever. One that beat keeps its place however long ago it started."""
    from appliance.serving.balance import ConnectionBalance
    from appliance.serving.supervisor import watch_heartbeats

    balance = ConnectionBalance(2, ["engine"])
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    serving = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    stopping = threading.Event()
    long_ago = time.monotonic() - 1000
    watch = threading.Thread(
        target=watch_heartbeats,
        args=(balance, {stuck.pid: 0, serving.pid: 1}, stopping, 30.0, 60.0, {0: long_ago, 1: long_ago}),
        kwargs={"start_within": 120.0},
        daemon=True,
    )
    try:
        balance.beat(1, "engine")  # process 1 served (and beats); process 0 never did
        watch.start()
        assert stuck.wait(timeout=10) == -signal.SIGKILL
        time.sleep(1.5)  # three more checks
        assert serving.poll() is None
    finally:
        stopping.set()
        watch.join(5)
        for each in (stuck, serving):
            each.kill()
            each.wait()


def test_a_serving_process_that_keeps_failing_at_start_is_restarted_less_and_less_often() -> None:
    from appliance.serving.supervisor import restart_delay

    assert [restart_delay(n) for n in range(1, 8)] == [1, 2, 4, 8, 16, 30, 30]


def _woken(balance, process: int, name: str) -> bool:
    try:
        return bool(os.read(balance.wake_fd(process, name), 64))
    except BlockingIOError:
        return False


def test_a_process_that_stops_accepting_wakes_the_processes_below_it() -> None:
    """A process leaves the listener out of its poll only when its own loop turns: one that did so
    while it was above another must be woken when the other passes it, or both leave it out."""
    from appliance.serving.balance import ConnectionBalance

    balance = ConnectionBalance(3, ["dispatch", "engine"])
    seats = [balance.seat(process, "dispatch") for process in range(3)]
    assert all(seat(4) for seat in seats)
    assert not any(_woken(balance, process, "dispatch") for process in range(3))
    assert not seats[0](5)  # 0 passes the others: they are woken
    assert _woken(balance, 1, "dispatch") and _woken(balance, 2, "dispatch")
    assert not _woken(balance, 0, "dispatch") and not _woken(balance, 1, "engine")
    assert not seats[0](5)  # still above: nobody woken again
    assert not _woken(balance, 1, "dispatch")
    balance.not_serving(2, "dispatch")  # a process that stops: the others take over, awake
    assert _woken(balance, 0, "dispatch") and _woken(balance, 1, "dispatch")


@pytest.mark.parametrize("processes", ["1", "2", "4"])
def test_fresh_requests_are_answered_on_both_ports_while_500_slow_clients_hold_each(
    tmp_path: Path, processes: str
) -> None:
    """Slow clients trickling a header a byte at a time, from three addresses (each within its
    share of connections), spread over the serving processes; a new connection must still be
    accepted at once. Before: with two processes, half the probes waited 5 s in the listener's
    backlog (each process had left it out of its poll while above the other); with one process
    holding a thousand connections, none was accepted (select() cannot watch descriptors from
    1024 up)."""
    process, dispatch_port, engine_port = _start(tmp_path, "--processes", processes)
    slow: list[socket.socket] = []
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        _wait(f"http://127.0.0.1:{dispatch_port}/openapi.json", process)
        for number in range(1000):
            port = (dispatch_port, engine_port)[number % 2]
            source = (f"127.0.0.{2 + number % 3}", 0)
            connection = socket.create_connection(("127.0.0.1", port), timeout=10, source_address=source)
            connection.sendall(b"GET /openapi.json HTTP/1.1\r\nHost: x\r\n")
            slow.append(connection)
        answered = collections.Counter()
        for round_ in range(20):
            if round_ % 5 == 0:
                for connection in slow:  # the slow clients' next byte: each loop turns
                    connection.sendall(b"X")
            for port in (dispatch_port, engine_port):
                with contextlib.suppress(OSError):
                    # Starved was never answered; a busy CI machine answers in seconds.
                    fresh = requests.get(f"http://127.0.0.1:{port}/openapi.json", timeout=15)
                    answered[port] += fresh.status_code == 200
        assert answered == {dispatch_port: 20, engine_port: 20}
    finally:
        for connection in slow:
            connection.close()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_an_idle_serving_thread_that_went_idle_last_takes_the_next_request() -> None:
    """The thread idle longest would be the coldest (its stack, its database connection)."""
    from appliance.serving.task_queue import _MostRecentlyIdleFirst

    lock = threading.Lock()
    condition = _MostRecentlyIdleFirst(lock)
    woken: list[str] = []

    def wait(name: str) -> None:
        with lock:
            condition.wait()
            woken.append(name)

    threads = []
    for name in ("first", "second", "third"):
        threads.append(threading.Thread(target=wait, args=(name,)))
        threads[-1].start()
        _until(lambda: len(condition._waiters) == len(threads))  # type: ignore[attr-defined]
    for expected in (["third"], ["third", "second"]):
        with lock:
            condition.notify()
        _until(lambda expected=expected: woken == expected)
    with lock:
        condition.notify_all()
    for thread in threads:
        thread.join(5)
    assert woken == ["third", "second", "first"]


def test_a_serving_process_that_dies_is_replaced(tmp_path: Path) -> None:
    process, _, engine_port = _start(tmp_path, "--processes", "2", "--only", "engine")
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        _until(lambda: len(_children(process.pid)) == 2)
        victim = min(_children(process.pid))
        os.kill(victim, signal.SIGKILL)
        _until(lambda: victim not in _children(process.pid) and len(_children(process.pid)) == 2)
        for _ in range(6):
            assert requests.get(f"http://127.0.0.1:{engine_port}/health/live", timeout=10).status_code == 200
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def _threads_taking_stop_signals(pid: int) -> list[str]:
    """The threads of ``pid`` that do not block SIGTERM or SIGINT ("main" or a thread's name)."""
    stop_bits = (1 << (signal.SIGTERM - 1)) | (1 << (signal.SIGINT - 1))
    taking = []
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            status = (task / "status").read_text()
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
        except FileNotFoundError:
            continue  # a thread that ended between the listing and the read takes no signal
        blocked = int(re.search(r"^SigBlk:\s*([0-9a-f]+)", status, re.M).group(1), 16)  # type: ignore[union-attr]
        if blocked & stop_bits != stop_bits:
            taking.append(name)
    return taking


@pytest.mark.parametrize("processes", ["1", "2"])
def test_only_the_main_thread_of_each_process_can_take_a_stop_signal(tmp_path: Path, processes: str) -> None:
    """The kernel gives a process's signal to any thread not blocking it, and Python runs handlers
    in the main thread only: taken by a serving thread, a SIGTERM went unseen while the main
    thread slept in its wait (under load, about one stop in twenty hung)."""
    process, dispatch_port, engine_port = _start(tmp_path, "--processes", processes)
    try:
        _first_line_with(process, f"engine listening on http://127.0.0.1:{engine_port}")
        assert requests.get(f"http://127.0.0.1:{dispatch_port}/healthz", timeout=10).status_code in {200, 503}
        serving = _children(process.pid) or [process.pid]
        assert len(serving) == int(processes)
        for pid in {process.pid, *serving}:  # the main thread holds them too until it waits
            _until(lambda pid=pid: _threads_taking_stop_signals(pid) == ["main"])
        if processes == "2":  # a replacement serving process too
            victim = min(serving)
            os.kill(victim, signal.SIGKILL)
            _until(lambda: victim not in _children(process.pid) and len(_children(process.pid)) == 2)
            replacement = max(_children(process.pid))
            _until(lambda: _threads_taking_stop_signals(replacement) == ["main"])
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_one_serving_process_serves_in_the_process_itself(tmp_path: Path) -> None:
    process, _, engine_port = _start(tmp_path, "--processes", "1", "--only", "engine")
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        assert not _children(process.pid)
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert process.returncode == 0


def test_writes_from_several_serving_processes_to_one_database_are_all_kept_once(
    tmp_path: Path, settings
) -> None:
    """Acknowledged GPS batches and payout submissions sent at once through two serving processes
    to one database (one SQLite file, or PostgreSQL): none refused, none lost, none doubled."""
    import concurrent.futures
    from datetime import UTC, datetime, timedelta

    from appliance.dispatch.app import create_app as create_dispatch
    from appliance.dispatch.models import CourierLocation
    from appliance.engine.app import create_app as create_engine
    from appliance.engine.client import EngineClient
    from appliance.engine.models import Payout
    from tests.dispatch.factory import make_company, make_member
    from tests.engine.helpers import make_operator

    courier = make_member(create_dispatch(settings), make_company(), "courier")
    engine = create_engine(settings)
    operator = make_operator(engine)
    process, dispatch_port, engine_port = _start(settings.data_dir, "--processes", "2")
    base = datetime.now(UTC) - timedelta(hours=1)
    try:
        _wait(f"http://127.0.0.1:{engine_port}/health/live", process)
        _wait(f"http://127.0.0.1:{dispatch_port}/openapi.json", process)
        client = EngineClient(
            f"http://127.0.0.1:{engine_port}", operator["operatorId"], operator["secret"], max_attempts=1
        )

        def batch(n: int) -> int:
            points = [
                {"lat": 40.18, "lon": 44.51, "capturedAt": (base + timedelta(seconds=n * 10 + i)).isoformat()}
                for i in range(10)
            ]
            return requests.post(
                f"http://127.0.0.1:{dispatch_port}/courier/location",
                json={"points": points},
                headers=courier.headers,
                timeout=30,
            ).status_code

        def payout(n: int) -> str:
            answer = client.submit_payout(
                f"pyo_multi{n:05d}",
                "USDC",
                str(1000 + n),
                "0x" + "ab" * 20,
                idempotency_key=f"key-multi-{n:05d}",
            )
            return answer["outcome"]

        with concurrent.futures.ThreadPoolExecutor(8) as pool:
            batches = list(pool.map(batch, range(40)))
            payouts = list(pool.map(payout, range(24)))
    finally:
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=30)
    assert batches == [202] * 40
    assert payouts == ["ACCEPTED"] * 24
    assert CourierLocation.select().where(CourierLocation.courier == courier.courier.id).count() == 400
    assert Payout.select().count() == 24


def test_an_embedded_chain_beside_a_shared_engine_database_is_warned_about(tmp_path) -> None:
    from appliance.serving.startup_warnings import deployment_warnings
    from appliance.settings import load_settings

    alone = load_settings({"data_dir": str(tmp_path)}, environ={})
    assert deployment_warnings(alone) == []  # SQLite: one host, the embedded chain is fine
    shared = load_settings(
        {"data_dir": str(tmp_path), "engine_database": "postgresql://db.internal/engine"}, environ={}
    )
    assert any("local_chain = false" in w for w in deployment_warnings(shared))
    remote = load_settings(
        {
            "data_dir": str(tmp_path),
            "engine_database": "postgresql://db.internal/engine",
            "local_chain": False,
        },
        environ={},
    )
    assert deployment_warnings(remote) == []


HELD_LOCK_SCRIPT = """
import os, signal, sys, threading, time, urllib.request
from appliance.common import lifecycle
from appliance.serving.process import serve
from appliance.settings import load_settings

port = int(sys.argv[2])
settings = load_settings({"data_dir": sys.argv[1], "processes": 1}, environ={})
stop = threading.Event()
seen = []

def app(environ, start_response):
    start_response("200 OK", [("Content-Type", "text/plain")])
    return [b"ok"]

def hold_the_lock_and_signal():
    while True:
        try:
            urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=1).read()
            break
        except OSError:
            time.sleep(0.1)
    # What the main thread holds for an instant inside stop.wait(): a handler that took this lock
    # waited for it for ever when the signal came in that instant.
    with stop._cond:
        os.kill(os.getpid(), signal.SIGTERM)
        seen.append(lifecycle.stopping.wait(10))

threading.Thread(target=hold_the_lock_and_signal, daemon=True).start()
serve(settings, [("probe", app, port)], announce=lambda line: None, stop=stop)
print("stopping while the lock was held:", seen)
"""


def test_a_stop_signal_is_acted_on_even_while_the_stop_events_lock_is_held(tmp_path: Path) -> None:
    """serve's signal handler takes no lock: a SIGTERM arriving while the main thread held the
    lock of its own stop.wait() used to hang the process for ever (Event.set in the handler)."""
    done = subprocess.run(
        [sys.executable, "-c", HELD_LOCK_SCRIPT, str(tmp_path / "data"), str(free_port())],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "stopping while the lock was held: [True]" in done.stdout, done.stdout + done.stderr
