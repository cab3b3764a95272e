"""Members, invites and member login links."""

from __future__ import annotations

from flask import Blueprint, Response

from appliance.common.api import endpoint
from appliance.dispatch.auth.guards import B, D, O, current_caller
from appliance.dispatch.runtime import runtime
from appliance.dispatch.team import schemas, service

bp = Blueprint("team", __name__)
TAGS = ["Team"]


@endpoint(bp, "GET", "/company/members", guard=B, response=schemas.TeamOut, tags=TAGS)
def list_members():
    """Members of the active company and its pending invites. A courier sees every `email` and
    `phone` null but its own (the office's phone is `dispatchPhone` of GET /courier/me)."""
    caller = current_caller()
    courier_self = caller.user.id if caller.role == "courier" else None
    return service.team(caller.company_id, contacts_of_self_only=courier_self)


@endpoint(
    bp,
    "POST",
    "/company/members/<int:user_id>/login-link",
    guard=D,
    status=201,
    response=schemas.LoginLinkOut,
    errors=(404, 409),
    tags=TAGS,
)
def member_login_link(user_id: int):
    """A 24-hour sign-in link for a member with no password and no confirmed email."""
    return service.login_link(runtime(), current_caller(), user_id)


@endpoint(
    bp,
    "PATCH",
    "/company/members/<int:user_id>",
    guard=D,
    body=schemas.MemberPatch,
    response=schemas.MemberEnvelope,
    errors=(404, 409),
    tags=TAGS,
)
def patch_member(user_id: int, body: schemas.MemberPatch):
    """Change a member's role or status; owners change anything, dispatchers toggle couriers."""
    return {"member": service.change_member(current_caller(), user_id, body.role, body.status)}


@endpoint(
    bp,
    "POST",
    "/company/invites",
    guard=D,
    body=schemas.InviteCreate,
    status=201,
    response=schemas.InviteCreated,
    errors=(429,),
    tags=TAGS,
)
def create_invite(body: schemas.InviteCreate):
    """Invite someone by a shareable link (7 days), emailed too when an email is given. A company
    may make 20 invites naming an address per rolling hour: more answer 429 (code invite_limit,
    with Retry-After). Every invite is on record (GET /company/invites/history)."""
    return service.invite(runtime(), current_caller(), body.model_dump())


@endpoint(
    bp,
    "GET",
    "/company/invites/history",
    guard=O,
    response=schemas.InviteHistoryOut,
    tags=TAGS,
)
def invite_history():
    """Every invite the company made (the latest 500, newest first): who invited which address,
    as what and when, and what became of its link. Owners only."""
    return service.invite_history(current_caller().company_id)


@endpoint(bp, "DELETE", "/company/invites/<int:invite_id>", guard=D, status=204, errors=(404,), tags=TAGS)
def revoke_invite(invite_id: int):
    """Revoke a pending invite (dispatchers: courier invites only)."""
    service.revoke_invite(current_caller(), invite_id)
    return Response(status=204)
