"""A courier made by a dispatcher with a password signs in with it at once, as the specification's
courier create says (issue 40), and that company-set password opens nothing else: never another
company, never an owner's or dispatcher's role, and nothing after the address is proven
(docs/identity.md, *Company-set passwords*). Each test attacks the boundary as a dispatcher who
typed someone else's address would."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.common.passwords import hash_password, verify_password
from appliance.dispatch.models import Courier, Membership, User
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail
from tests.dispatch.orders_helpers import ready_order

SET_BY_DISPATCHER = "depot-gave-this"


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner")


def _create(client, dispatcher, email: str, password: str = SET_BY_DISPATCHER, **fields):
    body = {"email": email, "password": password, "displayName": "Aram", **fields}
    return client.post("/couriers", json=body, headers=dispatcher.headers)


def _login(client, email: str, password: str):
    return client.post("/auth/login", json={"email": email, "password": password})


def _refresh(client, session: dict):
    return client.post("/auth/refresh", json={"refreshToken": session["refreshToken"]})


def _anna_owns(dispatch_app, company):
    """Anna, whose own account (proven, with her own password) owns another company."""
    return make_member(
        dispatch_app, company, "owner", email="anna@example.am", password_hash=hash_password("anna-own-pw")
    )


def _bearer(session: dict) -> dict[str, str]:
    return {"Authorization": f"Bearer {session['accessToken']}"}


def _magic_link_session(client, data_dir: Path, email: str) -> dict:
    """The address's holder proves it: a sign-in link mailed to it, used."""
    assert client.post("/auth/magic-link", json={"email": email}).status_code == 202
    texts = [mail_text(p) for p in sent_mail(client)]
    text = next(t for t in reversed(texts) if f"To: {email}" in t and "/login?token=" in t)
    token = text.split("/login?token=")[1].split()[0]
    verified = client.post("/auth/magic-link/verify", json={"token": token})
    assert verified.status_code == 200, verified.json
    return verified.json


def test_a_courier_created_with_a_password_signs_in_at_once_sees_the_companys_orders_and_is_assigned(
    dispatch_client, company, dispatcher
) -> None:
    made = _create(dispatch_client, dispatcher, "Aram@Example.am", phone="+37499000000")
    assert made.status_code == 201
    courier = made.json["courier"]
    assert (courier["email"], courier["active"]) == ("aram@example.am", True)
    assert courier["userId"] is not None

    signed_in = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER)
    assert signed_in.status_code == 200, signed_in.json
    session = signed_in.json
    assert (session["role"], session["company"]["id"]) == ("courier", str(company.id))
    assert session["user"]["courierId"] == courier["id"]
    assert [m["companyId"] for m in session["memberships"]] == [str(company.id)]

    order = ready_order(dispatch_client, dispatcher)
    assigned = dispatch_client.post(
        f"/orders/{order['id']}/assign", json={"courierId": int(courier["id"])}, headers=dispatcher.headers
    )
    assert assigned.status_code == 201
    listed = dispatch_client.get("/courier/orders", headers=_bearer(session))
    assert listed.status_code == 200
    assert [o["id"] for o in listed.json["orders"]] == [order["id"]]
    picked = dispatch_client.post(
        f"/courier/orders/{order['id']}/status", json={"status": "picked_up"}, headers=_bearer(session)
    )
    assert picked.status_code == 200
    # The session's refresh token rotates like any other.
    refreshed = _refresh(dispatch_client, session)
    assert refreshed.status_code == 200 and refreshed.json["role"] == "courier"


def test_a_company_set_password_never_lands_in_another_company_and_leaves_the_existing_account_alone(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    own_company = make_company("Anna's Shop")
    anna = make_member(
        dispatch_app,
        own_company,
        "owner",
        email="anna@example.am",
        password_hash=hash_password("anna-own-pw"),
    )
    before = User.get_by_id(anna.user.id)

    made = _create(dispatch_client, dispatcher, "anna@example.am", displayName="Courier Anna")
    fresh = _create(dispatch_client, dispatcher, "nobody@example.am", displayName="Courier Anna")
    assert made.status_code == fresh.status_code == 201

    # The answer is the same whether or not the address has an account.
    def shape(body: dict) -> dict:
        return {k: v for k, v in body["courier"].items() if k not in {"id", "userId", "email", "createdAt"}}

    assert shape(made.json) == shape(fresh.json)
    assert int(made.json["courier"]["userId"]) > anna.user.id  # an account of its own, made now

    scoped = _login(dispatch_client, "anna@example.am", SET_BY_DISPATCHER)
    assert scoped.status_code == 200
    assert scoped.json["company"]["id"] == str(dispatcher.membership.company_id)
    assert scoped.json["role"] == "courier"
    assert [m["companyId"] for m in scoped.json["memberships"]] == [str(dispatcher.membership.company_id)]
    assert scoped.json["user"]["displayName"] == "Courier Anna"
    me = dispatch_client.get("/me", headers=_bearer(scoped.json))
    assert str(own_company.id) not in {m["companyId"] for m in me.json["memberships"]}
    switched = dispatch_client.post(
        "/auth/switch-company", json={"companyId": str(own_company.id)}, headers=_bearer(scoped.json)
    )
    assert switched.status_code == 403

    # The company sees only what it typed: nothing of Anna's own account.
    members = dispatch_client.get("/company/members", headers=dispatcher.headers).json["members"]
    entry = next(m for m in members if m["userId"] == made.json["courier"]["userId"])
    assert (entry["name"], entry["email"], entry["role"]) == ("Courier Anna", "anna@example.am", "courier")

    # Anna's account, its sign-in and its memberships are untouched.
    after = User.get_by_id(anna.user.id)
    assert (after.display_name, after.password_hash, after.email_confirmed) == (
        before.display_name,
        before.password_hash,
        before.email_confirmed,
    )
    assert [m.company_id for m in Membership.select().where(Membership.user == anna.user.id)] == [
        own_company.id
    ]
    own = _login(dispatch_client, "anna@example.am", "anna-own-pw")
    assert own.status_code == 200 and own.json["company"]["id"] == str(own_company.id)
    assert own.json["role"] == "owner"


def test_proof_of_the_address_drops_the_company_set_password_and_ends_its_sessions(
    dispatch_client, company, dispatcher, data_dir
) -> None:
    assert _create(dispatch_client, dispatcher, "aram@example.am").status_code == 201
    held = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).json
    assert dispatch_client.get("/me", headers=_bearer(held)).status_code == 200

    proven = _magic_link_session(dispatch_client, data_dir, "aram@example.am")
    # The courier keeps their place in the company through their own sign-in...
    assert (proven["company"]["id"], proven["role"]) == (str(company.id), "courier")
    # ...while the password the company set, and every session opened with it, has ended.
    assert _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).status_code == 401
    assert dispatch_client.get("/me", headers=_bearer(held)).status_code == 401
    assert _refresh(dispatch_client, held).status_code == 401


def test_a_password_reset_through_the_mailed_link_also_proves_the_address_and_drops_the_set_one(
    dispatch_client, company, dispatcher
) -> None:
    """The other first proof of the address: "forgot password", the link mailed to it, used."""
    assert _create(dispatch_client, dispatcher, "aram@example.am").status_code == 201
    held = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).json
    assert dispatch_client.post("/auth/password/forgot", json={"email": "aram@example.am"}).status_code == 202
    text = next(
        t
        for t in reversed([mail_text(p) for p in sent_mail(dispatch_client)])
        if "To: aram@example.am" in t and "/login?password=" in t
    )
    token = text.split("/login?password=")[1].split()[0]
    reset = dispatch_client.post("/auth/password/reset", json={"token": token, "password": "arams-own-pw"})
    assert reset.status_code == 200, reset.json
    assert (reset.json["company"]["id"], reset.json["role"]) == (str(company.id), "courier")
    assert _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).status_code == 401
    assert _login(dispatch_client, "aram@example.am", "arams-own-pw").status_code == 200
    assert dispatch_client.get("/me", headers=_bearer(held)).status_code == 401


def test_proof_by_an_existing_account_hands_it_the_company_only_membership(
    dispatch_app, dispatch_client, company, dispatcher, data_dir
) -> None:
    own_company = make_company("Anna's Shop")
    anna = make_member(
        dispatch_app,
        own_company,
        "owner",
        email="anna@example.am",
        password_hash=hash_password("anna-own-pw"),
    )
    made = _create(dispatch_client, dispatcher, "anna@example.am").json["courier"]
    held = _login(dispatch_client, "anna@example.am", SET_BY_DISPATCHER).json

    _magic_link_session(dispatch_client, data_dir, "anna@example.am")
    assert _login(dispatch_client, "anna@example.am", SET_BY_DISPATCHER).status_code == 401
    assert dispatch_client.get("/me", headers=_bearer(held)).status_code == 401
    # Anna, who proved the address, now holds the courier membership herself.
    roles = {m.company_id: m.role for m in Membership.select().where(Membership.user == anna.user.id)}
    assert roles == {own_company.id: "owner", company.id: "courier"}
    assert Courier.get_by_id(int(made["id"])).user_id == anna.user.id
    # The company cannot set her a password any more.
    reset = dispatch_client.patch(
        f"/couriers/{made['id']}", json={"password": "another-one"}, headers=dispatcher.headers
    )
    assert reset.status_code == 409 and reset.json["code"] == "address_proven"


def test_a_dispatcher_resets_an_unproven_couriers_password_but_never_a_proven_ones(
    dispatch_client, dispatcher, data_dir
) -> None:
    made = _create(dispatch_client, dispatcher, "aram@example.am").json["courier"]
    lost_phone = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).json

    reset = dispatch_client.patch(
        f"/couriers/{made['id']}", json={"password": "new-from-depot"}, headers=dispatcher.headers
    )
    assert reset.status_code == 200
    assert _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).status_code == 401
    assert dispatch_client.get("/me", headers=_bearer(lost_phone)).status_code == 401
    assert _login(dispatch_client, "aram@example.am", "new-from-depot").status_code == 200

    _magic_link_session(dispatch_client, data_dir, "aram@example.am")
    refused = dispatch_client.patch(
        f"/couriers/{made['id']}", json={"password": "depot-again!"}, headers=dispatcher.headers
    )
    assert refused.status_code == 409 and refused.json["code"] == "address_proven"
    assert _login(dispatch_client, "aram@example.am", "depot-again!").status_code == 401


def test_a_courier_replaces_the_company_set_password_with_their_own_which_stays_scoped(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    other = make_company("Elsewhere")
    make_member(
        dispatch_app, other, "owner", email="anna@example.am", password_hash=hash_password("anna-own-pw")
    )
    _create(dispatch_client, dispatcher, "anna@example.am")
    session = _login(dispatch_client, "anna@example.am", SET_BY_DISPATCHER).json
    other_session = _login(dispatch_client, "anna@example.am", SET_BY_DISPATCHER).json

    wrong = dispatch_client.patch(
        "/me/password",
        json={"currentPassword": "not-the-one", "password": "my-own-secret"},
        headers=_bearer(session),
    )
    assert wrong.status_code == 403
    changed = dispatch_client.patch(
        "/me/password",
        json={"currentPassword": SET_BY_DISPATCHER, "password": "my-own-secret"},
        headers=_bearer(session),
    )
    assert changed.status_code == 204
    assert dispatch_client.get("/me", headers=_bearer(session)).status_code == 200
    assert dispatch_client.get("/me", headers=_bearer(other_session)).status_code == 401
    assert _login(dispatch_client, "anna@example.am", SET_BY_DISPATCHER).status_code == 401
    mine = _login(dispatch_client, "anna@example.am", "my-own-secret")
    assert mine.status_code == 200 and mine.json["company"]["id"] == str(dispatcher.membership.company_id)
    assert [m["companyId"] for m in mine.json["memberships"]] == [str(dispatcher.membership.company_id)]
    # The account's own password is not the one changed.
    anna = User.get(User.email == "anna@example.am")
    assert verify_password(anna.password_hash, "anna-own-pw")
    refreshed = _refresh(dispatch_client, session)
    assert refreshed.status_code == 200
    assert [m["companyId"] for m in refreshed.json["memberships"]] == [str(dispatcher.membership.company_id)]


def test_a_company_set_password_never_opens_a_dispatchers_or_owners_role(
    dispatch_client, company, owner, dispatcher
) -> None:
    made = _create(dispatch_client, dispatcher, "aram@example.am").json["courier"]
    held = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).json
    promoted = dispatch_client.patch(
        f"/company/members/{made['userId']}", json={"role": "dispatcher"}, headers=owner.headers
    )
    assert promoted.status_code == 200
    assert _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).status_code == 401
    assert _refresh(dispatch_client, held).status_code == 401
    # Back to courier, the company-set password works again.
    dispatch_client.patch(
        f"/company/members/{made['userId']}", json={"role": "courier"}, headers=owner.headers
    )
    assert _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).status_code == 200


def test_a_company_set_session_cannot_accept_another_companys_invite_into_any_role(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    """Whoever holds the password a dispatcher set, with another company's invite link (an owner's,
    a dispatcher's, a courier's) in hand, gets no membership there: the session acts in its company
    only, and an accepted invite would be an unscoped membership of the account."""
    _create(dispatch_client, dispatcher, "aram@example.am")
    held = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).json
    other = make_company("Other Express")
    other_owner = make_member(dispatch_app, other, "owner")
    for role in ("owner", "dispatcher", "courier"):
        link = dispatch_client.post(
            "/company/invites", json={"role": role, "name": "Aram"}, headers=other_owner.headers
        ).json["link"]
        token = link.rsplit("/invite/", 1)[1]
        refused = dispatch_client.post("/auth/invite/accept", json={"token": token}, headers=_bearer(held))
        assert refused.status_code == 409 and refused.json["code"] == "sign_in_required", refused.json
        assert (
            not Membership.select()
            .where(Membership.company == other.id, Membership.role == role)
            .where(Membership.user == User.get(User.email == "aram@example.am").id)
            .exists()
        )
    switched = dispatch_client.post(
        "/auth/switch-company", json={"companyId": str(other.id)}, headers=_bearer(held)
    )
    assert switched.status_code == 403


def test_a_deactivated_courier_cannot_sign_in_with_the_company_set_password(
    dispatch_client, dispatcher
) -> None:
    made = _create(dispatch_client, dispatcher, "aram@example.am").json["courier"]
    dispatch_client.patch(f"/couriers/{made['id']}", json={"active": False}, headers=dispatcher.headers)
    assert _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).status_code == 401


def test_an_address_already_on_the_team_answers_409_and_another_company_may_still_add_it(
    dispatch_app, dispatch_client, dispatcher
) -> None:
    assert _create(dispatch_client, dispatcher, "aram@example.am").status_code == 201
    again = _create(dispatch_client, dispatcher, "ARAM@example.am", password="other-password")
    assert again.status_code == 409 and again.json["code"] == "already_member"
    assert _create(dispatch_client, dispatcher, dispatcher.user.email).status_code == 409

    rival = make_member(dispatch_app, make_company("Rival"), "dispatcher")
    assert _create(dispatch_client, rival, "aram@example.am", password="rival-password").status_code == 201
    # Each company's password lands in that company only.
    first = _login(dispatch_client, "aram@example.am", SET_BY_DISPATCHER).json
    second = _login(dispatch_client, "aram@example.am", "rival-password").json
    assert first["company"]["id"] == str(dispatcher.membership.company_id)
    assert second["company"]["id"] == str(rival.membership.company_id)


@pytest.mark.parametrize("password", ["short", "x" * 201, None])
def test_a_bad_company_set_password_on_patch_is_400(dispatch_client, dispatcher, password) -> None:
    made = _create(dispatch_client, dispatcher, "aram@example.am").json["courier"]
    response = dispatch_client.patch(
        f"/couriers/{made['id']}", json={"password": password}, headers=dispatcher.headers
    )
    assert response.status_code == 400 and response.json["errors"]
