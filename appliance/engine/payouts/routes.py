"""POST /v1/payouts, GET /v1/payouts/:payoutId, GET /v1/payouts (signed)."""

from __future__ import annotations

from flask import Blueprint, request

from appliance.engine.auth.signature import (
    SIGNED_SUBMISSION,
    current_operator,
    pending_admission,
    signed_endpoint,
)
from appliance.engine.payouts import schemas, service
from appliance.engine.runtime import runtime

bp = Blueprint("payouts", __name__)


@signed_endpoint(
    bp,
    "POST",
    "/v1/payouts",
    body=schemas.PayoutSubmit,
    guard=SIGNED_SUBMISSION,
    status=201,
    response=schemas.PayoutSubmitted,
    errors=(409, 503),
    tags=["Payouts"],
    other_statuses=(200,),
    response_description="ACCEPTED (201) for a new instruction; REPLAYED (200) when the key was recognised",
)
def submit_payout(body: schemas.PayoutSubmit):
    """Submit a payout instruction, idempotent on the Idempotency-Key.

    The operator's spending controls, set by the deployment's administrator, answer before
    anything is stored: 400 when `amountMinor` is above the operator's maximum per payout of the
    asset (`errors[].field` "amountMinor") or when the operator has a destination allow-list on
    the asset's chain and `destination` is not on it (`errors[].field` "destination") or, for an
    unlimited operator with an exposure ceiling of the asset, when the payout would take what it
    paid out and requested beyond what it was credited above it (`errors[].field` "amountMinor"); 503 while
    the operator is paused. A payout above the operator's approval threshold, one with which the
    operator's payouts of the asset within its rolling approval window pass its rolling approval
    threshold, one beyond its rolling 24 h volume or (ledger mode prefunded) above its available
    balance is accepted and waits in REQUESTED with the reason on its detail
    (docs/engine-treasury.md). An operator with a signing key sends `instructionSignature` with
    every payout (400 when it is missing or does not verify; docs/engine-auth.md)."""
    result, replayed = service.submit(
        runtime().chains,
        current_operator(),
        request.headers["Idempotency-Key"],
        body.payoutId,
        body.asset,
        body.amountMinor,
        body.destination,
        admit=pending_admission().recorder(),
        signature=body.instructionSignature,
    )
    return result, 200 if replayed else 201


@signed_endpoint(
    bp,
    "GET",
    "/v1/payouts/<payout_id>",
    path=schemas.PayoutPath,
    response=schemas.PayoutDetail,
    errors=(404,),
    tags=["Payouts"],
)
def get_payout(payout_id: str):
    """Full detail of one of the caller's payouts: transitions, attempts, broadcast reservation."""
    return service.detail(current_operator(), payout_id)


@signed_endpoint(
    bp,
    "GET",
    "/v1/payouts",
    query=schemas.PayoutListQuery,
    response=schemas.PayoutPage,
    tags=["Payouts"],
)
def list_payouts(query: schemas.PayoutListQuery):
    """The caller's payouts, newest first, with an opaque cursor (null on the last page)."""
    return service.page(current_operator(), status=query.status, limit=query.limit, cursor=query.cursor)
