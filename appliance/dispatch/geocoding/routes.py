"""GET /geo/search: the offline address index (dispatchers and owners)."""

from __future__ import annotations

from flask import Blueprint

from appliance.common.api import endpoint
from appliance.common.problems import Invalid, Unavailable
from appliance.dispatch.auth.guards import D
from appliance.dispatch.geo_types import in_service_area
from appliance.dispatch.geocoding import schemas, search, upgrade
from appliance.dispatch.runtime import runtime

bp = Blueprint("geocoding", __name__)


@endpoint(
    bp,
    "GET",
    "/geo/search",
    guard=D,
    query=schemas.SearchQuery,
    response=schemas.SearchResults,
    errors=(422, 503),
    error_notes={422: "near outside the service area", 503: "no address index: the road data is not built"},
    tags=["Geo"],
)
def geo_search(query: schemas.SearchQuery):
    """Streets, house numbers, entrances and named places, offline, best first (docs/routing.md)."""
    near = None
    if query.near is not None:
        lat, lon = (float(v) for v in query.near.split(","))
        if not in_service_area(lat, lon):
            raise Invalid(
                "near is outside the service area.",
                errors=[{"field": "near", "message": "outside the service area"}],
            )
        near = (lat, lon)
    try:
        found = search.search(runtime().settings.data_dir, query.q, near, query.limit)
    except search.IndexMissing as exc:
        if upgrade.is_stale(runtime().settings.data_dir):  # an older format: mended once, meanwhile 503
            upgrade.upgrade_in_background(runtime().settings.data_dir)
        raise Unavailable(str(exc)) from None
    return {"results": [f.body() for f in found]}
