"""Sign-in and session endpoints (Service and sign-in table)."""

from __future__ import annotations

from flask import Blueprint, Response, request

from appliance.common.api import endpoint
from appliance.common.problems import NotFound
from appliance.common.ratelimit import keyed_limit, public_limit
from appliance.dispatch.accounts import normalise_email
from appliance.dispatch.auth import schemas, service
from appliance.dispatch.auth.guards import P_OR_B, B, current_caller
from appliance.dispatch.auth.serializers import session_body
from appliance.dispatch.auth.tokens import decode_access_token
from appliance.dispatch.runtime import runtime

bp = Blueprint("auth", __name__)
TAGS = ["Sign-in"]

# Beside the per-client-address limit: password guesses per account, and mail sent per target
# address (so neither can be spread over many client addresses), counted in the shared store, each
# under the one normalised address the account is stored under (a variant spelling counts with it).
PER_ACCOUNT = "10 per 15 minutes"
PER_MAILBOX = "5 per hour"


@endpoint(
    bp,
    "POST",
    "/auth/login",
    body=schemas.LoginRequest,
    response=schemas.Session,
    errors=(401, 403, 429),
    tags=TAGS,
)
@public_limit
@keyed_limit(PER_ACCOUNT, "email", normalise_email)
def login(body: schemas.LoginRequest):
    """Sign in with email and password; lands in the company used last."""
    return service.login(runtime(), body.email, body.password)


@endpoint(
    bp,
    "POST",
    "/auth/refresh",
    body=schemas.RefreshRequest,
    response=schemas.Session,
    errors=(401, 429),
    tags=TAGS,
)
@public_limit
def refresh(body: schemas.RefreshRequest):
    """Rotate the refresh token; a rotated-out token that comes back ends the whole session."""
    return service.refresh(runtime(), body.refreshToken)


@endpoint(bp, "POST", "/auth/logout", guard=B, status=204, tags=TAGS)
def logout():
    """Revoke the active session (its refresh token and access tokens)."""
    service.logout(current_caller())
    return Response(status=204)


@endpoint(bp, "GET", "/me", guard=B, response=schemas.Session, tags=TAGS)
def me():
    """The session of the caller (no tokens)."""
    caller = current_caller()
    return session_body(
        caller.membership, user=caller.user, company=caller.company, scoped=caller.credential_id is not None
    )


@endpoint(bp, "PATCH", "/me", guard=B, body=schemas.MePatch, response=schemas.Session, tags=TAGS)
def patch_me(body: schemas.MePatch):
    """Change the caller's language (hy, ru, en): the e-mails they get from now on, and the screens."""
    caller = current_caller()
    user = service.set_language(caller.user, body.language)
    return session_body(
        caller.membership, user=user, company=caller.company, scoped=caller.credential_id is not None
    )


@endpoint(bp, "GET", "/auth/me", guard=B, response=schemas.Session, tags=TAGS)
def auth_me():
    """Same as GET /me."""
    caller = current_caller()
    return session_body(
        caller.membership, user=caller.user, company=caller.company, scoped=caller.credential_id is not None
    )


@endpoint(
    bp,
    "POST",
    "/auth/switch-company",
    guard=B,
    body=schemas.SwitchCompanyRequest,
    response=schemas.Session,
    errors=(403,),
    tags=TAGS,
)
def switch_company(body: schemas.SwitchCompanyRequest):
    """Act in another company of the caller; a given refresh token is revoked."""
    return service.switch_company(runtime(), current_caller(), int(body.companyId), body.refreshToken)


@endpoint(
    bp,
    "POST",
    "/auth/signup",
    body=schemas.SignupRequest,
    status=202,
    response=schemas.SignupAccepted,
    errors=(422, 429),
    tags=TAGS,
)
@public_limit
@keyed_limit(PER_MAILBOX, "owner.email", normalise_email)
def signup(body: schemas.SignupRequest):
    """Create a company with its owner and default depot; the owner signs in through the emailed link."""
    return service.signup(
        runtime(), body.company.model_dump(), body.owner.model_dump(), body.depot.model_dump()
    )


@endpoint(
    bp,
    "POST",
    "/auth/magic-link",
    body=schemas.MagicLinkRequest,
    status=202,
    response=schemas.Sent,
    errors=(429,),
    tags=TAGS,
)
@public_limit
@keyed_limit(PER_MAILBOX, "email", normalise_email)
def magic_link(body: schemas.MagicLinkRequest):
    """Email a one-time sign-in link (always 202, whether or not an account exists)."""
    service.request_magic_link(runtime(), body.email)
    return {"sent": True}


@endpoint(
    bp,
    "POST",
    "/auth/magic-link/verify",
    body=schemas.TokenRequest,
    response=schemas.Session,
    errors=(401, 403, 429),
    tags=TAGS,
)
@public_limit
def verify_magic_link(body: schemas.TokenRequest):
    """Sign in with an emailed link (15 minutes, once)."""
    return service.verify_magic_link(runtime(), body.token)


@endpoint(
    bp, "GET", "/auth/invite/<token>", response=schemas.InvitePreview, errors=(404, 410, 429), tags=TAGS
)
@public_limit
def invite_preview(token: str):
    """Preview an invite or member sign-in link (410 with code used or expired)."""
    if not 20 <= len(token) <= 200:
        raise NotFound("No such invite.")
    return service.invite_preview(runtime(), token)


@endpoint(
    bp,
    "POST",
    "/auth/invite/accept",
    body=schemas.InviteAcceptRequest,
    guard=P_OR_B,
    response=schemas.Session,
    errors=(404, 409, 429),
    tags=TAGS,
)
@public_limit
def accept_invite(body: schemas.InviteAcceptRequest):
    """Accept an invite (new account, or the signed-in one) or use a member sign-in link."""
    caller = current_caller() if request.headers.get("Authorization") else None
    return service.accept_invite(runtime(), body.token, caller, body.password, body.displayName)


@endpoint(
    bp,
    "POST",
    "/auth/password/forgot",
    body=schemas.PasswordLinkRequest,
    status=202,
    response=schemas.Sent,
    errors=(429,),
    tags=TAGS,
)
@public_limit
@keyed_limit(PER_MAILBOX, "email", normalise_email)
def forgot_password(body: schemas.PasswordLinkRequest):
    """Email a one-time link (1 hour) that sets a new password (always 202, whether or not an
    account exists)."""
    service.request_password_link(runtime(), body.email)
    return {"sent": True}


@endpoint(
    bp,
    "POST",
    "/auth/password/reset",
    body=schemas.PasswordResetRequest,
    response=schemas.Session,
    errors=(401, 403, 429),
    tags=TAGS,
)
@public_limit
def reset_password(body: schemas.PasswordResetRequest):
    """Set a new password through an emailed link and sign in; it proves the address, and every
    other session of the account ends."""
    return service.reset_password(runtime(), body.token, body.password)


def _account_of_bearer() -> str:
    """The account a bearer token names (its signature checked), else the client address: the key
    of the limit on tries of a current password, so a stolen access token cannot guess on."""
    header = request.headers.get("Authorization", "")
    claims = decode_access_token(runtime().master_key, header.removeprefix("Bearer ").strip())
    return f"user:{claims.user_id}" if claims is not None else f"address:{request.remote_addr}"


@endpoint(
    bp,
    "PATCH",
    "/me/password",
    guard=B,
    body=schemas.PasswordChange,
    status=204,
    errors=(403, 429),
    tags=TAGS,
)
@keyed_limit(PER_ACCOUNT, _account_of_bearer)
def change_password(body: schemas.PasswordChange):
    """Change the caller's password, proven by the current password or by a fresh emailed password
    link (403 with code wrong_password or invalid_link); every other session of the account ends."""
    service.change_password(current_caller(), body.password, body.currentPassword, body.token)
    return Response(status=204)
