"""Shapes of members and invites."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, EmailStr, Field, StringConstraints

from appliance.common.api import ONE_LINE, Schema

Role = Literal["owner", "dispatcher", "courier"]
Status = Literal["active", "disabled"]


class MemberOut(BaseModel):
    userId: str
    name: str
    role: Role
    status: Status
    email: str | None
    phone: str | None
    courierId: str | None
    vehicle: str | None
    joinedAt: str


class InvitedByOut(BaseModel):
    userId: str
    name: str | None


class InviteOut(BaseModel):
    id: str
    role: Role
    name: str
    expiresAt: str
    phone: str | None
    email: str | None
    vehicle: str | None
    invitedBy: InvitedByOut | None
    createdAt: str


class TeamOut(BaseModel):
    members: list[MemberOut]
    invites: list[InviteOut]


class MemberEnvelope(BaseModel):
    member: MemberOut


class MemberPatch(Schema):
    role: Role | None = None
    status: Status | None = None


class InviteCreate(Schema):
    role: Role
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
    phone: (
        Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40), ONE_LINE] | None
    ) = None
    email: EmailStr | None = None
    vehicle: Annotated[str, StringConstraints(strip_whitespace=True, max_length=120), ONE_LINE] | None = None


class InviteRecordOut(BaseModel):
    id: str
    inviteId: str | None = Field(description="the invite's id (DELETE /company/invites/{id} while pending)")
    role: Role
    name: str
    email: str | None
    phone: str | None
    invitedBy: InvitedByOut | None
    createdAt: str
    state: Literal["usable", "used", "expired", "revoked", "removed"] = Field(
        description="what became of the link; removed once an expired link was cleared away"
    )


class InviteHistoryOut(BaseModel):
    invites: list[InviteRecordOut]


class InviteCreated(BaseModel):
    invite: InviteOut
    link: str
    emailed: bool = Field(description="the link is queued for the email given (the mail worker sends it)")


class LoginLinkOut(BaseModel):
    link: str
    expiresAt: str
