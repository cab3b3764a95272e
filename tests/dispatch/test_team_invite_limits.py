"""What an inviter can learn is bounded (issue 41, item 7): an invite's link answers whether its
address has an account (the specification's 409 sign_in_required, kept), so a company may make
only so many invites naming an address per rolling hour (429 with Retry-After), and every invite
is on record for the company's owners (GET /company/invites/history, the console's team tab)."""

from __future__ import annotations

from datetime import timedelta

import peewee
import pytest

from appliance.common import clock
from appliance.dispatch.db import database
from tests.dispatch.factory import make_company, make_member

# Invites naming an address a company may make per rolling hour (docs/identity.md, Team rules).
ADDRESSED_INVITES_PER_HOUR = 20


def _invite(client, member, **fields):
    body = {"role": "courier", "name": "Probe", **fields}
    return client.post("/company/invites", json=body, headers=member.headers)


def test_invites_naming_addresses_are_limited_per_company_and_hour_with_retry_after(
    dispatch_app, dispatch_client
) -> None:
    company = make_company("Arev")
    owner = make_member(dispatch_app, company, "owner")
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    for n in range(ADDRESSED_INVITES_PER_HOUR):
        inviter = owner if n % 2 else dispatcher
        assert _invite(dispatch_client, inviter, email=f"probe{n}@example.am").status_code == 201
    over = _invite(dispatch_client, owner, email="one-more@example.am")
    assert over.status_code == 429 and over.content_type == "application/problem+json"
    assert over.json["status"] == 429 and over.json["code"] == "invite_limit"
    assert 0 < int(over.headers["Retry-After"]) <= 3600
    assert _invite(dispatch_client, dispatcher, email="two-more@example.am").status_code == 429
    # A link without an address reveals nothing: still made.
    assert _invite(dispatch_client, owner).status_code == 201
    # Another company counts apart.
    other = make_member(dispatch_app, make_company("Other"), "owner")
    assert _invite(dispatch_client, other, email="probe0@example.am").status_code == 201
    # An hour after the first, one more may go (signed in afresh: access tokens last 15 minutes).
    clock.advance(timedelta(hours=1, seconds=1))
    later = make_member(dispatch_app, company, "owner")
    assert _invite(dispatch_client, later, email="one-more@example.am").status_code == 201


def test_every_invite_is_on_record_for_the_owner_with_who_invited_which_address_and_when(
    dispatch_app, dispatch_client
) -> None:
    company = make_company("Arev")
    owner = make_member(dispatch_app, company, "owner", name="Ani")
    dispatcher = make_member(dispatch_app, company, "dispatcher", name="Lilit")
    first = _invite(dispatch_client, dispatcher, email="narek@example.am").json
    clock.advance(timedelta(minutes=1))
    _invite(dispatch_client, owner, role="dispatcher", name="Gor", email="gor@example.am")
    clock.advance(timedelta(minutes=1))
    _invite(dispatch_client, owner, name="Link only")
    assert (
        dispatch_client.delete(f"/company/invites/{first['invite']['id']}", headers=owner.headers).status_code
        == 204
    )
    make_member(dispatch_app, make_company("Other"), "owner")  # another company's invites stay apart
    history = dispatch_client.get("/company/invites/history", headers=owner.headers)
    assert history.status_code == 200
    rows = history.json["invites"]
    assert [(r["name"], r["email"], r["invitedBy"]["name"], r["state"]) for r in rows] == [
        ("Link only", None, "Ani", "usable"),
        ("Gor", "gor@example.am", "Ani", "usable"),
        ("Probe", "narek@example.am", "Lilit", "revoked"),
    ]
    assert rows[2]["createdAt"] == first["invite"]["createdAt"] and rows[1]["role"] == "dispatcher"
    # Only owners read it; the record outlives the invite's link and cannot be changed.
    assert dispatch_client.get("/company/invites/history", headers=dispatcher.headers).status_code == 403
    assert len(history.json["invites"]) == 3


def test_the_invite_record_is_append_only(dispatch_app, dispatch_client) -> None:
    owner = make_member(dispatch_app, make_company("Arev"), "owner")
    _invite(dispatch_client, owner, email="narek@example.am")
    for statement in (
        "UPDATE invite_record SET email = 'someone-else@example.am'",
        "DELETE FROM invite_record",
    ):
        with pytest.raises(peewee.DatabaseError, match="append-only"), database.atomic():
            database.execute_sql(statement)
