"""Treasury positions and reconciliation findings are deployment-global: operator callers get 501
about:blank#tenant-scope-unavailable (after a valid signature)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Annotated, Any

from flask import Blueprint
from pydantic import StringConstraints

from appliance.common.api import QuerySchema
from appliance.common.problems import NotImplementedYet
from appliance.engine.auth.signature import signed_endpoint

bp = Blueprint("treasury", __name__)


class AssetQuery(QuerySchema):
    asset: Annotated[str, StringConstraints(pattern=r"^[A-Z0-9]{2,16}$")] | None = None


def _unavailable() -> NotImplementedYet:
    return NotImplementedYet(
        "Treasury and reconciliation reads are deployment-global and not available to operators.",
        slug="tenant-scope-unavailable",
    )


def _deployment_global(rule: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """A read of deployment-global figures: its query is checked, then the signature, then 501."""
    return signed_endpoint(bp, "GET", rule, query=AssetQuery, status=501, errors=(501,), tags=["Treasury"])


@_deployment_global("/v1/treasury/positions")
def treasury_positions(query: AssetQuery):
    """Always 501 about:blank#tenant-scope-unavailable for operator callers."""
    raise _unavailable()


@_deployment_global("/v1/reconciliation/findings")
def reconciliation_findings(query: AssetQuery):
    """Always 501 about:blank#tenant-scope-unavailable for operator callers."""
    raise _unavailable()
