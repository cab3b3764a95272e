"""Route guards of the dispatch service (the Auth column of the specification).

P public, B any signed-in member, D dispatcher or owner, O owner, C courier, DC dispatcher, owner
or courier. A guard authenticates the bearer token against the database on every request, so a
disabled member, a changed role or a revoked session stops working at once.
"""

from __future__ import annotations

import dataclasses

from flask import g, request

from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.problems import Forbidden, Unauthorized
from appliance.dispatch.auth.tokens import decode_access_token
from appliance.dispatch.db import database
from appliance.dispatch.models import AuthSession, Company, Courier, Membership, User
from appliance.dispatch.runtime import runtime

# The courier profile of a signed-in courier: read on every courier-app request.
_COURIER_OF = CompiledSelect(
    lambda: (
        Courier.select()
        .where((Courier.company == Slot("company_id")) & (Courier.user == Slot("user_id")))
        .limit(1)
    )
)


@dataclasses.dataclass
class Caller:
    user: User
    company: Company
    membership: Membership
    session_id: str

    @property
    def role(self) -> str:
        return self.membership.role

    @property
    def company_id(self) -> int:
        return self.company.id

    def courier(self) -> Courier | None:
        """The caller's courier profile in the active company, if any."""
        if not hasattr(self, "_courier"):
            self._courier = _COURIER_OF.first(database, company_id=self.company.id, user_id=self.user.id)
        return self._courier


# One query, its text built once: the membership, its user and company, and the (unrevoked)
# session of the token. It runs on every authenticated request.
_CALLER_ROW = CompiledSelect(
    lambda: (
        Membership.select(Membership, User, Company)
        .join(User, on=(Membership.user == User.id))
        .switch(Membership)
        .join(Company, on=(Membership.company == Company.id))
        .switch(Membership)
        .join(
            AuthSession,
            on=(
                (AuthSession.id == Slot("session_id"))
                & (AuthSession.user == Membership.user)
                & AuthSession.revoked_at.is_null()
            ),
        )
        .where(
            (Membership.id == Slot("membership_id"))
            & (Membership.user == Slot("user_id"))
            & (Membership.company == Slot("company_id"))
        )
        .limit(1)
    )
)


def authenticate() -> Caller:
    """The caller behind the bearer token, or 401."""
    cached = g.get("caller")
    if cached is not None:
        return cached
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise Unauthorized("A bearer token is required.", headers={"WWW-Authenticate": "Bearer"})
    claims = decode_access_token(runtime().master_key, token.strip())
    if claims is None:
        raise Unauthorized("The access token is invalid or expired.", headers={"WWW-Authenticate": "Bearer"})
    found = _CALLER_ROW.first_instances(
        database,
        (Membership, User, Company),
        session_id=claims.session_id,
        membership_id=claims.membership_id,
        user_id=claims.user_id,
        company_id=claims.company_id,
    )
    if found is None:
        raise Unauthorized("The session has ended.", headers={"WWW-Authenticate": "Bearer"})
    membership, user, company = found
    if (
        membership.status != "active"
        or membership.session_epoch != claims.epoch
        or membership.role != claims.role
    ):
        raise Unauthorized("The session has ended.", headers={"WWW-Authenticate": "Bearer"})
    membership.__rel__.update(user=user, company=company)  # as peewee links a joined row
    caller = Caller(user=user, company=company, membership=membership, session_id=claims.session_id)
    g.caller = caller
    return caller


def current_caller() -> Caller:
    return authenticate()


@dataclasses.dataclass(frozen=True)
class RoleGuard:
    roles: frozenset[str] | None  # None: any signed-in member
    description: str
    forbidden_detail: str = "Your role does not allow this."

    @property
    def security(self) -> list[dict[str, list[str]]]:
        return [{"bearerAuth": []}]

    @property
    def error_statuses(self) -> tuple[int, ...]:
        return (401,) if self.roles is None else (401, 403)

    def check(self) -> None:
        caller = authenticate()
        if self.roles is not None and caller.role not in self.roles:
            raise Forbidden(self.forbidden_detail)


B = RoleGuard(None, "any signed-in member of the active company (B)")
D = RoleGuard(frozenset({"owner", "dispatcher"}), "dispatchers and owners (D)")
O = RoleGuard(frozenset({"owner"}), "owners only (O)", "Only an owner can do this.")  # noqa: E741
C = RoleGuard(frozenset({"courier"}), "couriers only (C)", "Only couriers can do this.")
DC = RoleGuard(frozenset({"owner", "dispatcher", "courier"}), "dispatchers, owners and couriers (D or C)")


@dataclasses.dataclass(frozen=True)
class OptionalBearer:
    """P or B: public, but a valid bearer token is used when one is sent."""

    description: str = "public; a bearer token is used when sent (P or B)"

    @property
    def security(self) -> list[dict[str, list[str]]]:
        return [{}, {"bearerAuth": []}]

    @property
    def error_statuses(self) -> tuple[int, ...]:
        return (401,)

    def check(self) -> None:
        if request.headers.get("Authorization"):
            authenticate()


P_OR_B = OptionalBearer()
