"""GET /openapi.json for an app, built once from its routes on first request."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from flask import Flask, jsonify


def serve_openapi(app: Flask, build: Callable[[], dict[str, Any]]) -> None:
    cache: dict[str, Any] = {}

    def openapi_document() -> Any:
        if "doc" not in cache:
            cache["doc"] = build()
        return jsonify(cache["doc"])

    app.add_url_rule("/openapi.json", "openapi_document", openapi_document, methods=["GET"])
