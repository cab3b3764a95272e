"""The pages of the dispatch service, plain HTML and JS from static/ with no build step: the
dispatcher console (/console/), the courier app (/app/, an installable PWA), the pages behind
emailed links (/login?token=, /invite/<token>) and their shared assets. Every page answers with the
Content-Security-Policy of csp.py."""

from __future__ import annotations

from flask import Blueprint, Response, abort, redirect, request

from appliance.common.metrics import local_request
from appliance.dispatch.pages.responses import REVALIDATE, asset_response, page_response, secure

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


def _asset(folder: str, name: str) -> Response:
    if name.lower().endswith((".html", ".htm")):
        abort(404)
    if folder == "app" and name == "sw.js":
        # The service worker must come from /app/ to control /app/, at one URL, always revalidated.
        response = asset_response("app/sw.js", REVALIDATE)
        response.headers["Service-Worker-Allowed"] = "/app/"
        return secure(response)  # a worker's script carries the policy it runs under
    return asset_response(folder + "/" + name)


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
    return asset_response(name)


@bp.route("/favicon.ico", methods=["GET"])
def favicon() -> Response:
    # Browsers ask for it whatever the page says; the same icon as the pages' <link rel="icon">.
    return asset_response("favicon.ico", "public, max-age=86400")
