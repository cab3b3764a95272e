"""GET /metrics on each port, in the Prometheus text format (prometheus-client).

What each service exposes:
- ``appliance_http_requests_total{method, route, status}`` and
  ``appliance_http_request_duration_seconds{method, route}``: every answered request, by route
  template (``/orders/<int:order_id>``, never the raw path: ids and tokens stay out of the labels
  and the number of series stays fixed), counted in the request's after-hook;
- at scrape time, from the database: each background queue's depth, rows in progress under a
  lease and the age of its oldest due row; each single-holder worker lease and its holder; for
  the engine, each chain's head and how far the deposit watcher is behind it.

Who may read it (settings ``metrics`` and ``metrics_token``): ``loopback`` (default) answers only
clients on 127.0.0.0/8 or ::1 (not a request a proxy forwarded, unless ``trusted_proxy`` names it
and the client behind it is local), ``open`` anyone, ``off`` nobody (404); a request with
``Authorization: Bearer <metrics_token>`` is answered from anywhere when a token is set.

The hot path is one dictionary lookup for the route's counters and two increments: the labelled
children are created once per (method, route, status) and kept.
"""

from __future__ import annotations

import dataclasses
import hmac
import time
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import peewee
from flask import Flask, Response, g, request
from prometheus_client import CollectorRegistry, Counter, Histogram, disable_created_metrics
from prometheus_client.core import GaugeMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_LATEST, generate_latest
from prometheus_client.registry import Collector

from appliance.common import clock, faults

# Seconds: from a cached listing (~1 ms) to a plan suggestion with the solver's 2 s limit.
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)
ACCESS = ("loopback", "open", "off")


@dataclasses.dataclass(frozen=True)
class Queue:
    """Rows of ``model`` that match ``pending()`` are waiting work (the LeasedQueue's rows)."""

    name: str
    model: type[peewee.Model]
    pending: Callable[[], Any]
    created: str = "created_at"


@dataclasses.dataclass(frozen=True)
class Lease:
    """Single-holder leases: one row per job in ``model`` (name, holder, lease_until)."""

    kind: str
    model: type[peewee.Model]
    name_field: str
    label: Callable[[str], str] = str


GaugeSource = Callable[[], Iterable[Metric]]


class DatabaseCollector(Collector):
    """Queue depths and ages, leases and any further gauges, read when Prometheus scrapes."""

    def __init__(
        self,
        database: peewee.DatabaseProxy,
        queues: Iterable[Queue],
        leases: Iterable[Lease],
        extra: Iterable[GaugeSource] = (),
    ) -> None:
        self.database = database
        self.queues = list(queues)
        self.leases = list(leases)
        self.extra = list(extra)

    def collect(self) -> Iterator[Metric]:
        with self.database.connection_context():
            yield from self._queues()
            yield from self._leases()
        for source in self.extra:
            yield from source()

    def _queues(self) -> Iterator[Metric]:
        depth = GaugeMetricFamily(
            "appliance_queue_depth", "Rows waiting in a background queue.", labels=["queue"]
        )
        leased = GaugeMetricFamily(
            "appliance_queue_in_progress", "Rows of a queue held under an unexpired lease.", labels=["queue"]
        )
        age = GaugeMetricFamily(
            "appliance_queue_oldest_age_seconds",
            "Age of the oldest row waiting in a queue (0 when empty).",
            labels=["queue"],
        )
        moment = clock.now()
        for queue in self.queues:
            m = queue.model
            created = getattr(m, queue.created)
            row = (
                m.select(
                    peewee.fn.COUNT(m.id),
                    peewee.fn.SUM(
                        peewee.Case(None, [((m.lease_until.is_null(False)) & (m.lease_until > moment), 1)], 0)
                    ),
                    peewee.fn.MIN(created),
                )
                .where(queue.pending())
                .tuples()
                .first()
            )
            count, in_progress, oldest = row or (0, 0, None)
            depth.add_metric([queue.name], count or 0)
            leased.add_metric([queue.name], in_progress or 0)
            oldest_at = created.python_value(oldest) if oldest is not None else None
            age.add_metric([queue.name], max(0.0, (moment - oldest_at).total_seconds()) if oldest_at else 0.0)
        yield from (depth, leased, age)

    def _leases(self) -> Iterator[Metric]:
        held = GaugeMetricFamily(
            "appliance_worker_lease_held",
            "1 while the named holder (host/pid/start/id) holds a background job's single-holder lease.",
            labels=["job", "holder"],
        )
        left = GaugeMetricFamily(
            "appliance_worker_lease_seconds_left",
            "Seconds until a job's lease expires (0: free).",
            labels=["job"],
        )
        moment = clock.now()
        for lease in self.leases:
            m = lease.model
            for name, holder, until in m.select(
                getattr(m, lease.name_field), m.holder, m.lease_until
            ).tuples():
                job = f"{lease.kind}:{lease.label(name)}"
                until_at = m.lease_until.python_value(until) if until is not None else None
                remaining = (until_at - moment).total_seconds() if until_at else 0.0
                if holder and remaining > 0:
                    held.add_metric([job, holder], 1)
                left.add_metric([job], max(0.0, remaining))
        yield from (held, left)


class HttpMetrics:
    """Requests by route template and status, and their latency, for one service."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.requests = Counter(
            "appliance_http_requests",
            "Answered requests by method, route template and status.",
            ["method", "route", "status"],
            registry=registry,
        )
        self.latency = Histogram(
            "appliance_http_request_duration_seconds",
            "Time from the first hook to the answer, by method and route template.",
            ["method", "route"],
            buckets=LATENCY_BUCKETS,
            registry=registry,
        )
        self._children: dict[tuple[str, str, int], tuple[Any, Any]] = {}

    def observe(self, method: str, route: str, status: int, seconds: float) -> None:
        key = (method, route, status)
        children = self._children.get(key)
        if children is None:
            children = (
                self.requests.labels(method, route, str(status)),
                self.latency.labels(method, route),
            )
            self._children[key] = children
        children[0].inc()
        children[1].observe(seconds)


def _is_loopback(address: str | None) -> bool:
    if not address:
        return False
    address = address.removeprefix("::ffff:")
    return address == "::1" or address.startswith("127.")


# Headers a reverse proxy adds. Without ``trusted_proxy`` the serving layer passes them through
# unbelieved (appliance/serving/listener.py), so a request relayed by a proxy on this same host, whose peer
# is loopback, is still recognised as coming from elsewhere.
FORWARDING_HEADERS = ("Forwarded", "X-Forwarded-For", "X-Forwarded-Host", "X-Forwarded-Proto", "X-Real-IP")


def local_request(trusted_proxy: str) -> bool:
    """The current request comes from a client on this machine: a loopback peer, and, when no
    proxy is trusted, no forwarding header (a proxy on this host would otherwise make every
    client on the internet look local). With ``trusted_proxy`` set, the peer address already is
    the client's own (waitress takes it from the trusted proxy's X-Forwarded-For)."""
    if not trusted_proxy and any(name in request.headers for name in FORWARDING_HEADERS):
        return False
    return _is_loopback(request.remote_addr)


def bearer_matches(token: str, authorization: str | None) -> bool:
    return bool(
        token
        and authorization
        and authorization.startswith("Bearer ")
        and hmac.compare_digest(authorization[7:].encode(), token.encode())
    )


def allowed(mode: str, token: str, remote_addr: str | None, authorization: str | None) -> bool:
    if mode == "off":
        return False
    if bearer_matches(token, authorization):
        return True
    return mode == "open" or _is_loopback(remote_addr)


def may_see_details(settings: Any) -> bool:
    """Who may read internal details (health checks' errors, timings, bucket names): a local
    client, or one showing the metrics token. Everyone else gets statuses only."""
    return local_request(settings.trusted_proxy) or bearer_matches(
        settings.metrics_token, request.headers.get("Authorization")
    )


def install(
    app: Flask,
    settings: Any,
    collector: Collector | None = None,
) -> HttpMetrics:
    """Count every request of ``app`` and serve GET /metrics on it (with ``collector``'s gauges)."""
    disable_created_metrics()  # no *_created series: half as many lines, nothing Prometheus needs
    registry = CollectorRegistry(auto_describe=False)
    http = HttpMetrics(registry)
    if collector is not None:
        registry.register(collector)
    registry.register(faults.FaultCollector())
    app.extensions["metrics"] = http
    mode, token = settings.metrics, settings.metrics_token

    @app.after_request
    def _count(response: Response) -> Response:
        started = g.get("started")
        if started is not None:
            rule = request.url_rule
            http.observe(
                request.method,
                rule.rule if rule is not None else "unmatched",
                response.status_code,
                time.perf_counter() - started,
            )
        return response

    def metrics_view() -> Response:
        # A forwarded request from a proxy on this host is not a loopback client (issue 33).
        local = local_request(settings.trusted_proxy)
        if not allowed(
            mode, token, request.remote_addr if local else None, request.headers.get("Authorization")
        ):
            from werkzeug.exceptions import NotFound

            raise NotFound()  # a Problem 404, as for any path that does not exist
        return Response(generate_latest(registry), mimetype=None, content_type=CONTENT_TYPE_LATEST)

    app.add_url_rule("/metrics", endpoint="metrics", view_func=metrics_view, methods=["GET"])
    return http
