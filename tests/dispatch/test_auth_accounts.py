"""Accounts nobody can take over in advance: a password signs in only on a proven address, and
only the address's owner sets it; passwords change through the current one or an emailed link,
ending every other session (issue 33, docs/identity.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from appliance.common.passwords import hash_password
from appliance.dispatch.models import AuthSession, Membership, User
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import mail_text, sent_mail

VICTIM = "victim@example.am"
ATTACKER_PASSWORD = "attacker-chose-this"
DEPOT = {"name": "Main", "address": "Tumanyan 5", "point": {"lat": 40.18, "lon": 44.51}}


def _mails_to(client, address: str) -> list[str]:
    texts = [mail_text(p) for p in sent_mail(client)]
    return [t for t in texts if f"To: {address}" in t]


def _link_token(client, address: str, marker: str) -> str:
    """The token of the latest mail to ``address`` whose link contains ``marker``."""
    text = next(t for t in reversed(_mails_to(client, address)) if marker in t)
    return text.split(marker)[1].split()[0]


def _victim_signs_up_and_verifies(client, data_dir: Path) -> dict:
    answer = client.post(
        "/auth/signup",
        json={"company": {"name": "Victim Co"}, "owner": {"name": "V", "email": VICTIM}, "depot": DEPOT},
    )
    assert answer.status_code == 202
    session = client.post(
        "/auth/magic-link/verify", json={"token": _link_token(client, VICTIM, "/login?token=")}
    )
    assert session.status_code == 200 and session.json["company"]["name"] == "Victim Co"
    assert session.json["role"] == "owner"
    return session.json


def _login(client, email: str, password: str):
    return client.post("/auth/login", json={"email": email, "password": password})


@pytest.fixture
def attacker(dispatch_app):
    return make_member(dispatch_app, make_company("Attacker Co"), "owner", email="boss@attacker.am")


# -- the takeover set up in advance ------------------------------------------------------------------


def test_a_courier_made_with_the_victims_email_gives_the_attacker_no_way_into_the_victims_company(
    dispatch_client, attacker, data_dir
) -> None:
    made = dispatch_client.post(
        "/couriers",
        json={"email": VICTIM, "password": ATTACKER_PASSWORD, "displayName": "Victim"},
        headers=attacker.headers,
    )
    assert made.status_code == 201
    # The attacker's password opens the courier membership of the attacker's own company, nothing
    # else (issue 40: the specification's courier password, kept as a company-set credential).
    planted = _login(dispatch_client, VICTIM, ATTACKER_PASSWORD)
    assert planted.status_code == 200 and planted.json["company"]["name"] == "Attacker Co"
    assert planted.json["role"] == "courier"
    # The victim signs up while the planted session is still open: it never sees the victim's
    # company, and cannot switch into it.
    answer = dispatch_client.post(
        "/auth/signup",
        json={"company": {"name": "Victim Co"}, "owner": {"name": "V", "email": VICTIM}, "depot": DEPOT},
    )
    assert answer.status_code == 202
    planted_headers = {"Authorization": f"Bearer {planted.json['accessToken']}"}
    seen = dispatch_client.get("/me", headers=planted_headers).json["memberships"]
    assert [m["companyName"] for m in seen] == ["Attacker Co"]
    victim_company = Membership.get(
        Membership.role == "owner", Membership.user == User.get(User.email == VICTIM)
    )
    switched = dispatch_client.post(
        "/auth/switch-company", json={"companyId": str(victim_company.company_id)}, headers=planted_headers
    )
    assert switched.status_code == 403
    # The victim proves the address: the planted password and its session end.
    session = dispatch_client.post(
        "/auth/magic-link/verify", json={"token": _link_token(dispatch_client, VICTIM, "/login?token=")}
    )
    assert session.status_code == 200 and session.json["company"]["name"] == "Victim Co"
    assert _login(dispatch_client, VICTIM, ATTACKER_PASSWORD).status_code == 401
    assert dispatch_client.get("/me", headers=planted_headers).status_code == 401
    refreshed = dispatch_client.post("/auth/refresh", json={"refreshToken": planted.json["refreshToken"]})
    assert refreshed.status_code == 401
    # Nor can the attacker set the victim a new password now.
    reset = dispatch_client.patch(
        f"/couriers/{made.json['courier']['id']}",
        json={"password": "attacker-again"},
        headers=attacker.headers,
    )
    assert reset.status_code == 409
    assert _login(dispatch_client, VICTIM, "attacker-again").status_code == 401


def test_an_invite_the_inviter_accepts_with_the_victims_email_gives_no_way_into_the_victims_company(
    dispatch_client, attacker, data_dir
) -> None:
    link = dispatch_client.post(
        "/company/invites",
        json={"role": "dispatcher", "name": "V", "email": VICTIM},
        headers=attacker.headers,
    ).json["link"]
    token = link.rsplit("/invite/", 1)[1]
    planted = dispatch_client.post(
        "/auth/invite/accept", json={"token": token, "password": ATTACKER_PASSWORD}
    )
    assert planted.status_code == 200
    # Before the victim ever comes, the attacker's password does not sign in either.
    assert _login(dispatch_client, VICTIM, ATTACKER_PASSWORD).status_code == 401
    _victim_signs_up_and_verifies(dispatch_client, data_dir)
    assert _login(dispatch_client, VICTIM, ATTACKER_PASSWORD).status_code == 401
    # The session the attacker opened before the address was proven has ended: it can neither
    # refresh nor switch into the victim's company.
    planted_headers = {"Authorization": f"Bearer {planted.json['accessToken']}"}
    refreshed = dispatch_client.post("/auth/refresh", json={"refreshToken": planted.json["refreshToken"]})
    assert refreshed.status_code == 401
    victim_company = Membership.get(
        Membership.role == "owner", Membership.user == User.get(User.email == VICTIM)
    )
    switched = dispatch_client.post(
        "/auth/switch-company", json={"companyId": str(victim_company.company_id)}, headers=planted_headers
    )
    assert switched.status_code == 401


def test_a_member_sign_in_link_issued_before_the_address_was_proven_no_longer_signs_in(
    dispatch_client, attacker, data_dir
) -> None:
    link = dispatch_client.post(
        "/company/invites", json={"role": "courier", "name": "V", "email": VICTIM}, headers=attacker.headers
    ).json["link"]
    accepted = dispatch_client.post("/auth/invite/accept", json={"token": link.rsplit("/invite/", 1)[1]})
    user_id = accepted.json["user"]["id"]
    held = dispatch_client.post(f"/company/members/{user_id}/login-link", headers=attacker.headers)
    assert held.status_code == 201
    _victim_signs_up_and_verifies(dispatch_client, data_dir)
    token = held.json["link"].rsplit("/invite/", 1)[1]
    assert dispatch_client.post("/auth/invite/accept", json={"token": token}).status_code == 404
    assert (
        not AuthSession.select()
        .where(
            (AuthSession.user == int(user_id))
            & AuthSession.revoked_at.is_null()
            & (AuthSession.company == attacker.membership.company_id)
        )
        .exists()
    )


def test_a_sign_up_link_for_an_address_with_an_unproven_password_discards_that_password(
    dispatch_app, dispatch_client, data_dir
) -> None:
    # An account from before this rule: a password on an address nobody proved.
    make_member(dispatch_app, make_company("Old"), "courier", email=VICTIM)
    User.update(password_hash=hash_password(ATTACKER_PASSWORD)).where(User.email == VICTIM).execute()
    assert _login(dispatch_client, VICTIM, ATTACKER_PASSWORD).status_code == 401
    _victim_signs_up_and_verifies(dispatch_client, data_dir)
    victim = User.get(User.email == VICTIM)
    assert victim.email_confirmed and victim.password_hash is None


# -- invites and passwords ---------------------------------------------------------------------------------


def test_a_password_chosen_on_a_shown_invite_works_only_once_set_through_the_mailed_link(
    dispatch_client, attacker, data_dir
) -> None:
    link = dispatch_client.post(
        "/company/invites",
        json={"role": "dispatcher", "name": "Lilit", "email": VICTIM},
        headers=attacker.headers,
    ).json["link"]
    dispatch_client.post(
        "/auth/invite/accept", json={"token": link.rsplit("/invite/", 1)[1], "password": "lilit-pass-1"}
    )
    assert _login(dispatch_client, VICTIM, "lilit-pass-1").status_code == 401
    token = _link_token(dispatch_client, VICTIM, "/login?password=")
    reset = dispatch_client.post("/auth/password/reset", json={"token": token, "password": "lilit-pass-2"})
    assert reset.status_code == 200 and reset.json["company"]["name"] == "Attacker Co"
    assert _login(dispatch_client, VICTIM, "lilit-pass-2").status_code == 200
    assert (
        dispatch_client.post("/auth/password/reset", json={"token": token, "password": "x" * 8}).status_code
        == 401
    )


@pytest.fixture
def owner(dispatch_app):
    return make_member(
        dispatch_app,
        make_company("Arev"),
        "owner",
        email="ani@example.am",
        password_hash=hash_password("old-password"),
    )


def test_forgot_password_mails_a_link_that_sets_a_new_one_and_ends_every_session(
    dispatch_client, owner, data_dir
) -> None:
    for email in ("ani@example.am", "ghost@example.am"):
        answer = dispatch_client.post("/auth/password/forgot", json={"email": email})
        assert answer.status_code == 202 and answer.json == {"sent": True}
    assert len(sent_mail(dispatch_client)) == 1
    token = _link_token(dispatch_client, "ani@example.am", "/login?password=")
    reset = dispatch_client.post("/auth/password/reset", json={"token": token, "password": "new-password"})
    assert reset.status_code == 200 and reset.json["role"] == "owner"
    assert _login(dispatch_client, "ani@example.am", "old-password").status_code == 401
    assert _login(dispatch_client, "ani@example.am", "new-password").status_code == 200
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": owner.refresh_token}).status_code == 401
    )
    assert dispatch_client.get("/me", headers=owner.headers).status_code == 401


def test_a_password_change_with_the_current_password_keeps_this_session_and_ends_the_others(
    dispatch_client, owner
) -> None:
    here = _login(dispatch_client, "ani@example.am", "old-password").json
    headers = {"Authorization": f"Bearer {here['accessToken']}"}
    wrong = dispatch_client.patch(
        "/me/password", json={"password": "new-password", "currentPassword": "nope"}, headers=headers
    )
    assert wrong.status_code == 403 and wrong.json["code"] == "wrong_password"
    changed = dispatch_client.patch(
        "/me/password", json={"password": "new-password", "currentPassword": "old-password"}, headers=headers
    )
    assert changed.status_code == 204
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": owner.refresh_token}).status_code == 401
    )
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": here["refreshToken"]}).status_code == 200
    )
    assert _login(dispatch_client, "ani@example.am", "new-password").status_code == 200


@pytest.mark.parametrize(
    "body",
    [
        {"password": "new-password"},
        {"password": "new-password", "currentPassword": "old-password", "token": "t" * 43},
        {"password": "short", "currentPassword": "old-password"},
    ],
)
def test_a_password_change_needs_exactly_one_proof_and_a_valid_password(dispatch_client, owner, body) -> None:
    assert dispatch_client.patch("/me/password", json=body, headers=owner.headers).status_code == 400


def test_a_passwordless_member_sets_a_password_with_a_fresh_emailed_link(
    dispatch_app, dispatch_client, data_dir
) -> None:
    member = make_member(dispatch_app, make_company("Arev"), "dispatcher", email="lilit@example.am")
    headers = member.headers
    dispatch_client.post("/auth/password/forgot", json={"email": "lilit@example.am"})
    token = _link_token(dispatch_client, "lilit@example.am", "/login?password=")
    someone_elses = dispatch_client.patch(
        "/me/password", json={"password": "lilit-pass", "token": "x" * 43}, headers=headers
    )
    assert someone_elses.status_code == 403 and someone_elses.json["code"] == "invalid_link"
    set_ = dispatch_client.patch(
        "/me/password", json={"password": "lilit-pass", "token": token}, headers=headers
    )
    assert set_.status_code == 204
    assert _login(dispatch_client, "lilit@example.am", "lilit-pass").status_code == 200
    assert dispatch_client.get("/me", headers=headers).status_code == 200


def test_another_accounts_password_link_does_not_change_mine(
    dispatch_client, owner, dispatch_app, data_dir
) -> None:
    other = make_member(dispatch_app, make_company("Other"), "dispatcher", email="lilit@example.am")
    dispatch_client.post("/auth/password/forgot", json={"email": "ani@example.am"})
    token = _link_token(dispatch_client, "ani@example.am", "/login?password=")
    answer = dispatch_client.patch(
        "/me/password", json={"password": "lilit-pass", "token": token}, headers=other.headers
    )
    assert answer.status_code == 403
    assert User.get_by_id(other.user.id).password_hash is None


# -- throttling per account and per target address ---------------------------------------------------


def _from(client, address: str, path: str, body: dict):
    return client.post(path, json=body, environ_base={"REMOTE_ADDR": address})


def test_password_guesses_are_limited_per_account_whatever_the_client_address(dispatch_client, owner) -> None:
    for n in range(10):
        wrong = _from(
            dispatch_client,
            f"10.0.0.{n}",
            "/auth/login",
            {"email": "ani@example.am", "password": "guess-" + str(n) * 4},
        )
        assert wrong.status_code == 401
    held = _from(
        dispatch_client, "10.0.1.1", "/auth/login", {"email": "ANI@example.am", "password": "old-password"}
    )
    assert held.status_code == 429
    assert (
        _from(
            dispatch_client, "10.0.1.2", "/auth/login", {"email": "ghost@example.am", "password": "x" * 8}
        ).status_code
        == 401
    )


@pytest.mark.parametrize(
    ("path", "body"),
    [
        ("/auth/magic-link", lambda email: {"email": email}),
        ("/auth/password/forgot", lambda email: {"email": email}),
        (
            "/auth/signup",
            lambda email: {
                "company": {"name": "Flood Co"},
                "owner": {"name": "F", "email": email},
                "depot": DEPOT,
            },
        ),
    ],
)
def test_mail_to_one_address_is_limited_whatever_the_client_address(
    dispatch_client, owner, path, body
) -> None:
    for n in range(5):
        assert _from(dispatch_client, f"10.0.0.{n}", path, body("ani@example.am")).status_code == 202
    assert _from(dispatch_client, "10.0.1.1", path, body(" Ani@Example.am ")).status_code == 429
    assert _from(dispatch_client, "10.0.1.2", path, body("someone@example.am")).status_code == 202


def test_the_per_account_limit_is_shared_by_every_process_through_redis(settings, tmp_path) -> None:
    from appliance.dispatch.app import create_app
    from tests.nodes.harness import running_redis

    with running_redis(tmp_path / "redis") as redis_url:
        shared = settings.replace(rate_limit_storage=redis_url)
        first, second = create_app(shared), create_app(shared)
        make_member(
            first,
            make_company("Arev"),
            "owner",
            email="ani@example.am",
            password_hash=hash_password("old-password"),
        )
        guess = {"email": "ani@example.am", "password": "not-the-password"}
        for n in range(10):
            app = first if n % 2 else second
            assert _from(app.test_client(), f"10.0.0.{n}", "/auth/login", guess).status_code == 401
        right = {"email": "ani@example.am", "password": "old-password"}
        assert _from(first.test_client(), "10.0.1.1", "/auth/login", right).status_code == 429
        assert _from(second.test_client(), "10.0.1.2", "/auth/login", right).status_code == 429


def test_tries_of_the_current_password_are_limited_per_account(dispatch_client, owner) -> None:
    for n in range(10):
        body = {"password": "new-password", "currentPassword": f"guess-{n}"}
        assert dispatch_client.patch("/me/password", json=body, headers=owner.headers).status_code == 403
    right = {"password": "new-password", "currentPassword": "old-password"}
    assert dispatch_client.patch("/me/password", json=right, headers=owner.headers).status_code == 429
