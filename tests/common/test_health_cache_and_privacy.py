"""/healthz and /health/ready cheap and generic to the public (issues 30 and 33): each check's result
is kept for about a second, a failing dependency still shows within two, and a check's detail
(an exception's text, timings, a bucket's name) is shown only to a local client or to one holding
the metrics token."""

from __future__ import annotations

import pytest

from appliance.common import health
from appliance.common.health import Check

OUTSIDE = {"REMOTE_ADDR": "203.0.113.7"}


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


@pytest.fixture
def fake_clock(monkeypatch) -> FakeClock:
    clock = FakeClock()
    monkeypatch.setattr(health, "monotonic", clock)
    return clock


class Dependency:
    """A probe that counts its calls and can be told to fail."""

    def __init__(self) -> None:
        self.calls = 0
        self.error: str | None = None

    def __call__(self) -> Check:
        self.calls += 1
        if self.error:
            raise OSError(self.error)
        return Check("pass")


def _all_passing(app, service: str = "dispatch") -> Dependency:
    registry = app.extensions[service].health
    for name in registry.names:
        registry.register(name, lambda: Check("pass"))
    dependency = Dependency()
    registry.register("database", dependency)
    return dependency


def test_healthz_probes_each_dependency_at_most_once_a_second_however_often_it_is_asked(
    dispatch_app, dispatch_client, fake_clock
) -> None:
    database = _all_passing(dispatch_app)
    for _ in range(50):
        assert dispatch_client.get("/healthz").status_code == 200
        fake_clock.now += 0.015
    assert database.calls == 1
    fake_clock.now += 0.5
    assert dispatch_client.get("/healthz").status_code == 200
    assert database.calls == 2


def test_a_dependency_that_starts_failing_shows_on_healthz_within_two_seconds(
    dispatch_app, dispatch_client, fake_clock
) -> None:
    database = _all_passing(dispatch_app)
    assert dispatch_client.get("/healthz").status_code == 200
    database.error = "disk gone"
    fake_clock.now += 1.0
    response = dispatch_client.get("/healthz")
    assert response.status_code == 503
    assert response.json["failing"] == ["database"]


def test_engine_ready_probes_at_most_once_a_second_and_shows_a_failure_within_two(
    engine_app, engine_client, fake_clock
) -> None:
    database = _all_passing(engine_app, "engine")
    for _ in range(20):
        assert engine_client.get("/health/ready").status_code == 200
    assert database.calls == 1
    database.error = "connection refused"
    fake_clock.now += 1.0
    response = engine_client.get("/health/ready")
    assert response.status_code == 503 and response.json["checks"]["database"] == "fail"
    assert "connection refused" not in response.get_data(as_text=True)


def test_a_dependency_that_stops_answering_fails_within_the_deadline_and_passes_again_once_it_answers(
    dispatch_app, dispatch_client, fake_clock
) -> None:
    # A frozen node or storage server: its client would wait out its own timeout (10 s or more)
    # while a load balancer gave up on the probe; the check fails at the deadline instead.
    import threading
    import time

    registry = dispatch_app.extensions["dispatch"].health
    frozen = threading.Event()
    thawed = threading.Event()
    calls = []

    def database() -> Check:
        calls.append(1)
        if frozen.is_set():
            thawed.wait(60)
        return Check("pass")

    _all_passing(dispatch_app)
    registry.register("database", database)
    assert dispatch_client.get("/healthz").status_code == 200  # answered: its first probe
    frozen.set()
    fake_clock.now += 1.0
    started = time.perf_counter()
    response = dispatch_client.get("/healthz", environ_base={"REMOTE_ADDR": "127.0.0.1"})
    assert time.perf_counter() - started < 30  # the deadline (2 s), not the frozen call's minute
    assert response.status_code == 503 and response.json["failing"] == ["database"]
    assert response.json["checks"]["database"]["detail"].startswith("no answer within 2 s")
    fake_clock.now += 1.0  # still frozen: failing, and no second probe piles up
    assert dispatch_client.get("/healthz").status_code == 503
    assert len(calls) == 2
    thawed.set()  # it answers: the answer is the next one shown
    deadline = time.monotonic() + 30
    while dispatch_client.get("/healthz").status_code != 200:
        assert time.monotonic() < deadline
        fake_clock.now += 1.0
        time.sleep(0.05)
    assert len(calls) <= 3


def test_a_public_client_sees_each_check_status_but_no_error_text_or_internals(
    dispatch_app, dispatch_client
) -> None:
    database = _all_passing(dispatch_app)
    database.error = "could not connect to server at 10.0.4.2:5432 as appliance_admin"
    response = dispatch_client.get("/healthz", environ_base=OUTSIDE)
    assert response.status_code == 503
    body = response.json
    assert set(body["checks"]) == {"routing", "solver", "database", "disk", "tiles"}
    assert body["checks"]["database"] == {"status": "fail"}
    assert all(set(check) == {"status"} for check in body["checks"].values())
    assert body["failing"] == ["database"]
    text = response.get_data(as_text=True)
    assert "10.0.4.2" not in text and "OSError" not in text and "durationMs" not in text


def test_a_local_client_sees_the_details_of_each_check(dispatch_app, dispatch_client) -> None:
    _all_passing(dispatch_app).error = "disk gone"
    body = dispatch_client.get("/healthz", environ_base={"REMOTE_ADDR": "127.0.0.1"}).json
    assert body["checks"]["database"]["detail"] == "OSError: disk gone"
    assert "durationMs" in body["checks"]["solver"]


def test_a_request_forwarded_by_a_proxy_on_this_host_is_not_local_without_trusted_proxy(
    dispatch_app, dispatch_client
) -> None:
    _all_passing(dispatch_app).error = "disk gone"
    body = dispatch_client.get(
        "/healthz", environ_base={"REMOTE_ADDR": "127.0.0.1"}, headers={"X-Forwarded-For": "198.51.100.4"}
    ).json
    assert body["checks"]["database"] == {"status": "fail"}


def test_the_metrics_token_shows_the_details_from_anywhere(settings) -> None:
    from appliance.dispatch.app import create_app

    app = create_app(settings.replace(metrics_token="scrape-token-123"))
    _all_passing(app).error = "disk gone"
    client = app.test_client()
    with_token = client.get(
        "/healthz", environ_base=OUTSIDE, headers={"Authorization": "Bearer scrape-token-123"}
    ).json
    assert with_token["checks"]["database"]["detail"] == "OSError: disk gone"
    wrong = client.get("/healthz", environ_base=OUTSIDE, headers={"Authorization": "Bearer nope"}).json
    assert wrong["checks"]["database"] == {"status": "fail"}


def test_a_probe_is_refreshed_by_one_request_while_the_others_answer_its_last_result(fake_clock) -> None:
    import threading

    registry = health.HealthRegistry()
    entered, release = threading.Event(), threading.Event()
    calls = []

    def slow() -> Check:
        calls.append(1)
        if len(calls) == 2:
            entered.set()
            release.wait(10)
            return Check("fail", "now failing")
        return Check("pass")

    registry.register("slow", slow)
    assert registry.run()[0] is True
    fake_clock.now += 1.5
    refreshing = threading.Thread(target=registry.run)
    refreshing.start()
    assert entered.wait(10)
    try:
        healthy, checks = registry.run()  # does not wait for the slow probe, nor start another
        assert healthy is True and checks["slow"]["status"] == "pass"
    finally:
        release.set()
        refreshing.join(10)
    assert len(calls) == 2
    assert registry.run()[1]["slow"]["status"] == "fail"
