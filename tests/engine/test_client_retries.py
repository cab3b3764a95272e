"""The reference client against a real local server that fails on purpose."""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

import pytest

from appliance.engine.client import EngineClient, EngineError
from appliance.engine.models import Payout
from tests.conftest import free_port, serving
from tests.engine.helpers import make_operator

pytestmark = pytest.mark.server


class FailingFront:
    """WSGI wrapper: answers the first ``failures`` requests with ``status``, then passes through."""

    def __init__(self, app, failures: int, status: str = "503 Service Unavailable") -> None:
        self.app = app
        self.failures = failures
        self.status = status
        self.seen: list[dict[str, str]] = []
        self.lock = threading.Lock()

    def __call__(self, environ, start_response):
        with self.lock:
            self.seen.append(
                {k: v for k, v in environ.items() if k.startswith("HTTP_X_") or k == "HTTP_IDEMPOTENCY_KEY"}
            )
            fail = len(self.seen) <= self.failures
        if fail:
            start_response(self.status, [("Content-Type", "application/json")])
            return [b'{"type":"about:blank#unavailable","detail":"try again","status":503,"requestId":"x"}']
        return self.app(environ, start_response)


@pytest.fixture
def served(engine_app) -> Iterator:
    with contextlib.ExitStack() as stack:
        yield lambda front: stack.enter_context(serving(front))


def _client(engine_app, url: str) -> EngineClient:
    op = make_operator(engine_app)
    return EngineClient(url, op["operatorId"], op["secret"], backoff=0.01)


def test_a_payout_retried_after_503s_keeps_its_key_is_signed_afresh_and_is_created_once(
    engine_app, served
) -> None:
    front = FailingFront(engine_app, failures=2)
    client = _client(engine_app, served(front))
    result = client.submit_payout(
        "pyo_retry0001",
        "USDC",
        "5000",
        "0xabababababababababababababababababababab",
        idempotency_key="key-retry-001",
    )
    assert result["outcome"] == "ACCEPTED"
    assert client.attempts_made == 3
    assert len({s["HTTP_IDEMPOTENCY_KEY"] for s in front.seen}) == 1
    assert len({s["HTTP_X_SIGNATURE"] for s in front.seen}) == 3
    assert len({s["HTTP_X_TIMESTAMP"] for s in front.seen}) == 3  # never the same signature twice
    with engine_app.app_context():
        assert Payout.select().count() == 1


@pytest.mark.parametrize("status", ["429 Too Many Requests", "502 Bad Gateway", "504 Gateway Timeout"])
def test_each_retryable_status_is_retried(engine_app, served, status: str) -> None:
    front = FailingFront(engine_app, failures=1, status=status)
    client = _client(engine_app, served(front))
    assert client.list_payouts()["payouts"] == []
    assert client.attempts_made == 2


def test_at_most_three_attempts_are_made(engine_app, served) -> None:
    front = FailingFront(engine_app, failures=10)
    client = _client(engine_app, served(front))
    with pytest.raises(EngineError) as caught:
        client.get_payout("pyo_absent0001")
    assert caught.value.status == 503
    assert len(front.seen) == 3


@pytest.mark.parametrize("status", ["400 Bad Request", "409 Conflict", "500 Internal Server Error"])
def test_a_4xx_or_a_500_is_never_retried(engine_app, served, status: str) -> None:
    front = FailingFront(engine_app, failures=5, status=status)
    client = _client(engine_app, served(front))
    with pytest.raises(EngineError):
        client.list_payouts()
    assert len(front.seen) == 1


def test_transport_failures_are_retried_then_reported() -> None:
    client = EngineClient(
        f"http://127.0.0.1:{free_port()}", "op_alpha0001", "0" * 64, backoff=0.01, timeout=1
    )
    with pytest.raises(EngineError, match="transport failure"):
        client.list_payouts()
    assert client.attempts_made == 3


def test_a_real_4xx_from_the_engine_surfaces_with_its_envelope(engine_app, served) -> None:
    client = _client(engine_app, served(FailingFront(engine_app, failures=0)))
    with pytest.raises(EngineError) as caught:
        client.get_payout("pyo_absent0001")
    assert caught.value.status == 404
    assert caught.value.body["type"] == "about:blank#not-found"
    assert client.attempts_made == 1
