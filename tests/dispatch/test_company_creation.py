"""company.service.create_company, the one way a company is made (sign-up and the CLI both call
it), tested without HTTP."""

from __future__ import annotations

import pytest

from appliance.common.db import write_transaction
from appliance.common.passwords import verify_password
from appliance.common.problems import Conflict
from appliance.dispatch.accounts import TRIAL, TRIAL_PLAN
from appliance.dispatch.company.admin import create_company_from_options
from appliance.dispatch.company.service import create_company
from appliance.dispatch.db import database
from appliance.dispatch.models import Company, Depot, Membership, User

DEPOT = {"name": "Main", "address": "Abovyan 1", "lat": 40.18, "lon": 44.51}


def _create(email: str, *, confirmed: bool, password: str | None = None):
    with write_transaction(database):
        return create_company(
            name="  Arev  ",
            city="Yerevan",
            phone=None,
            owner_email=email,
            owner_name="Ani",
            depot=DEPOT,
            owner_password=password,
            owner_confirmed=confirmed,
        )


def test_it_makes_a_company_on_the_trial_plan_with_its_owner_and_default_depot(dispatch_app) -> None:
    created = _create("  Ani@Example.AM ", confirmed=False, password="correct horse")
    company = created.company
    assert (company.name, company.plan, created.owner_existed) == ("Arev", TRIAL_PLAN, False)
    assert company.trial_ends_at - company.created_at == TRIAL
    assert created.owner.email == "ani@example.am" and created.owner.last_company_id == company.id
    assert verify_password(User.get_by_id(created.owner.id).password_hash, "correct horse")
    membership = Membership.get(Membership.company == company.id)
    assert (membership.user_id, membership.role, membership.status) == (created.owner.id, "owner", "active")
    depot = Depot.get(Depot.company == company.id)
    assert (depot.name, depot.lat, depot.lon, depot.is_default) == ("Main", 40.18, 44.51, True)


def test_an_existing_account_waits_as_owner_until_it_proves_its_mailbox(dispatch_app) -> None:
    first = _create("owner@example.am", confirmed=False)
    second = _create("OWNER@example.am", confirmed=False)
    assert second.owner_existed and second.owner.id == first.owner.id
    assert Membership.get(Membership.company == second.company.id).status == "pending"


def test_an_operator_at_the_cli_makes_an_existing_account_owner_at_once(dispatch_app) -> None:
    first = _create("owner@example.am", confirmed=False)
    second = _create("owner@example.am", confirmed=True)
    assert second.owner.id == first.owner.id
    assert Membership.get(Membership.company == second.company.id).status == "active"


def test_the_cli_refuses_a_password_for_an_account_that_exists(dispatch_app) -> None:
    _create("owner@example.am", confirmed=False)
    with pytest.raises(Conflict):
        create_company_from_options(
            name="Second",
            city="Yerevan",
            phone=None,
            owner_email="owner@example.am",
            owner_name="Ani",
            owner_password="a password",
            depot_name="Main",
            depot_address="Abovyan 1",
            depot_lat=40.18,
            depot_lon=44.51,
        )
    assert Company.select().count() == 1
