"""The guards every dispatch route uses: bearer tokens checked against the database per request."""

from datetime import timedelta

import pytest
from flask import Blueprint

from appliance.common import clock
from appliance.common.api import endpoint
from appliance.dispatch.auth import guards
from appliance.dispatch.models import AuthSession, Membership
from tests.dispatch.factory import make_company, make_member


@pytest.fixture
def app(dispatch_app):
    bp = Blueprint("trial_guards", __name__)
    for name, guard in (
        ("b", guards.B),
        ("d", guards.D),
        ("o", guards.O),
        ("c", guards.C),
        ("dc", guards.DC),
    ):

        def view(_name=name):
            caller = guards.current_caller()
            return {"role": caller.role, "company": caller.company_id}

        view.__name__ = f"trial_{name}"
        endpoint(bp, "GET", f"/trial/{name}", guard=guard)(view)
    dispatch_app.register_blueprint(bp)
    return dispatch_app


@pytest.mark.parametrize(
    ("role", "allowed"),
    [
        ("owner", {"b", "d", "o", "dc"}),
        ("dispatcher", {"b", "d", "dc"}),
        ("courier", {"b", "c", "dc"}),
    ],
)
def test_each_role_reaches_exactly_the_routes_its_guard_admits(app, role, allowed) -> None:
    client = app.test_client()
    member = make_member(app, make_company(), role)
    for name in ("b", "d", "o", "c", "dc"):
        response = client.get(f"/trial/{name}", headers=member.headers)
        assert response.status_code == (200 if name in allowed else 403), (role, name)


def test_a_missing_or_malformed_token_is_401(app) -> None:
    client = app.test_client()
    assert client.get("/trial/b").status_code == 401
    assert client.get("/trial/b", headers={"Authorization": "Bearer nope"}).status_code == 401
    assert client.get("/trial/b", headers={"Authorization": "Basic abc"}).status_code == 401


def test_an_expired_access_token_is_401(app) -> None:
    member = make_member(app, make_company())
    clock.advance(timedelta(seconds=app.extensions["dispatch"].settings.access_token_seconds + 1))
    assert app.test_client().get("/trial/b", headers=member.headers).status_code == 401


def test_a_disabled_membership_stops_its_tokens_at_once(app) -> None:
    member = make_member(app, make_company())
    Membership.update(status="disabled").where(Membership.id == member.membership.id).execute()
    assert app.test_client().get("/trial/b", headers=member.headers).status_code == 401


def test_a_role_change_stops_old_tokens_at_once(app) -> None:
    member = make_member(app, make_company(), "dispatcher")
    Membership.update(role="courier", session_epoch=Membership.session_epoch + 1).where(
        Membership.id == member.membership.id
    ).execute()
    assert app.test_client().get("/trial/b", headers=member.headers).status_code == 401


def test_a_revoked_session_stops_its_access_tokens(app) -> None:
    member = make_member(app, make_company())
    AuthSession.update(revoked_at=clock.now()).execute()
    assert app.test_client().get("/trial/b", headers=member.headers).status_code == 401


def test_the_caller_acts_in_the_company_of_the_token(app) -> None:
    first, second = make_company("First"), make_company("Second")
    member = make_member(app, second, "owner")
    make_member(app, first, "owner", user=member.user)
    assert app.test_client().get("/trial/o", headers=member.headers).json["company"] == second.id
