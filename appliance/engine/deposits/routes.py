"""POST /v1/deposit-addresses and GET /v1/deposits (signed)."""

from __future__ import annotations

from flask import Blueprint

from appliance.engine.auth.signature import current_operator, signed_endpoint
from appliance.engine.deposits import schemas, service
from appliance.engine.runtime import runtime

bp = Blueprint("deposits", __name__)


@signed_endpoint(
    bp,
    "POST",
    "/v1/deposit-addresses",
    body=schemas.DepositAddressRequest,
    status=201,
    response=schemas.DepositAddressBody,
    errors=(503,),
    tags=["Deposits"],
    other_statuses=(200,),
    response_description="201 for a new address; 200 when the account already has one on this chain",
)
def create_deposit_address(body: schemas.DepositAddressRequest):
    """The account's deposit address on a chain, derived from the custody key and watched from now."""
    rt = runtime()
    result, created = service.create_address(
        rt.chains, rt.custody, current_operator(), body.accountRef, body.chainId
    )
    return result, 201 if created else 200


@signed_endpoint(
    bp,
    "GET",
    "/v1/deposits",
    query=schemas.DepositsQuery,
    response=schemas.Deposits,
    errors=(404,),
    tags=["Deposits"],
)
def list_deposits(query: schemas.DepositsQuery):
    """The account's transfers, newest block first; 404 when it has no registered address."""
    return service.deposits(current_operator(), query.accountRef, query.chainId)
