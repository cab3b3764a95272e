"""Route guards of the dispatch service (the Auth column of the specification).

P public, B any signed-in member, D dispatcher or owner, O owner, C courier, DC dispatcher, owner
or courier. A guard authenticates the bearer token against the database on every request, so a
disabled member, a changed role or a revoked session stops working at once.

An integration key (``ik_…``, docs/integrations.md) is a bearer token too, accepted only by the
guards that name it (DK: create, import and read orders; OK: the company's webhooks); every other
route answers it 403. Its row is read on every request, so a revoked key is refused (401) at once.
"""

from __future__ import annotations

import dataclasses

from flask import g, request

from appliance.common import clock
from appliance.common.compiled import CompiledSelect, Slot
from appliance.common.problems import Forbidden, Unauthorized
from appliance.dispatch.auth.tokens import decode_access_token
from appliance.dispatch.db import database
from appliance.dispatch.integrations.service import KEY_PREFIX, key_of
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
    # The company-set password this session was opened with (None for the account's own
    # sign-in): such a session acts only in its company (docs/identity.md).
    credential_id: int | None = None

    @property
    def role(self) -> str:
        return self.membership.role

    @property
    def company_id(self) -> int:
        return self.company.id

    @property
    def actor_id(self) -> int | None:
        """The user recorded as the actor of a change."""
        return self.user.id

    def courier(self) -> Courier | None:
        """The caller's courier profile in the active company, if any."""
        if not hasattr(self, "_courier"):
            self._courier = _COURIER_OF.first(database, company_id=self.company.id, user_id=self.user.id)
        return self._courier


@dataclasses.dataclass
class IntegrationCaller:
    """A shop's integration key: acts for its company, as no user."""

    company: Company
    key_id: int
    role: str = "integration"
    actor_id: None = None

    @property
    def company_id(self) -> int:
        return self.company.id


# One query, its text built once: the membership, its user and company, and the session of the
# token while it is live on the server (unrevoked and unexpired: a well-signed token of an ended
# session is refused, whoever signed it). It runs on every authenticated request.
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
                & (AuthSession.expires_at > Slot("now", AuthSession.expires_at))
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


def authenticate(*, keys: bool = False) -> Caller:
    """The member behind the bearer token, or 401; with ``keys``, an integration key is accepted
    too (use ``authenticate_any``)."""
    caller = authenticate_any(keys=keys)
    if isinstance(caller, IntegrationCaller):
        raise Forbidden(KEY_REFUSED)
    return caller


KEY_REFUSED = (
    "An integration key can only create, import and read orders and their proof, read its shop's "
    "statements and manage webhooks."
)


def authenticate_any(*, keys: bool) -> Caller | IntegrationCaller:
    cached = g.get("caller")
    if cached is not None:
        if isinstance(cached, IntegrationCaller) and not keys:
            raise Forbidden(KEY_REFUSED)
        return cached
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token:
        raise Unauthorized("A bearer token is required.", headers={"WWW-Authenticate": "Bearer"})
    if token.startswith(KEY_PREFIX):
        if not keys:
            raise Forbidden(KEY_REFUSED)
        return _key_caller(token)
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
        now=clock.now(),
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
    caller = Caller(
        user=user,
        company=company,
        membership=membership,
        session_id=claims.session_id,
        credential_id=claims.credential_id,
    )
    g.caller = caller
    return caller


def _key_caller(token: str) -> IntegrationCaller:
    row = key_of(token)
    if row is None:
        raise Unauthorized(
            "The integration key is unknown or revoked.", headers={"WWW-Authenticate": "Bearer"}
        )
    company = Company.get_by_id(row.company_id)
    key_caller = IntegrationCaller(company=company, key_id=row.id)
    g.caller = key_caller
    return key_caller


def current_caller() -> Caller:
    """The signed-in member (the routes of every guard that does not take keys)."""
    return authenticate()


def current_actor() -> Caller | IntegrationCaller:
    """The member or integration key of a route whose guard takes keys (DK, OK)."""
    return authenticate_any(keys=True)


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
        return (401, 403)  # 403: a role this guard does not take, or an integration key

    keys: bool = False  # integration keys are accepted too

    def check(self) -> None:
        caller = authenticate_any(keys=self.keys)
        if isinstance(caller, IntegrationCaller):
            return
        if self.roles is not None and caller.role not in self.roles:
            raise Forbidden(self.forbidden_detail)


B = RoleGuard(None, "any signed-in member of the active company (B)")
D = RoleGuard(frozenset({"owner", "dispatcher"}), "dispatchers and owners (D)")
O = RoleGuard(frozenset({"owner"}), "owners only (O)", "Only an owner can do this.")  # noqa: E741
C = RoleGuard(frozenset({"courier"}), "couriers only (C)", "Only couriers can do this.")
DC = RoleGuard(frozenset({"owner", "dispatcher", "courier"}), "dispatchers, owners and couriers (D or C)")
DK = RoleGuard(
    frozenset({"owner", "dispatcher"}),
    "dispatchers, owners and the company's integration keys (D or key)",
    keys=True,
)
K = RoleGuard(
    frozenset(),
    "the company's integration keys only (key)",
    "Only a shop's integration key can do this.",
    keys=True,
)
OK = RoleGuard(
    frozenset({"owner"}),
    "owners and the company's integration keys (O or key)",
    "Only an owner or an integration key can do this.",
    keys=True,
)


@dataclasses.dataclass(frozen=True)
class OptionalBearer:
    """P or B: public, but a valid bearer token is used when one is sent."""

    description: str = "public; a bearer token is used when sent (P or B)"

    @property
    def security(self) -> list[dict[str, list[str]]]:
        return [{}, {"bearerAuth": []}]

    @property
    def error_statuses(self) -> tuple[int, ...]:
        return (401, 403)  # 403: an integration key

    def check(self) -> None:
        if request.headers.get("Authorization"):
            authenticate()


P_OR_B = OptionalBearer()
