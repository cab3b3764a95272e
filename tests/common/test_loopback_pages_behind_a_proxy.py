""" "Loopback only" pages (/metrics, the map check) behind a reverse proxy on the same host (issue
33): the proxy's connection comes from 127.0.0.1, so without ``trusted_proxy`` every client on the
internet would look local. Served through the real waitress listener of `appliance serve`."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator

import pytest
import requests

from appliance.dispatch.app import create_app
from appliance.serving.listener import Listener

FORWARDED = [
    {"X-Forwarded-For": "203.0.113.9"},
    {"Forwarded": "for=203.0.113.9;proto=https"},
    {"X-Forwarded-Proto": "https"},
    {"X-Real-IP": "203.0.113.9"},
]


@contextlib.contextmanager
def listening(app, trusted_proxy: str = "") -> Iterator[str]:
    listener = Listener("dispatch", app, "127.0.0.1", 0, 2, trusted_proxy=trusted_proxy)
    listener.start()
    try:
        yield listener.url
    finally:
        listener.stop_accepting()
        listener.close()


@pytest.fixture
def served(dispatch_app) -> Iterator[str]:
    with listening(dispatch_app) as url:
        yield url


def test_metrics_answer_a_loopback_client_that_no_proxy_relayed(served) -> None:
    assert requests.get(served + "/metrics", timeout=10).status_code == 200


@pytest.mark.parametrize("headers", FORWARDED, ids=lambda h: next(iter(h)))
def test_metrics_refuse_a_request_a_same_host_proxy_forwarded_without_trusted_proxy(served, headers) -> None:
    assert requests.get(served + "/metrics", headers=headers, timeout=10).status_code == 404


@pytest.mark.parametrize("headers", FORWARDED, ids=lambda h: next(iter(h)))
def test_the_map_check_page_refuses_a_forwarded_request_without_trusted_proxy(served, headers) -> None:
    assert requests.get(served + "/static/map-check.html", timeout=10).status_code == 200
    assert requests.get(served + "/static/map-check.html", headers=headers, timeout=10).status_code == 404


def test_with_a_trusted_proxy_the_client_behind_it_decides(settings) -> None:
    app = create_app(settings.replace(trusted_proxy="127.0.0.1"))
    with listening(app, trusted_proxy="127.0.0.1") as url:
        remote = requests.get(url + "/metrics", headers={"X-Forwarded-For": "203.0.113.9"}, timeout=10)
        local = requests.get(url + "/metrics", headers={"X-Forwarded-For": "127.0.0.1"}, timeout=10)
    assert remote.status_code == 404
    assert local.status_code == 200


def test_a_forwarded_request_sees_healthz_statuses_only_without_trusted_proxy(served) -> None:
    direct = requests.get(served + "/healthz", timeout=10).json()
    relayed = requests.get(served + "/healthz", headers=FORWARDED[0], timeout=10).json()
    assert "durationMs" in direct["checks"]["database"]
    assert relayed["checks"]["database"] == {"status": "pass"}
