"""Rate limits of public endpoints, per client address, with flask-limiter.

A view marked with ``@public_limit`` (beneath ``endpoint``) is wrapped by the app's limiter when
the app is built, so each app has its own counters (memory:// for one process, redis://… shared by
several processes and hosts). A limited request answers a Problem 429 in the app's shape.

While a shared store cannot be reached, each process counts in its own memory instead (and looks
at the store again, backing off, until it answers): a Redis outage loosens the limits to per
process, it never turns a sign-in into a 500 or makes it wait for long.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask
from flask_limiter import Limiter, RateLimitExceeded
from flask_limiter.util import get_remote_address

from appliance.common.problems import TooManyRequests
from appliance.common.webapp import ProblemRenderer, problem_response


def public_limit[F: Callable[..., Any]](view: F) -> F:
    view._public_limit = True  # type: ignore[attr-defined]
    return view


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
        if getattr(view, "_public_limit", False) or getattr(
            getattr(view, "__wrapped__", None), "_public_limit", False
        ):
            app.view_functions[endpoint] = limiter.limit(limit)(view)  # type: ignore[assignment]

    # flask-limiter keeps only a weak reference to its limiter: the app must hold it.
    app.extensions["appliance_limiter"] = limiter

    @app.errorhandler(RateLimitExceeded)
    def _limited(error: RateLimitExceeded) -> Any:
        problem = TooManyRequests("Too many requests from this address; try again in a minute.")
        return problem_response(problem, render_problem)

    return limiter
