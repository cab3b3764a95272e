"""Treasury positions and reconciliation findings are deployment-global: operator callers get 501
about:blank#tenant-scope-unavailable (after a valid signature)."""

from __future__ import annotations

from typing import Annotated

from flask import Blueprint
from pydantic import StringConstraints

from appliance.common.api import QuerySchema, endpoint
from appliance.common.problems import NotImplementedYet
from appliance.engine.auth.signature import SIGNED

bp = Blueprint("treasury", __name__)


class AssetQuery(QuerySchema):
    asset: Annotated[str, StringConstraints(pattern=r"^[A-Z0-9]{2,16}$")] | None = None


def _unavailable() -> NotImplementedYet:
    return NotImplementedYet(
        "Treasury and reconciliation reads are deployment-global and not available to operators.",
        slug="tenant-scope-unavailable",
    )


@endpoint(
    bp,
    "GET",
    "/v1/treasury/positions",
    query=AssetQuery,
    guard=SIGNED,
    auth_first=False,
    status=501,
    errors=(501,),
    tags=["Treasury"],
)
def treasury_positions(query: AssetQuery):
    """Always 501 about:blank#tenant-scope-unavailable for operator callers."""
    raise _unavailable()


@endpoint(
    bp,
    "GET",
    "/v1/reconciliation/findings",
    query=AssetQuery,
    guard=SIGNED,
    auth_first=False,
    status=501,
    errors=(501,),
    tags=["Treasury"],
)
def reconciliation_findings(query: AssetQuery):
    """Always 501 about:blank#tenant-scope-unavailable for operator callers."""
    raise _unavailable()
