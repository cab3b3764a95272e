"""Test helpers: companies, members and signed-in headers, made directly in the database."""

from __future__ import annotations

import dataclasses
import itertools

from flask import Flask

from appliance.common import clock
from appliance.dispatch.auth.sessions import start_session
from appliance.dispatch.models import Company, Courier, Depot, Membership, User

_seq = itertools.count(1)


@dataclasses.dataclass
class Member:
    user: User
    membership: Membership
    access_token: str
    refresh_token: str
    courier: Courier | None = None

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}


def make_company(
    name: str = "Arev Delivery", *, depot: tuple[float, float] | None = (40.1811, 44.5136)
) -> Company:
    company = Company.create(name=name, city="Yerevan", created_at=clock.now())
    if depot is not None:
        Depot.create(
            company=company,
            name="Main depot",
            address="Abovyan 1",
            lat=depot[0],
            lon=depot[1],
            is_default=True,
            created_at=clock.now(),
        )
    return company


def make_member(
    app: Flask,
    company: Company,
    role: str = "dispatcher",
    *,
    email: str | None = None,
    name: str | None = None,
    password_hash: str | None = None,
    user: User | None = None,
) -> Member:
    """A user with a membership in ``company`` (and a courier profile for couriers), signed in."""
    n = next(_seq)
    if user is None:
        user = User.create(
            email=email or f"{role}{n}@example.am",
            display_name=name or f"{role.title()} {n}",
            password_hash=password_hash,
            # A test account with a password stands for an address owner who set it (a password
            # on an unproven address signs nobody in: docs/identity.md).
            email_confirmed=password_hash is not None,
            created_at=clock.now(),
            last_company=company,
        )
    membership = Membership.create(user=user, company=company, role=role, joined_at=clock.now())
    courier = None
    if role == "courier":
        courier = Courier.create(
            company=company, user=user, display_name=user.display_name, created_at=clock.now()
        )
    runtime = app.extensions["dispatch"]
    tokens = start_session(membership, runtime.settings, runtime.master_key)
    return Member(user, membership, tokens.access_token, tokens.refresh_token, courier)
