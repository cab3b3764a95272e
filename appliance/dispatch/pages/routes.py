"""Serve the sign-in and invite pages and their shared assets (plain HTML and JS, no build step)."""

from __future__ import annotations

from flask import Blueprint, Response, send_from_directory

from appliance.common.assets import static_dir

bp = Blueprint("pages", __name__)


def _page(name: str) -> Response:
    response = send_from_directory(static_dir(), name, mimetype="text/html", max_age=0)
    response.headers["Referrer-Policy"] = "no-referrer"  # tokens sit in these URLs
    response.headers["Content-Security-Policy"] = (
        "default-src 'self'; img-src 'self' https: data:; style-src 'self' 'unsafe-inline'; "
        "script-src 'self' 'unsafe-inline'; connect-src 'self'; frame-ancestors 'none'"
    )
    return response


@bp.route("/login", methods=["GET"])
def login_page() -> Response:
    return _page("login.html")


@bp.route("/invite/<token>", methods=["GET"])
def invite_page(token: str) -> Response:
    return _page("invite.html")


@bp.route("/static/<path:name>", methods=["GET"])
def static_file(name: str) -> Response:
    return send_from_directory(static_dir(), name, max_age=3600)
