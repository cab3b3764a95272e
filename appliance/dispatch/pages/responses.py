"""The headers every page carries, and an HTML page from static/ with them (the tracking area
serves its page through this too)."""

from __future__ import annotations

from pathlib import Path

from flask import Response, send_from_directory

from appliance.common.assets import static_dir
from appliance.dispatch.pages.csp import policy
from appliance.dispatch.runtime import runtime


def secure(response: Response, page: Path | None = None) -> Response:
    """Add the page headers: the CSP (with the hashes of the page's inline blocks), no referrer (some
    URLs carry one-time tokens), no sniffing, no framing."""
    response.headers["Content-Security-Policy"] = policy(runtime().settings, page)
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    return response


def page_response(relative: str) -> Response:
    """An HTML page from static/, never cached (a new release shows at once)."""
    response = send_from_directory(static_dir(), relative, mimetype="text/html", max_age=0)
    return secure(response, static_dir() / relative)
