"""The headers every page carries, an HTML page from static/ with them (the tracking area serves its
page through this too), and the static files themselves: compressed as the browser accepts
(compression.py), cached for a year when asked for by their content hash (assets.py), revalidated
otherwise."""

from __future__ import annotations

from flask import Response, abort, request

from appliance.dispatch.pages import compression
from appliance.dispatch.pages.assets import Asset, table
from appliance.dispatch.pages.csp import policy_for
from appliance.dispatch.runtime import runtime

IMMUTABLE = "public, max-age=31536000, immutable"
# Pages and files asked for without their hash: kept, but asked again each time (a 304 when unchanged).
REVALIDATE = "no-cache"


def secure(response: Response, page: bytes | None = None) -> Response:
    """Add the page headers: the CSP (with the hashes of the page's inline blocks), no referrer (some
    URLs carry one-time tokens), no sniffing, no framing."""
    response.headers["Content-Security-Policy"] = policy_for(runtime().settings, page)
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    return response


def _encoded(mimetype: str, body: bytes, digest: str | None) -> tuple[bytes, str | None, bool]:
    """(bytes to send, Content-Encoding, whether the answer varies by Accept-Encoding)."""
    if not compression.compressible(mimetype, len(body)):
        return body, None, False
    encoding = compression.chosen_encoding(request.headers.get("Accept-Encoding"))
    if encoding is None:
        return body, None, True
    if digest is None:  # rendered for this request
        return compression.compress(body, encoding, fast=True), encoding, True
    folder = runtime().settings.data_dir / "cache" / "static"
    return compression.cache.get(folder, digest, body, encoding), encoding, True


def _answer(body: bytes, mimetype: str, cache_control: str, digest: str | None) -> Response:
    sent, encoding, varies = _encoded(mimetype, body, digest)
    etag = None
    if digest is not None:
        etag = digest[:32] + (f"-{compression.EXTENSIONS[encoding]}" if encoding else "")
        if request.if_none_match.contains(etag):
            response = Response(status=304)
            response.set_etag(etag)
            response.headers["Cache-Control"] = cache_control
            if varies:
                response.headers["Vary"] = "Accept-Encoding"
            return response
    response = Response(sent, mimetype=mimetype)
    if encoding:
        response.headers["Content-Encoding"] = encoding
    if varies:
        response.headers["Vary"] = "Accept-Encoding"
    if etag:
        response.set_etag(etag)
    response.headers["Cache-Control"] = cache_control
    return response


def asset_response(relative: str, cache_control: str | None = None) -> Response:
    """A static file: for a year when the request names its current hash (?v=), else revalidated."""
    asset = table().get(relative)
    if asset is None:
        abort(404)
    if cache_control is None:
        cache_control = IMMUTABLE if request.args.get("v") == asset.version else REVALIDATE
    return _answer(asset.body, asset.mimetype, cache_control, asset.digest)


def page_asset(relative: str) -> Asset:
    asset = table().get(relative)
    if asset is None:
        abort(404)
    return asset


def page_response(relative: str) -> Response:
    """An HTML page from static/, its references hashed, revalidated each time (a release shows at once)."""
    asset = page_asset(relative)
    return secure(_answer(asset.body, "text/html", REVALIDATE, asset.digest), asset.body)


def rendered_page_response(body: bytes, template: bytes) -> Response:
    """A page rendered for this request (its inline blocks are those of its template), never kept."""
    response = _answer(body, "text/html", "no-store", None)
    return secure(response, template)
