"""What every Flask app of the appliance shares: request ids, one log line per request, Problems for
every failure (routing 404/405 and unexpected errors included), and per-request connections."""

from __future__ import annotations

import gzip
import itertools
import json
import logging
import os
import re
import time
from collections.abc import Callable
from typing import Any

import peewee
from flask import Flask, Response, g, request
from werkzeug.exceptions import HTTPException, NotFound
from werkzeug.routing import IntegerConverter

from appliance.common import faults, problems
from appliance.common.api import ID_MAX, UNPROCESSABLE_STATUS_KEY
from appliance.common.jsonio import OrjsonProvider
from appliance.common.problems import ApiError

log = logging.getLogger("appliance.http")

ProblemRenderer = Callable[[ApiError, str], dict[str, Any]]

_REQUEST_ID = re.compile(r"^[A-Za-z0-9._:-]{8,128}$")


class _RequestIds:
    """Request ids unique across processes and restarts without a system call per request (a
    uuid4 reads the kernel's random source each time, and the thread gives up the interpreter
    lock while it does): a random prefix per process, then a counter; 32 hex digits like a
    uuid's. A forked serving process draws its own prefix."""

    def __init__(self) -> None:
        self.reset()
        os.register_at_fork(after_in_child=self.reset)

    def reset(self) -> None:
        self._prefix = os.urandom(8).hex()
        self._counter = itertools.count(1)

    def __call__(self) -> str:
        return f"{self._prefix}{next(self._counter):016x}"


_new_request_id = _RequestIds()


def request_id() -> str:
    return getattr(g, "request_id", "") or "-"


def problem_response(error: ApiError, render: ProblemRenderer) -> Response:
    body = render(error, request_id())
    response = Response(
        json.dumps(body, ensure_ascii=False, separators=(",", ":")),
        status=error.status,
        mimetype="application/problem+json",
    )
    for name, value in error.headers.items():
        response.headers[name] = value
    return response


COMPRESS_FROM_BYTES = 32 * 1024  # below this, compressing costs more than sending


def _compress_large_json(response: Response) -> None:
    """gzip (fast level) large JSON answers, such as a day of 2,000 orders, for clients that
    accept it: a twelfth of the bytes to send and to read. A kept answer (common/kept.py) comes
    compressed once already."""
    if response.direct_passthrough or response.is_streamed:
        return
    data = response.get_data()
    # The size first: most answers are small, and parsing the content type costs more than that.
    if (
        len(data) >= COMPRESS_FROM_BYTES
        and response.mimetype == "application/json"
        and not response.headers.get("Content-Encoding")
    ):
        gzip_when_accepted(response, lambda: gzip.compress(data, compresslevel=1))


def gzip_when_accepted(response: Response, compressed: Callable[[], bytes]) -> None:
    """Send a large answer gzip-encoded to a client that takes gzip (``compressed`` is asked only
    then), and say that the answer varies with Accept-Encoding either way."""
    response.vary.add("Accept-Encoding")
    if request.accept_encodings["gzip"]:
        response.set_data(compressed())
        response.headers["Content-Encoding"] = "gzip"


# Path variables that are secrets (tracking, invite and sign-in links): the access line shows their
# route template (``/track/{token}``), never the value. Any other path segment this long and made
# of token characters (a mistyped link that matched no route) is shown as ``{token}`` too.
SECRET_PATH_VARIABLES = frozenset({"token"})
_TOKEN_SEGMENT = re.compile(r"(?<=/)[A-Za-z0-9_-]{20,}(?=/|$)")


def loggable_path() -> str:
    """The request's path as logs may keep it: secret path variables replaced by ``{name}``."""
    path = request.path
    args = request.view_args
    if request.url_rule is None or not args:
        return _TOKEN_SEGMENT.sub("{token}", path)
    for name, value in args.items():
        if name in SECRET_PATH_VARIABLES and isinstance(value, str) and value:
            path = path.replace(value, "{" + name + "}")
    return path


# Integer ids in paths are database keys: beyond a signed 64-bit integer no record can exist, and the
# database driver would raise (SQLite: OverflowError) instead of finding nothing. Such an id is a
# missing record, 404, found while matching (a rule that merely failed to match could fall through
# to another rule and answer 405). Leading signs never match, as with Flask's own converter. The
# length is checked before the conversion: Python refuses to convert more than 4,300 digits
# (ValueError, a 500 raised while matching, before the request even has an id).
_ID_MAX_DIGITS = len(str(ID_MAX))


class IdConverter(IntegerConverter):
    def to_python(self, value: str) -> int:
        digits = value.lstrip("0")
        if len(digits) > _ID_MAX_DIGITS:
            raise NotFound()
        number = int(digits or "0")
        if number > ID_MAX:
            raise NotFound()
        return number


class _App(Flask):
    """Flask, remembering which views and hooks are plain functions: Flask asks
    ``inspect.iscoroutinefunction`` on every call of each (five times a request), and the answer
    never changes."""

    _CACHED_AT_MOST = 4096  # views and hooks are a few hundred; anything made per call is not kept

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self._sync: dict[Callable[..., Any], Callable[..., Any]] = {}

    def ensure_sync(self, func: Callable[..., Any]) -> Callable[..., Any]:
        try:
            return self._sync[func]
        except KeyError:
            sync = super().ensure_sync(func)
            if len(self._sync) < self._CACHED_AT_MOST:
                self._sync[func] = sync
            return sync
        except TypeError:  # not hashable
            return super().ensure_sync(func)


# The largest request body either service reads (docs/errors.md: over it, 413). The server refuses a
# larger one itself, chunked or not, before any route is matched (appliance/serving/listener.py).
MAX_BODY_BYTES = 2 * 1024 * 1024


def create_base_app(
    name: str,
    *,
    render_problem: ProblemRenderer,
    database: peewee.DatabaseProxy,
    max_body_bytes: int = MAX_BODY_BYTES,
    unprocessable_status: int = 422,
) -> Flask:
    """``unprocessable_status``: the answer to a body that reads fine but cannot be processed
    (appliance.common.api: 422 for dispatch, 400 for the engine)."""
    app = _App(name, static_folder=None)
    app.json = OrjsonProvider(app)
    app.config["MAX_CONTENT_LENGTH"] = max_body_bytes
    app.config[UNPROCESSABLE_STATUS_KEY] = unprocessable_status
    app.url_map.strict_slashes = False
    app.url_map.converters["int"] = IdConverter

    @app.before_request
    def _start() -> None:
        incoming = request.headers.get("X-Request-Id", "")
        g.request_id = incoming if _REQUEST_ID.match(incoming) else _new_request_id()
        g.started = time.perf_counter()

    @app.after_request
    def _finish(response: Response) -> Response:
        _compress_large_json(response)
        response.headers["X-Request-Id"] = request_id()
        response.headers.setdefault("Cache-Control", "no-store")
        response.headers["X-Content-Type-Options"] = "nosniff"
        if not log.isEnabledFor(logging.INFO):  # the access line is not written: nothing to gather
            return response
        elapsed = (time.perf_counter() - g.get("started", time.perf_counter())) * 1000
        rid = request_id()
        path = loggable_path()
        log.info(
            "%s %s %s %.1fms request_id=%s",
            request.method,
            path,
            response.status_code,
            elapsed,
            rid,
            # The same values as fields, for JSON log lines (APPLIANCE_LOG_FORMAT=json).
            extra={
                "method": request.method,
                "path": path,
                "status": response.status_code,
                "ms": round(elapsed, 1),
                "request_id": rid,
            },
        )
        return response

    @app.teardown_request
    def _close_db(_exc: BaseException | None) -> None:
        if not database.is_closed():
            database.close()

    @app.errorhandler(ApiError)
    def _api_error(error: ApiError) -> Response:
        return problem_response(error, render_problem)

    @app.errorhandler(HTTPException)
    def _http_error(error: HTTPException) -> Response:
        status = error.code or 500
        detail = {
            404: "No such resource.",
            405: "This method is not allowed on this resource.",
            413: "The request body is too large.",
        }.get(status, error.description)
        problem = problems.for_status(status, detail)
        response = problem_response(problem, render_problem)
        if status == 405 and hasattr(error, "valid_methods") and error.valid_methods:
            response.headers["Allow"] = ", ".join(error.valid_methods)
        return response

    @app.errorhandler(Exception)
    def _unexpected(error: Exception) -> Response:
        # A full disk, a failing disk or a database out of reach is a state of the machine, not
        # a bug: a 507 or 503 Problem, logged once a minute while it lasts (common/faults.py).
        fault = faults.classify(error)
        if fault is not None:
            faults.report(fault, error, f"{request.method} {loggable_path()}")
            return problem_response(faults.problem(fault), render_problem)
        log.exception("unhandled error request_id=%s", request_id())
        return problem_response(ApiError("An unexpected error occurred."), render_problem)

    return app
