"""One way to fail: service code raises these; each app renders them in its own Problem shape.

``status`` is the HTTP status, ``detail`` a sentence for people, ``code`` the machine-readable
code where a specification names one (dispatch puts it in the body as ``code``), ``errors`` the
per-field findings of validation, ``extensions`` further members of the body (RFC 9457 extension
members, such as the checks of a failing health probe); they never replace a Problem field.
"""

from __future__ import annotations

from http import HTTPStatus
from typing import Any


class ApiError(Exception):
    status: int = 500
    slug: str = "internal-error"

    def __init__(
        self,
        detail: str | None = None,
        *,
        code: str | None = None,
        errors: list[dict[str, Any]] | None = None,
        slug: str | None = None,
        headers: dict[str, str] | None = None,
        extensions: dict[str, Any] | None = None,
    ) -> None:
        self.detail = detail or HTTPStatus(self.status).phrase
        self.code = code
        self.errors = errors
        self.headers = headers or {}
        self.extensions = extensions or {}
        if slug:
            self.slug = slug
        super().__init__(self.detail)

    @property
    def type(self) -> str:
        return f"about:blank#{self.slug}"

    @property
    def title(self) -> str:
        return HTTPStatus(self.status).phrase


class BadRequest(ApiError):
    status, slug = 400, "bad-request"


class Unauthorized(ApiError):
    status, slug = 401, "unauthorized"


class Forbidden(ApiError):
    status, slug = 403, "forbidden"


class NotFound(ApiError):
    status, slug = 404, "not-found"


class MethodNotAllowed(ApiError):
    status, slug = 405, "method-not-allowed"


class Conflict(ApiError):
    status, slug = 409, "conflict"


class Gone(ApiError):
    status, slug = 410, "gone"


class PayloadTooLarge(ApiError):
    status, slug = 413, "payload-too-large"


class UnsupportedMediaType(ApiError):
    status, slug = 415, "unsupported-media-type"


class Invalid(ApiError):
    status, slug = 422, "validation"


class Locked(ApiError):
    status, slug = 423, "locked"


class TooManyRequests(ApiError):
    status, slug = 429, "too-many-requests"


class NotImplementedYet(ApiError):
    status, slug = 501, "not-implemented"


class BadGateway(ApiError):
    status, slug = 502, "bad-gateway"


class Unavailable(ApiError):
    status, slug = 503, "unavailable"


_BY_STATUS: dict[int, type[ApiError]] = {
    cls.status: cls
    for cls in (
        BadRequest,
        Unauthorized,
        Forbidden,
        NotFound,
        MethodNotAllowed,
        Conflict,
        Gone,
        PayloadTooLarge,
        UnsupportedMediaType,
        Invalid,
        Locked,
        TooManyRequests,
        NotImplementedYet,
        BadGateway,
        Unavailable,
    )
}


def for_status(status: int, detail: str | None = None) -> ApiError:
    """The typed error for an HTTP status (used for errors raised by Flask and werkzeug)."""
    cls = _BY_STATUS.get(status)
    if cls is None:
        error = ApiError(detail)
        error.status = status if 400 <= status < 600 else 500
        return error
    return cls(detail)
