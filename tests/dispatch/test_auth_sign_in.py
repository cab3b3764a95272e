"""Sign-in, sessions and token life cycles."""

from __future__ import annotations

from datetime import timedelta

import pytest

from appliance.common import clock
from appliance.common.passwords import hash_password
from appliance.dispatch.models import Membership, User
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail

PASSWORD = "correct-horse-battery"


@pytest.fixture
def owner(dispatch_app):
    return make_member(
        dispatch_app,
        make_company("Arev"),
        "owner",
        email="ani@example.am",
        password_hash=hash_password(PASSWORD),
    )


def login(client, email="ani@example.am", password=PASSWORD):
    return client.post("/auth/login", json={"email": email, "password": password})


def test_password_sign_in_returns_a_session_with_tokens(dispatch_client, owner) -> None:
    response = login(dispatch_client)
    assert response.status_code == 200
    body = response.json
    assert body["tokenType"] == "Bearer" and body["expiresIn"] == 900
    assert body["accessToken"] and body["refreshToken"]
    assert body["user"]["id"] == str(owner.user.id)
    assert body["user"]["role"] == "dispatcher" and body["user"]["companyRole"] == "owner"
    assert body["user"]["courierId"] is None
    assert body["company"]["name"] == "Arev" and body["role"] == "owner"
    assert body["memberships"] == [
        {
            "companyId": str(owner.membership.company_id),
            "companyName": "Arev",
            "role": "owner",
            "status": "active",
        }
    ]


def test_email_is_case_insensitive(dispatch_client, owner) -> None:
    assert login(dispatch_client, email="ANI@Example.am").status_code == 200


@pytest.mark.parametrize(
    ("email", "password"), [("ani@example.am", "wrong-password"), ("nobody@example.am", PASSWORD)]
)
def test_wrong_credentials_are_401(dispatch_client, owner, email, password) -> None:
    assert login(dispatch_client, email, password).status_code == 401


@pytest.mark.parametrize(
    "body",
    [{"email": "ani@example.am", "password": "short"}, {"email": "not-an-email", "password": PASSWORD}, {}],
)
def test_malformed_sign_in_bodies_are_400(dispatch_client, body) -> None:
    assert dispatch_client.post("/auth/login", json=body).status_code == 400


def test_an_account_without_an_active_company_is_403(dispatch_client, owner) -> None:
    Membership.update(status="disabled").execute()
    assert login(dispatch_client).status_code == 403


def test_me_and_auth_me_answer_the_session_without_tokens(dispatch_client, owner) -> None:
    for path in ("/me", "/auth/me"):
        body = dispatch_client.get(path, headers=owner.headers).json
        assert body["user"]["email"] == "ani@example.am"
        assert "accessToken" not in body or body["accessToken"] is None
    assert dispatch_client.get("/me").status_code == 401


def test_refresh_rotates_the_token_and_the_old_one_then_ends_the_family(dispatch_client, owner) -> None:
    first = login(dispatch_client).json
    second = dispatch_client.post("/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert second.status_code == 200
    rotated = second.json
    assert rotated["refreshToken"] != first["refreshToken"]
    reuse = dispatch_client.post("/auth/refresh", json={"refreshToken": first["refreshToken"]})
    assert reuse.status_code == 401
    # The whole family is revoked: the newest refresh and access tokens stop too.
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": rotated["refreshToken"]}).status_code
        == 401
    )
    assert (
        dispatch_client.get("/me", headers={"Authorization": f"Bearer {rotated['accessToken']}"}).status_code
        == 401
    )


def test_an_unknown_or_expired_refresh_token_is_401(dispatch_app, dispatch_client, owner) -> None:
    assert dispatch_client.post("/auth/refresh", json={"refreshToken": "nope"}).status_code == 401
    tokens = login(dispatch_client).json
    clock.advance(timedelta(days=31))
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": tokens["refreshToken"]}).status_code
        == 401
    )


def test_access_tokens_expire(dispatch_client, owner) -> None:
    tokens = login(dispatch_client).json
    clock.advance(timedelta(seconds=901))
    assert (
        dispatch_client.get("/me", headers={"Authorization": f"Bearer {tokens['accessToken']}"}).status_code
        == 401
    )


def test_logout_revokes_the_session(dispatch_client, owner) -> None:
    tokens = login(dispatch_client).json
    headers = {"Authorization": f"Bearer {tokens['accessToken']}"}
    assert dispatch_client.post("/auth/logout", headers=headers).status_code == 204
    assert dispatch_client.get("/me", headers=headers).status_code == 401
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": tokens["refreshToken"]}).status_code
        == 401
    )
    assert dispatch_client.post("/auth/logout").status_code == 401


def test_switch_company_acts_in_the_other_company_and_sign_in_lands_there_next_time(
    dispatch_app, dispatch_client, owner
) -> None:
    other = make_company("Second")
    make_member(dispatch_app, other, "dispatcher", user=owner.user)
    tokens = login(dispatch_client).json
    response = dispatch_client.post(
        "/auth/switch-company",
        json={"companyId": str(other.id), "refreshToken": tokens["refreshToken"]},
        headers={"Authorization": f"Bearer {tokens['accessToken']}"},
    )
    assert response.status_code == 200
    assert response.json["company"]["id"] == str(other.id) and response.json["role"] == "dispatcher"
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": tokens["refreshToken"]}).status_code
        == 401
    )
    assert login(dispatch_client).json["company"]["id"] == str(other.id)


def test_switching_into_a_company_without_an_active_membership_is_403(
    dispatch_app, dispatch_client, owner
) -> None:
    other = make_company("Second")
    disabled = make_member(dispatch_app, other, "dispatcher", user=owner.user)
    Membership.update(status="disabled").where(Membership.id == disabled.membership.id).execute()
    stranger = make_company("Third")
    for company in (other, stranger):
        response = dispatch_client.post(
            "/auth/switch-company", json={"companyId": str(company.id)}, headers=owner.headers
        )
        assert response.status_code == 403


def test_signup_creates_company_owner_and_depot_and_emails_a_sign_in_link(
    dispatch_app, dispatch_client, data_dir
) -> None:
    response = dispatch_client.post(
        "/auth/signup",
        json={
            "company": {"name": "Gazelle"},
            "owner": {"name": "Aram", "email": "aram@example.am"},
            "depot": {"name": "Main", "address": "Tumanyan 5", "point": {"lat": 40.18, "lon": 44.51}},
        },
    )
    assert response.status_code == 202
    assert response.json["company"]["name"] == "Gazelle" and response.json["emailSent"] is True
    mails = sent_mail(dispatch_client)
    assert len(mails) == 1
    text = mail_text(mails[0])
    assert "To: aram@example.am" in text
    token = text.split("/login?token=")[1].split()[0]
    session = dispatch_client.post("/auth/magic-link/verify", json={"token": token})
    assert session.status_code == 200
    assert session.json["company"]["name"] == "Gazelle" and session.json["role"] == "owner"
    assert session.json["company"]["city"] == "Yerevan"
    depots = dispatch_client.get(
        "/company/depots", headers={"Authorization": f"Bearer {session.json['accessToken']}"}
    ).json
    assert depots["depots"][0]["isDefault"] is True


@pytest.mark.parametrize(
    ("patch", "status"),
    [
        ({"depot": {"name": "Main", "address": "x", "point": {"lat": 48.85, "lon": 2.35}}}, 422),
        ({"company": {"name": "G"}}, 400),
        ({"company": {"name": "G" * 121}}, 400),
        ({"owner": {"name": "A", "email": "bad"}}, 400),
    ],
)
def test_bad_signups_are_refused(dispatch_client, patch, status) -> None:
    body = {
        "company": {"name": "Gazelle"},
        "owner": {"name": "Aram", "email": "aram@example.am"},
        "depot": {"name": "Main", "address": "Tumanyan 5", "point": {"lat": 40.18, "lon": 44.51}},
    }
    body.update(patch)
    assert dispatch_client.post("/auth/signup", json=body).status_code == status


def test_magic_links_answer_202_whether_or_not_the_account_exists(dispatch_client, owner, data_dir) -> None:
    for email in ("ani@example.am", "ghost@example.am"):
        response = dispatch_client.post("/auth/magic-link", json={"email": email})
        assert response.status_code == 202 and response.json == {"sent": True}
    assert len(sent_mail(dispatch_client)) == 1


def _magic_token(client, data_dir) -> str:
    client.post("/auth/magic-link", json={"email": "ani@example.am"})
    latest = sent_mail(client)[-1]
    return mail_text(latest).split("/login?token=")[1].split()[0]


def test_a_magic_link_works_once(dispatch_client, owner, data_dir) -> None:
    token = _magic_token(dispatch_client, data_dir)
    assert dispatch_client.post("/auth/magic-link/verify", json={"token": token}).status_code == 200
    assert dispatch_client.post("/auth/magic-link/verify", json={"token": token}).status_code == 401
    assert User.get_by_id(owner.user.id).email_confirmed is True


def test_a_magic_link_expires_after_fifteen_minutes(dispatch_client, owner, data_dir) -> None:
    token = _magic_token(dispatch_client, data_dir)
    clock.advance(timedelta(minutes=15, seconds=1))
    assert dispatch_client.post("/auth/magic-link/verify", json={"token": token}).status_code == 401


def test_an_unknown_magic_link_is_401(dispatch_client) -> None:
    assert dispatch_client.post("/auth/magic-link/verify", json={"token": "x" * 43}).status_code == 401


def test_outbox_files_sort_in_sending_order(dispatch_client, owner, data_dir) -> None:
    for _ in range(3):
        dispatch_client.post("/auth/magic-link", json={"email": "ani@example.am"})
    names = sorted(p.name for p in sent_mail(dispatch_client))
    ids = [int(name.rsplit("-", 1)[1].removesuffix(".eml")) for name in names]
    assert len(names) == 3 and ids == sorted(ids)
