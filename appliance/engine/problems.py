"""The engine's one error envelope: type, detail, status, requestId."""

from __future__ import annotations

from typing import Any

from appliance.common.problems import ApiError

PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "detail", "status", "requestId"],
    "properties": {
        "type": {"type": "string", "examples": ["about:blank#conflict"]},
        "detail": {"type": "string"},
        "status": {"type": "integer"},
        "requestId": {"type": "string"},
        "errors": {
            "type": "array",
            "items": {
                "type": "object",
                "properties": {"field": {"type": "string"}, "message": {"type": "string"}},
            },
        },
    },
}


def render(error: ApiError, request_id: str) -> dict[str, Any]:
    body: dict[str, Any] = {
        "type": error.type,
        "detail": error.detail,
        "status": error.status,
        "requestId": request_id,
    }
    if error.errors:
        body["errors"] = [{"field": e["field"], "message": e["message"]} for e in error.errors]
    return {**error.extensions, **body}
