"""The dispatch Problem shape: type, title, status (required), plus detail, code and errors."""

from __future__ import annotations

from typing import Any

from appliance.common.problems import ApiError

PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "title", "status"],
    "properties": {
        "type": {"type": "string"},
        "title": {"type": "string"},
        "status": {"type": "integer"},
        "detail": {"type": "string"},
        "code": {
            "type": "string",
            "description": "Machine-readable reason where the specification names one: used, expired, "
            "sign_in_required, already_member, has_sign_in, other_company, disabled.",
        },
        "errors": {
            "type": "array",
            "description": "Validation findings, one per field.",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
        "requestId": {"type": "string"},
    },
}


def render(error: ApiError, request_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {"type": error.type, "title": error.title, "status": error.status}
    body["detail"] = error.detail
    if error.code:
        body["code"] = error.code
    if error.errors:
        body["errors"] = [{"field": e["field"], "message": e["message"]} for e in error.errors]
    body["requestId"] = request_id
    return {**error.extensions, **body}
