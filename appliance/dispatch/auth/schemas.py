"""Shapes of sign-in, sessions and invites."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import BaseModel, EmailStr, Field, StringConstraints, model_validator

from appliance.common.api import ONE_LINE, Schema
from appliance.dispatch.geo_types import LatLon

Role = Literal["owner", "dispatcher", "courier"]
Plan = Literal["start", "city", "network"]
Text200 = Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=200), ONE_LINE]
Phone = Annotated[str, StringConstraints(strip_whitespace=True, min_length=3, max_length=40), ONE_LINE]
Password = Annotated[str, StringConstraints(min_length=8, max_length=200)]
Token = Annotated[str, StringConstraints(min_length=20, max_length=200)]


class LoginRequest(Schema):
    email: EmailStr
    password: Password


class RefreshRequest(Schema):
    refreshToken: Annotated[str, StringConstraints(min_length=1, max_length=200)]


class SwitchCompanyRequest(Schema):
    companyId: Annotated[str, StringConstraints(pattern=r"^[0-9]{1,18}$")]
    refreshToken: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = None


class SignupCompany(Schema):
    name: Annotated[str, StringConstraints(strip_whitespace=True, min_length=2, max_length=120), ONE_LINE]
    city: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=120), ONE_LINE] = (
        "Yerevan"
    )
    phone: Phone | None = None


class SignupOwner(Schema):
    name: Text200
    email: EmailStr


class DepotInput(Schema):
    name: Text200
    address: Annotated[str, StringConstraints(strip_whitespace=True, min_length=1, max_length=500), ONE_LINE]
    point: LatLon


class SignupRequest(Schema):
    company: SignupCompany
    owner: SignupOwner
    depot: DepotInput


class MagicLinkRequest(Schema):
    email: EmailStr


class TokenRequest(Schema):
    token: Token


class InviteAcceptRequest(Schema):
    token: Token
    password: Password | None = Field(
        default=None,
        description=(
            "password of a new account (optional). It signs in only once the address is proven: at "
            "once for a courier's mailed invite (POST /couriers); otherwise a link to set it is "
            "emailed to the invite's address (docs/identity.md)"
        ),
    )
    displayName: Text200 | None = None


class PasswordLinkRequest(Schema):
    email: EmailStr


class PasswordResetRequest(Schema):
    token: Token = Field(description="the token of an emailed password link (1 hour, once)")
    password: Password


class PasswordChange(Schema):
    password: Password = Field(description="the new password")
    currentPassword: Annotated[str, StringConstraints(min_length=1, max_length=200)] | None = Field(
        default=None, description="the current password (an account whose address is proven)"
    )
    token: Token | None = Field(
        default=None, description="or the token of a fresh emailed password link of this account"
    )

    @model_validator(mode="after")
    def _one_proof(self) -> PasswordChange:
        if (self.currentPassword is None) == (self.token is None):
            raise ValueError("give either currentPassword or token")
        return self


class SessionUser(BaseModel):
    id: str
    email: str | None
    phone: str | None
    displayName: str
    language: Literal["hy", "ru", "en"] = Field(description="the user's language: e-mails and screens")
    role: Literal["dispatcher", "courier"]
    companyRole: Role
    companyId: str
    courierId: str | None


class MePatch(Schema):
    language: Literal["hy", "ru", "en"]


class SessionCompany(BaseModel):
    id: str
    name: str
    city: str
    plan: Plan
    brandColor: str


class SessionMembership(BaseModel):
    companyId: str
    companyName: str
    role: Role
    status: Literal["active", "disabled", "pending"] = Field(
        description="pending: owner of a company signed up with this e-mail, until its emailed link is used"
    )


class Session(BaseModel):
    user: SessionUser
    company: SessionCompany
    role: Role
    memberships: list[SessionMembership]
    accessToken: str | None = Field(default=None, description="sign-in responses only")
    refreshToken: str | None = Field(default=None, description="sign-in responses only")
    tokenType: Literal["Bearer"] | None = None
    expiresIn: int | None = Field(default=None, description="seconds")


class SignupAccepted(BaseModel):
    company: dict[str, str]
    emailSent: bool = Field(description="the sign-in link is queued for the owner (the mail worker sends it)")


class Sent(BaseModel):
    sent: Literal[True]


class InvitedBy(BaseModel):
    userId: str
    name: str | None


class InvitePreview(BaseModel):
    kind: Literal["invite", "sign_in"]
    company: dict[str, str | None]
    role: Role
    name: str
    invitedBy: InvitedBy | None
    expiresAt: str
