"""Invites, member login links and member changes."""

from __future__ import annotations

from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.models import Courier, Membership
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail


@pytest.fixture
def company():
    return make_company("Arev")


@pytest.fixture
def owner(dispatch_app, company):
    return make_member(dispatch_app, company, "owner", email="owner@example.am")


@pytest.fixture
def dispatcher(dispatch_app, company):
    return make_member(dispatch_app, company, "dispatcher")


def _invite(client, member, **fields):
    body = {"role": "courier", "name": "Narek"} | fields
    return client.post("/company/invites", json=body, headers=member.headers)


def _token(link: str) -> str:
    return link.rsplit("/invite/", 1)[1]


def test_an_invite_gives_a_link_once_and_emails_it_when_an_email_is_given(
    dispatch_client, owner, data_dir
) -> None:
    response = _invite(dispatch_client, owner, email="narek@example.am", vehicle="Scooter")
    assert response.status_code == 201
    body = response.json
    assert body["emailed"] is True
    assert body["link"].startswith("http://127.0.0.1:8080/invite/")
    assert body["invite"]["role"] == "courier" and body["invite"]["vehicle"] == "Scooter"
    assert body["invite"]["invitedBy"]["userId"] == str(owner.user.id)
    assert _token(body["link"]) in mail_text(sent_mail(dispatch_client)[0])
    assert _invite(dispatch_client, owner).json["emailed"] is False


def test_a_dispatcher_may_invite_couriers_only(dispatch_client, dispatcher) -> None:
    assert _invite(dispatch_client, dispatcher).status_code == 201
    assert _invite(dispatch_client, dispatcher, role="dispatcher").status_code == 403
    assert _invite(dispatch_client, dispatcher, role="owner").status_code == 403


def test_a_courier_cannot_invite(dispatch_app, dispatch_client, company) -> None:
    courier = make_member(dispatch_app, company, "courier")
    assert _invite(dispatch_client, courier).status_code == 403


def test_the_preview_shows_the_company_and_the_role(dispatch_client, owner) -> None:
    token = _token(_invite(dispatch_client, owner).json["link"])
    body = dispatch_client.get(f"/auth/invite/{token}").json
    assert body["kind"] == "invite" and body["role"] == "courier" and body["name"] == "Narek"
    assert body["company"] == {"name": "Arev", "brandColor": "#1F6FEB", "logoUrl": None}


def test_accepting_without_a_session_creates_a_courier_account(dispatch_client, owner) -> None:
    token = _token(_invite(dispatch_client, owner, phone="+37499000000").json["link"])
    response = dispatch_client.post(
        "/auth/invite/accept", json={"token": token, "password": "new-password-1"}
    )
    assert response.status_code == 200
    body = response.json
    assert body["role"] == "courier" and body["user"]["role"] == "courier"
    assert body["user"]["courierId"] is not None
    assert Courier.get_by_id(int(body["user"]["courierId"])).phone == "+37499000000"
    again = dispatch_client.get(f"/auth/invite/{token}")
    assert again.status_code == 410 and again.json["code"] == "used"
    assert dispatch_client.post("/auth/invite/accept", json={"token": token}).status_code == 404


def test_an_expired_invite_is_410_expired_on_preview_and_404_on_accept(dispatch_client, owner) -> None:
    token = _token(_invite(dispatch_client, owner).json["link"])
    clock.advance(timedelta(days=7, seconds=1))
    preview = dispatch_client.get(f"/auth/invite/{token}")
    assert preview.status_code == 410 and preview.json["code"] == "expired"
    assert dispatch_client.post("/auth/invite/accept", json={"token": token}).status_code == 404


@pytest.mark.parametrize("token", ["x" * 20, "y" * 200, "short"])
def test_unknown_invites_are_404(dispatch_client, token) -> None:
    assert dispatch_client.get(f"/auth/invite/{token}").status_code == 404


def test_an_invite_to_an_existing_email_requires_signing_in(dispatch_app, dispatch_client, owner) -> None:
    make_member(dispatch_app, make_company("Other"), "dispatcher", email="known@example.am")
    token = _token(_invite(dispatch_client, owner, email="known@example.am").json["link"])
    response = dispatch_client.post("/auth/invite/accept", json={"token": token})
    assert response.status_code == 409 and response.json["code"] == "sign_in_required"


def test_a_signed_in_account_is_attached_and_a_member_twice_is_409(
    dispatch_app, dispatch_client, owner
) -> None:
    elsewhere = make_member(dispatch_app, make_company("Other"), "dispatcher")
    token = _token(_invite(dispatch_client, owner, role="dispatcher").json["link"])
    response = dispatch_client.post("/auth/invite/accept", json={"token": token}, headers=elsewhere.headers)
    assert response.status_code == 200
    assert response.json["company"]["name"] == "Arev"
    assert {m["companyName"] for m in response.json["memberships"]} == {"Arev", "Other"}
    second = _token(_invite(dispatch_client, owner, role="dispatcher").json["link"])
    again = dispatch_client.post("/auth/invite/accept", json={"token": second}, headers=elsewhere.headers)
    assert again.status_code == 409 and again.json["code"] == "already_member"


def test_revoking_an_invite_makes_it_unknown(dispatch_client, owner, dispatcher) -> None:
    created = _invite(dispatch_client, owner, role="dispatcher").json
    invite_id = created["invite"]["id"]
    assert (
        dispatch_client.delete(f"/company/invites/{invite_id}", headers=dispatcher.headers).status_code == 404
    )
    assert dispatch_client.delete(f"/company/invites/{invite_id}", headers=owner.headers).status_code == 204
    assert dispatch_client.get(f"/auth/invite/{_token(created['link'])}").status_code == 404
    assert dispatch_client.delete(f"/company/invites/{invite_id}", headers=owner.headers).status_code == 404


def test_another_companys_invite_behaves_as_missing(dispatch_app, dispatch_client, owner) -> None:
    invite_id = _invite(dispatch_client, owner).json["invite"]["id"]
    stranger = make_member(dispatch_app, make_company("Other"), "owner")
    assert (
        dispatch_client.delete(f"/company/invites/{invite_id}", headers=stranger.headers).status_code == 404
    )


def test_members_lists_members_and_pending_invites(dispatch_client, owner, dispatcher) -> None:
    _invite(dispatch_client, owner)
    body = dispatch_client.get("/company/members", headers=dispatcher.headers).json
    assert {m["role"] for m in body["members"]} == {"owner", "dispatcher"}
    assert len(body["invites"]) == 1


# -- login links ------------------------------------------------------------------------------------


def test_a_login_link_signs_a_passwordless_courier_in_once(
    dispatch_app, dispatch_client, company, dispatcher
) -> None:
    courier = make_member(dispatch_app, company, "courier")
    first = dispatch_client.post(f"/company/members/{courier.user.id}/login-link", headers=dispatcher.headers)
    assert first.status_code == 201
    second = dispatch_client.post(
        f"/company/members/{courier.user.id}/login-link", headers=dispatcher.headers
    ).json
    # The newer link replaces the older unused one.
    assert dispatch_client.get(f"/auth/invite/{_token(first.json['link'])}").status_code == 404
    token = _token(second["link"])
    assert dispatch_client.get(f"/auth/invite/{token}").json["kind"] == "sign_in"
    session = dispatch_client.post("/auth/invite/accept", json={"token": token})
    assert session.status_code == 200 and session.json["role"] == "courier"
    assert dispatch_client.post("/auth/invite/accept", json={"token": token}).status_code == 404


def test_a_login_link_lasts_24_hours(dispatch_app, dispatch_client, company, dispatcher) -> None:
    courier = make_member(dispatch_app, company, "courier")
    link = dispatch_client.post(
        f"/company/members/{courier.user.id}/login-link", headers=dispatcher.headers
    ).json
    clock.advance(timedelta(hours=24, seconds=1))
    assert dispatch_client.get(f"/auth/invite/{_token(link['link'])}").json["code"] == "expired"


def test_login_link_role_rules(dispatch_app, dispatch_client, company, owner, dispatcher) -> None:
    other_dispatcher = make_member(dispatch_app, company, "dispatcher")
    assert (
        dispatch_client.post(
            f"/company/members/{owner.user.id}/login-link", headers=owner.headers
        ).status_code
        == 403
    )
    assert (
        dispatch_client.post(
            f"/company/members/{other_dispatcher.user.id}/login-link", headers=dispatcher.headers
        ).status_code
        == 403
    )
    assert (
        dispatch_client.post(
            f"/company/members/{other_dispatcher.user.id}/login-link", headers=owner.headers
        ).status_code
        == 201
    )
    assert (
        dispatch_client.post("/company/members/999999/login-link", headers=owner.headers).status_code == 404
    )


@pytest.mark.parametrize("code", ["has_sign_in", "other_company", "disabled"])
def test_login_link_conflicts_name_their_code(dispatch_app, dispatch_client, company, owner, code) -> None:
    courier = make_member(
        dispatch_app,
        company,
        "courier",
        password_hash=hash_password("password-123") if code == "has_sign_in" else None,
    )
    if code == "other_company":
        make_member(dispatch_app, make_company("Other"), "courier", user=courier.user)
    if code == "disabled":
        Membership.update(status="disabled").where(Membership.id == courier.membership.id).execute()
    response = dispatch_client.post(f"/company/members/{courier.user.id}/login-link", headers=owner.headers)
    assert response.status_code == 409 and response.json["code"] == code


# -- member changes ----------------------------------------------------------------------------------


def test_an_owner_changes_a_role_and_the_members_tokens_stop_at_once(
    dispatch_client, owner, dispatcher
) -> None:
    response = dispatch_client.patch(
        f"/company/members/{dispatcher.user.id}", json={"role": "courier"}, headers=owner.headers
    )
    assert response.status_code == 200
    assert response.json["member"]["role"] == "courier" and response.json["member"]["courierId"] is not None
    assert dispatch_client.get("/me", headers=dispatcher.headers).status_code == 401


def test_a_dispatcher_may_only_toggle_couriers(
    dispatch_app, dispatch_client, company, owner, dispatcher
) -> None:
    courier = make_member(dispatch_app, company, "courier")
    ok = dispatch_client.patch(
        f"/company/members/{courier.user.id}", json={"status": "disabled"}, headers=dispatcher.headers
    )
    assert ok.status_code == 200 and ok.json["member"]["status"] == "disabled"
    assert dispatch_client.get("/me", headers=courier.headers).status_code == 401
    assert (
        dispatch_client.patch(
            f"/company/members/{courier.user.id}", json={"role": "dispatcher"}, headers=dispatcher.headers
        ).status_code
        == 403
    )
    assert (
        dispatch_client.patch(
            f"/company/members/{owner.user.id}", json={"status": "disabled"}, headers=dispatcher.headers
        ).status_code
        == 403
    )


def test_the_last_active_owner_cannot_be_demoted_or_disabled(
    dispatch_app, dispatch_client, company, owner
) -> None:
    for change in ({"role": "dispatcher"}, {"status": "disabled"}):
        assert (
            dispatch_client.patch(
                f"/company/members/{owner.user.id}", json=change, headers=owner.headers
            ).status_code
            == 409
        )
    second = make_member(dispatch_app, company, "owner")
    assert (
        dispatch_client.patch(
            f"/company/members/{owner.user.id}", json={"role": "dispatcher"}, headers=second.headers
        ).status_code
        == 200
    )


def test_another_companys_member_is_404(dispatch_app, dispatch_client, owner) -> None:
    stranger = make_member(dispatch_app, make_company("Other"), "courier")
    assert (
        dispatch_client.patch(
            f"/company/members/{stranger.user.id}", json={"status": "disabled"}, headers=owner.headers
        ).status_code
        == 404
    )


def test_a_courier_sees_no_one_elses_email_or_phone_while_a_dispatcher_sees_all(
    dispatch_app, dispatch_client, company, owner, dispatcher
) -> None:
    courier = make_member(dispatch_app, company, "courier")
    colleague = make_member(dispatch_app, company, "courier")
    for n, member in enumerate((owner, dispatcher, courier, colleague)):
        member.user.phone = f"+3749100000{n}"
        member.user.save()
    assert (
        _invite(dispatch_client, owner, email="invitee@example.am", phone="+37499111111").status_code == 201
    )

    seen = dispatch_client.get("/company/members", headers=courier.headers)
    assert seen.status_code == 200
    contacts = {m["userId"]: (m["email"], m["phone"]) for m in seen.json["members"]}
    me = str(courier.user.id)
    assert contacts.pop(me) == (courier.user.email, "+37491000002")  # its own entry keeps them
    assert len(contacts) == 3 and set(contacts.values()) == {(None, None)}
    assert [(i["email"], i["phone"]) for i in seen.json["invites"]] == [(None, None)]
    assert {m["name"] for m in seen.json["members"]} >= {owner.user.display_name, colleague.user.display_name}

    full = dispatch_client.get("/company/members", headers=dispatcher.headers).json
    assert {m["userId"]: (m["email"], m["phone"]) for m in full["members"]} == {
        str(m.user.id): (m.user.email, f"+3749100000{n}")
        for n, m in enumerate((owner, dispatcher, courier, colleague))
    }
    assert [(i["email"], i["phone"]) for i in full["invites"]] == [("invitee@example.am", "+37499111111")]
