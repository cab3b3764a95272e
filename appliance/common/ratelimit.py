"""Rate limits of public endpoints, per client address, with flask-limiter; and, on the sign-in
endpoints, per account or target e-mail address as well (``@keyed_limit``), counted in the same
store, so a guesser spreading over many addresses or a mailbox flooded from many is still held.

A view marked with ``@public_limit`` (beneath ``endpoint``) is wrapped by the app's limiter when
the app is built, so each app has its own counters (memory:// for one process, redis://… shared by
several processes and hosts). A limited request answers a Problem 429 in the app's shape.

While a shared store cannot be reached, each process counts in its own memory instead (and looks
at the store again, backing off, until it answers): a Redis outage loosens the limits to per
process, it never turns a sign-in into a 500 or makes it wait for long.
"""

from __future__ import annotations

import functools
import math
import time
from collections.abc import Callable
from typing import Any

from flask import Flask, request
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address

from appliance.common.problems import TooManyRequests
from appliance.common.webapp import ProblemRenderer, problem_response


def public_limit[F: Callable[..., Any]](view: F) -> F:
    view._public_limit = True  # type: ignore[attr-defined]
    return view


def _plain(value: str) -> str:
    return value.strip().lower()


def keyed_limit[F: Callable[..., Any]](
    limit: str, field: str | Callable[[], str], normalise: Callable[[str], str] = _plain
) -> Callable[[F], F]:
    """Also limit a view per value of the JSON body's ``field`` (dotted for nested objects, e.g.
    ``owner.email``): per account on sign-in, per target address on the endpoints that send mail.
    The key is ``normalise(value)`` (by default without case or surrounding spaces): the limit
    runs before the body is validated, so it must spell the value as the service will (an e-mail
    address: the one normalised address the account is stored under, or a variant spelling
    would count apart). A body without it counts per client address. ``field`` may instead be a
    function of the request giving the key itself."""

    def mark(view: F) -> F:
        marks = [*getattr(view, "_keyed_limits", ()), (limit, field, normalise)]
        view._keyed_limits = marks  # type: ignore[attr-defined]
        return view

    return mark


def _body_value(field: str, normalise: Callable[[str], str]) -> str:
    value: Any = request.get_json(silent=True)
    for part in field.split("."):
        value = value.get(part) if isinstance(value, dict) else None
    if isinstance(value, str) and value.strip():
        return f"{field}:{normalise(value)}"
    return f"address:{get_remote_address()}"


def _marks(view: Any, name: str) -> Any:
    return getattr(view, name, None) or getattr(getattr(view, "__wrapped__", None), name, None)


def install(
    app: Flask, *, enabled: bool, limit: str, storage_uri: str, render_problem: ProblemRenderer
) -> Limiter:
    shared = not storage_uri.startswith("memory://")
    limiter = Limiter(
        get_remote_address,
        app=app,
        storage_uri=storage_uri,
        # Seconds, for the Redis client: an unreachable store must not hold a request.
        storage_options={"socket_connect_timeout": 1, "socket_timeout": 1} if shared else {},
        in_memory_fallback_enabled=shared,
        default_limits=[],
        enabled=enabled,
        headers_enabled=True,
    )
    # A disabled limiter would still look its limits up on every request of a wrapped view (a
    # tenth of GET /track's time): with limits off, the views are left as they are.
    for endpoint, view in list(app.view_functions.items()) if enabled else ():
        wrapped: Any = view
        for keyed, field, normalise in _marks(view, "_keyed_limits") or ():
            if callable(field):
                key, scope = field, f"by-{field.__name__}"
            else:
                key, scope = functools.partial(_body_value, field, normalise), f"by-{field}"
            wrapped = limiter.limit(keyed, key_func=key, scope=scope)(wrapped)
        if _marks(view, "_public_limit"):
            wrapped = limiter.limit(limit)(wrapped)
        app.view_functions[endpoint] = wrapped

    # flask-limiter keeps only a weak reference to its limiter: the app must hold it.
    app.extensions["appliance_limiter"] = limiter

    @app.errorhandler(RateLimitExceeded)
    def _limited(error: RateLimitExceeded) -> Any:
        # The wait in the Problem itself, so that a client can say it (dispatch words it).
        current = limiter.current_limit
        wait = math.ceil(current.reset_at - time.time()) if current is not None else 0
        headers = {"Retry-After": str(max(1, wait))} if wait > 0 else {}
        problem = TooManyRequests("Too many requests; try again later.", headers=headers)
        return problem_response(problem, render_problem)

    return limiter
