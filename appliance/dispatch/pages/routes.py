"""The pages of the dispatch service, plain HTML and JS from static/ with no build step: the
dispatcher console (/console/), the courier app (/app/, an installable PWA), the pages behind
emailed links (/login?token=, /invite/<token>) and their shared assets. Every page answers with the
Content-Security-Policy of csp.py."""

from __future__ import annotations

from flask import Blueprint, Response, abort, redirect, request, send_from_directory
from werkzeug.security import safe_join

from appliance.common.assets import static_dir
from appliance.common.metrics import local_request
from appliance.dispatch.pages.responses import page_response, secure

bp = Blueprint("pages", __name__)


@bp.route("/", methods=["GET"])
def root() -> Response:
    return redirect("/console/", code=302)  # type: ignore[return-value]


@bp.route("/login", methods=["GET"])
def login_page() -> Response:
    return page_response("login.html")


@bp.route("/invite/<token>", methods=["GET"])
def invite_page(token: str) -> Response:
    return page_response("invite.html")


@bp.route("/console", methods=["GET"])
@bp.route("/app", methods=["GET"])
def without_slash() -> Response:
    return redirect(request.path + "/", code=301)  # type: ignore[return-value]


@bp.route("/console/", methods=["GET"])
def console_page() -> Response:
    return page_response("console/index.html")


@bp.route("/app/", methods=["GET"])
def courier_app_page() -> Response:
    return page_response("app/index.html")


# The service worker must come from /app/ to control /app/; its manifest sits next to it.
_APP_TYPES = {
    "sw.js": "text/javascript",
    "manifest.webmanifest": "application/manifest+json",
}


def _asset(folder: str, name: str) -> Response:
    if safe_join(str(static_dir() / folder), name) is None or name.endswith(".html"):
        abort(404)
    mimetype = _APP_TYPES.get(name) if folder == "app" else None
    response = send_from_directory(static_dir() / folder, name, mimetype=mimetype, max_age=0)
    response.headers["Cache-Control"] = "no-cache"  # revalidate: the app is updated in place
    if name == "sw.js":
        response.headers["Service-Worker-Allowed"] = "/app/"
        secure(response)  # a worker's script carries the policy it runs under
    return response


@bp.route("/console/<path:name>", methods=["GET"])
def console_asset(name: str) -> Response:
    return _asset("console", name)


@bp.route("/app/<path:name>", methods=["GET"])
def courier_app_asset(name: str) -> Response:
    return _asset("app", name)


# The map's debug page answers only a browser on this machine, never through a proxy.
DEBUG_PAGES = {"map-check.html"}


def _local_request() -> bool:
    # A loopback peer and no forwarding header at all (passed through unbelieved without
    # trusted_proxy, kept from a trusted one): never a request a proxy relayed.
    return local_request(trusted_proxy="")


@bp.route("/static/<path:name>", methods=["GET"])
def static_file(name: str) -> Response:
    if name in DEBUG_PAGES:
        if not _local_request():
            abort(404)
        return page_response(name)
    if name.lower().endswith((".html", ".htm")):
        # Pages are served only at their own routes, with the page headers; a copy here would be
        # the same page without its Content-Security-Policy.
        abort(404)
    return send_from_directory(static_dir(), name, max_age=3600)
