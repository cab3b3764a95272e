"""/admin/: the engine administrator's console on the engine's port. The page and its script are
static files; /admin/api/* answers JSON to a signed-in administrator only (a session cookie:
HttpOnly, SameSite=Strict, path /admin; every change also needs the X-Admin-Request header, so a
form posted from another site cannot act). Every act is in the audit log."""

from __future__ import annotations

from typing import Annotated, Any

from flask import Blueprint, Response, g, request, send_from_directory
from pydantic import BaseModel, Field, StringConstraints

from appliance.common.api import Schema, endpoint
from appliance.common.assets import static_dir
from appliance.common.problems import Forbidden, TooManyRequests, Unauthorized
from appliance.engine.admin import accounts, service
from appliance.engine.runtime import runtime

bp = Blueprint("admin", __name__)
TAGS = ["Administrator console"]
COOKIE = "appliance_admin"
CSP = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
    "base-uri 'none'; form-action 'self'; frame-ancestors 'none'"
)


class AdminGuard:
    security: list[dict[str, list[str]]] = [{"adminSession": []}]
    description = "the administrator's console session (cookie), and X-Admin-Request on changes"

    def check(self) -> None:
        session = accounts.session_of(request.cookies.get(COOKIE))
        if session is None:
            raise Unauthorized("Sign in to the administrator's console.")
        if request.method != "GET" and request.headers.get("X-Admin-Request") != "1":
            raise Forbidden("A change needs the X-Admin-Request header.")
        g.admin_session_id = session.id


ADMIN = AdminGuard()


def _headers(response: Response) -> Response:
    response.headers["Content-Security-Policy"] = CSP
    response.headers["Referrer-Policy"] = "no-referrer"
    response.headers["X-Content-Type-Options"] = "nosniff"
    response.headers["X-Frame-Options"] = "DENY"
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/admin/")
def page() -> Response:
    return _headers(
        send_from_directory(static_dir() / "admin", "index.html", mimetype="text/html", max_age=0)
    )


@bp.get("/admin/<any('admin.js', 'admin.css'):name>")
def asset(name: str) -> Response:
    return _headers(send_from_directory(static_dir() / "admin", name, max_age=0))


class SignIn(Schema):
    password: Annotated[str, StringConstraints(min_length=1, max_length=1000)]
    code: Annotated[str, StringConstraints(pattern=r"^[0-9]{6}$")]


class SignedIn(BaseModel):
    expiresInSeconds: int


@endpoint(bp, "POST", "/admin/api/session", body=SignIn, response=SignedIn, errors=(401, 429), tags=TAGS)
def sign_in(body: SignIn):
    """Sign in with the administrator's password and the authenticator's current code."""
    try:
        token = accounts.sign_in(runtime().master_key, body.password, body.code, request.remote_addr or "")
    except accounts.SignInRefused as exc:
        if "locked" in str(exc):
            raise TooManyRequests(
                str(exc), headers={"Retry-After": str(int(accounts.LOCK.total_seconds()))}
            ) from None
        raise Unauthorized(str(exc)) from None
    seconds = int(accounts.SESSION.total_seconds())
    response = Response(f'{{"expiresInSeconds": {seconds}}}', mimetype="application/json")
    response.set_cookie(
        COOKIE,
        token,
        max_age=seconds,
        httponly=True,
        samesite="Strict",
        secure=request.is_secure,
        path="/admin",
    )
    return _headers(response)


@endpoint(bp, "DELETE", "/admin/api/session", status=204, guard=ADMIN, tags=TAGS)
def sign_out():
    """End this session."""
    accounts.sign_out(request.cookies.get(COOKIE))
    response = Response(status=204)
    response.delete_cookie(COOKIE, path="/admin")
    return response


@endpoint(bp, "GET", "/admin/api/overview", guard=ADMIN, tags=TAGS)
def overview():
    """Findings, transactions the engine did not sign, payouts awaiting approval, operators with
    controls and balances, sweeps, scheduled backups and their drills, the audit log's newest
    entries and whether its chain verifies."""
    rt = runtime()
    return service.overview(rt.chains, rt.settings)


@endpoint(bp, "GET", "/admin/api/treasury", guard=ADMIN, tags=TAGS)
def treasury():
    """Every custody wallet's balance per asset, on chain (read now) and expected."""
    rt = runtime()
    return service.treasury(rt.chains, rt.custody)


class FindingPath(Schema):
    finding_id: int = Field(ge=1, le=2**62)


@endpoint(
    bp,
    "POST",
    "/admin/api/findings/<int:finding_id>/acknowledge",
    path=FindingPath,
    status=204,
    guard=ADMIN,
    errors=(404, 409),
    tags=TAGS,
    body_required=False,
)
def acknowledge(finding_id: int):
    """Acknowledge a finding that stays until someone has looked at it (an unknown outflow)."""
    service.acknowledge_finding(finding_id, "administrator console")
    return Response(status=204)


class PayoutPath(Schema):
    payout_id: int = Field(ge=1, le=2**62)


class Decision(Schema):
    memo: Annotated[str, StringConstraints(max_length=500)] | None = None


@endpoint(
    bp,
    "POST",
    "/admin/api/payouts/<int:payout_id>/<any('approve', 'reject'):verdict>",
    path=PayoutPath,
    body=Decision,
    guard=ADMIN,
    errors=(404, 409),
    tags=TAGS,
    body_required=False,
)
def decide(payout_id: int, verdict: str, body: Decision | None = None):
    """Approve or reject a payout above its operator's approval threshold."""
    memo = body.memo if body is not None else None
    return service.decide(payout_id, verdict == "approve", "administrator console", memo)


class OperatorPath(Schema):
    operator_id: Annotated[str, StringConstraints(pattern=r"^op_[a-z0-9]{8,48}$")]


@endpoint(
    bp,
    "POST",
    "/admin/api/operators/<operator_id>/<any('pause', 'resume'):action>",
    path=OperatorPath,
    guard=ADMIN,
    errors=(404,),
    tags=TAGS,
    body_required=False,
)
def pause(operator_id: str, action: str) -> Any:
    """Pause an operator (its submissions are answered 503 and nothing more of its is signed), or
    resume it."""
    return service.set_paused(operator_id, action == "pause", "administrator console")


class ForeignPath(Schema):
    chain_id: Annotated[str, StringConstraints(pattern=r"^[A-Za-z0-9_]{3,32}$")]
    tx_hash: Annotated[str, StringConstraints(pattern=r"^0x[0-9a-f]{64}$")]


class Adoption(Schema):
    payoutId: Annotated[str, StringConstraints(min_length=1, max_length=64)]
    operatorId: Annotated[str, StringConstraints(pattern=r"^op_[a-z0-9]{8,48}$")] | None = None
    memo: Annotated[str, StringConstraints(max_length=500)] | None = None


@endpoint(
    bp,
    "POST",
    "/admin/api/foreign/<chain_id>/<tx_hash>/adopt",
    path=ForeignPath,
    body=Adoption,
    guard=ADMIN,
    errors=(409,),
    tags=TAGS,
)
def adopt_foreign(chain_id: str, tx_hash: str, body: Adoption):
    """Adopt a transaction found at one of the engine's nonces that it does not hold as the payout
    it pays exactly (a REQUESTED payout, never signed), releasing its wallet."""
    return service.decide_foreign(
        runtime().chains, chain_id, tx_hash, body.payoutId, body.operatorId, body.memo
    )


@endpoint(
    bp,
    "POST",
    "/admin/api/foreign/<chain_id>/<tx_hash>/reject",
    path=ForeignPath,
    body=Decision,
    guard=ADMIN,
    errors=(409,),
    tags=TAGS,
    body_required=False,
)
def reject_foreign(chain_id: str, tx_hash: str, body: Decision | None = None):
    """Record such a transaction as a foreign outflow (reconcile keeps its finding), releasing its
    wallet."""
    memo = body.memo if body is not None else None
    return service.decide_foreign(runtime().chains, chain_id, tx_hash, None, None, memo)


@endpoint(
    bp,
    "GET",
    "/admin/api/operators/<operator_id>/entries",
    path=OperatorPath,
    guard=ADMIN,
    errors=(404,),
    tags=TAGS,
)
def operator_entries(operator_id: str):
    """The operator's 50 newest ledger entries on its balance, newest first."""
    return service.ledger_entries(runtime().chains, operator_id)
