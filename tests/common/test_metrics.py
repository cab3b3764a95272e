"""GET /metrics (Prometheus text format) on both ports, who may read it, and JSON log lines."""

from __future__ import annotations

import io
import json
import logging
from datetime import timedelta

import pytest
from prometheus_client.parser import text_string_to_metric_families

from appliance.common import clock
from appliance.common.logs import JsonFormatter
from appliance.settings import SettingsError, load_settings
from tests.engine.helpers import Signer, make_operator

REMOTE = {"REMOTE_ADDR": "203.0.113.7"}


def _samples(client, **kw) -> dict[tuple[str, frozenset], float]:
    response = client.get("/metrics", **kw)
    assert response.status_code == 200, response.data
    assert response.content_type.startswith("text/plain; version=")
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(response.get_data(as_text=True))
        for sample in family.samples
    }


def test_requests_are_counted_by_route_template_and_status_never_by_raw_path(dispatch_client) -> None:
    for order_id in (123456, 654321):
        assert dispatch_client.get(f"/orders/{order_id}").status_code == 401
    dispatch_client.get("/no/such/path")
    response = dispatch_client.get("/metrics")
    text = response.get_data(as_text=True)
    assert "123456" not in text and "/no/such/path" not in text
    samples = _samples(dispatch_client)
    route = frozenset({"method": "GET", "route": "/orders/<int:order_id>", "status": "401"}.items())
    assert samples[("appliance_http_requests_total", route)] == 2
    unmatched = frozenset({"method": "GET", "route": "unmatched", "status": "404"}.items())
    assert samples[("appliance_http_requests_total", unmatched)] == 1
    latency = frozenset({"method": "GET", "route": "/orders/<int:order_id>"}.items())
    assert samples[("appliance_http_request_duration_seconds_count", latency)] == 2
    assert samples[("appliance_http_request_duration_seconds_sum", latency)] > 0


def test_the_mail_queue_depth_and_age_and_the_housekeeping_lease_are_read_at_scrape(dispatch_client) -> None:
    from appliance.dispatch.models import JobLease, OutgoingMail

    old = clock.now() - timedelta(minutes=5)
    for _ in range(3):
        OutgoingMail.create(
            to_address="a@example.am", subject="s", body="b", created_at=old, next_attempt_at=old
        )
    OutgoingMail.create(to_address="b@example.am", subject="s", body="b", status="sent")
    JobLease.create(name="housekeeping", holder="4242:abcd", lease_until=clock.now() + timedelta(seconds=30))
    samples = _samples(dispatch_client)
    queue = frozenset({"queue": "mail"}.items())
    assert samples[("appliance_queue_depth", queue)] == 3
    assert 300 <= samples[("appliance_queue_oldest_age_seconds", queue)] < 400
    held = frozenset({"job": "job:housekeeping", "holder": "4242:abcd"}.items())
    assert samples[("appliance_worker_lease_held", held)] == 1
    assert (
        0
        < samples[("appliance_worker_lease_seconds_left", frozenset({"job": "job:housekeeping"}.items()))]
        <= 30
    )


def test_the_engine_reports_payouts_waiting_and_its_chain_head(engine_app) -> None:
    client = engine_app.test_client()
    operator = make_operator(engine_app)
    signer = Signer(client, operator["operatorId"], operator["secret"])
    for n in range(2):
        assert signer.submit(f"pyo_metrics{n:04d}").status_code == 201
    samples = _samples(client)
    assert samples[("appliance_queue_depth", frozenset({"queue": "payouts"}.items()))] == 2
    assert samples[("appliance_queue_depth", frozenset({"queue": "webhooks"}.items()))] == 0
    assert samples[("appliance_queue_depth", frozenset({"queue": "exports"}.items()))] == 0
    chain = frozenset({"chain": "eth_local"}.items())
    assert samples[("appliance_chain_up", chain)] == 1
    assert samples[("appliance_chain_head_block", chain)] >= 0
    route = frozenset({"method": "POST", "route": "/v1/payouts", "status": "201"}.items())
    assert samples[("appliance_http_requests_total", route)] == 2


def test_only_loopback_clients_read_metrics_by_default(dispatch_client, engine_app) -> None:
    for client in (dispatch_client, engine_app.test_client()):
        refused = client.get("/metrics", environ_base=REMOTE)
        assert refused.status_code == 404
        assert refused.content_type == "application/problem+json"
        assert client.get("/metrics", environ_base={"REMOTE_ADDR": "::1"}).status_code == 200


@pytest.mark.parametrize(
    ("values", "remote", "token", "status"),
    [
        ({"metrics": "off"}, "127.0.0.1", None, 404),
        ({"metrics": "open"}, "203.0.113.7", None, 200),
        ({"metrics_token": "s3cret-scraper-token"}, "203.0.113.7", "s3cret-scraper-token", 200),
        ({"metrics_token": "s3cret-scraper-token"}, "203.0.113.7", "wrong-token", 404),
        (
            {"metrics": "off", "metrics_token": "s3cret-scraper-token"},
            "127.0.0.1",
            "s3cret-scraper-token",
            404,
        ),
    ],
)
def test_the_metrics_setting_and_token_decide_who_reads_them(settings, values, remote, token, status) -> None:
    from appliance.dispatch.app import create_app

    app = create_app(settings.replace(**values))
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    assert (
        app.test_client().get("/metrics", headers=headers, environ_base={"REMOTE_ADDR": remote}).status_code
        == status
    )


def test_unknown_metrics_and_log_format_settings_are_refused() -> None:
    with pytest.raises(SettingsError, match="setting metrics"):
        load_settings({}, environ={"APPLIANCE_METRICS": "public"})
    with pytest.raises(SettingsError, match="setting log_format"):
        load_settings({}, environ={"APPLIANCE_LOG_FORMAT": "xml"})
    assert load_settings({}, environ={"APPLIANCE_LOG_FORMAT": "json"}).log_format == "json"


def test_json_log_lines_carry_the_request_fields_and_escape_what_would_break_a_line(dispatch_app) -> None:
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(JsonFormatter())
    root = logging.getLogger()
    old_level = root.level
    root.addHandler(handler)
    root.setLevel(logging.INFO)
    try:
        dispatch_app.test_client().get('/nowhere/x%0A{"forged":1}', headers={"X-Request-Id": "req-12345678"})
        try:
            raise ValueError("boom")
        except ValueError:
            logging.getLogger("appliance.test").exception("failed\nhere")
    finally:
        root.removeHandler(handler)
        root.setLevel(old_level)
    lines = stream.getvalue().splitlines()
    entries = [json.loads(line) for line in lines]  # every line is one whole JSON document
    access = next(e for e in entries if e["logger"] == "appliance.http")
    assert access["path"] == '/nowhere/x\n{"forged":1}' and access["method"] == "GET"
    assert access["request_id"] == "req-12345678" and access["status"] == 404 and access["ms"] >= 0
    failure = next(e for e in entries if e["logger"] == "appliance.test")
    assert failure["message"] == "failed\nhere" and "ValueError: boom" in failure["exception"]
    assert failure["level"] == "ERROR" and failure["time"].endswith("+00:00")
