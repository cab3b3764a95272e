"""The dispatch Problem shape: type, title, status (required), plus detail, code and errors."""

from __future__ import annotations

from typing import Any

from appliance.common.problems import ApiError
from appliance.dispatch.words import language, problem_texts

PROBLEM_SCHEMA: dict[str, Any] = {
    "type": "object",
    "required": ["type", "title", "status"],
    "properties": {
        "type": {"type": "string"},
        "title": {
            "type": "string",
            "description": "The HTTP status phrase, in English whatever the language.",
        },
        "status": {"type": "integer"},
        "detail": {
            "type": "string",
            "description": "A sentence for people in the reader's language (hy, ru, en): the "
            "signed-in user's language, else Accept-Language, else English; a Retry-After is said "
            "as a wait at its end.",
        },
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
                "properties": {
                    "field": {"type": "string", "description": "the API's own field name, in any language"},
                    "message": {"type": "string", "description": "in the reader's language"},
                },
            },
        },
        "requestId": {"type": "string"},
    },
}


# A vague "later" the exact wait replaces (the rate limiter's, the event streams', the faults').
_VAGUE_WAITS = (("; try again later.", "."), ("; retry shortly.", "."), (" Try again shortly.", ""),
                (" Try again later.", ""))  # fmt: skip


def _without_vague_wait(text: str) -> str:
    for vague, end in _VAGUE_WAITS:
        if text.endswith(vague):
            return text[: -len(vague)] + end
    return text


def render(error: ApiError, request_id: str) -> dict[str, Any]:
    """The Problem body, its ``detail`` and ``errors[].message`` in the reader's language
    (words/language.py); ``type``, ``title``, ``code`` and ``errors[].field`` as the API names them.
    A ``Retry-After`` is said as a wait at the end of the detail."""
    # A Problem about the database itself (5xx) does not read the signed-in user's language from it.
    lang = language.of_request(look_up_user=error.status < 500)
    body: dict[str, Any] = {"type": error.type, "title": error.title, "status": error.status}
    retry_after = error.headers.get("Retry-After", "")
    if retry_after.isdigit():
        text = _without_vague_wait(error.detail)
        body["detail"] = f"{problem_texts.detail(text, lang)} {problem_texts.wait(int(retry_after), lang)}"
    else:
        body["detail"] = problem_texts.detail(error.detail, lang)
    if error.code:
        body["code"] = error.code
    if error.errors:
        body["errors"] = [
            {"field": e["field"], "message": problem_texts.message(e["message"], lang)} for e in error.errors
        ]
    body["requestId"] = request_id
    return {**error.extensions, **body}
