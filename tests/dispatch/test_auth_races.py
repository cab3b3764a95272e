"""One-time things used twice at the same moment: a refresh token rotates once (the other use is
reuse and ends the family), a member sign-in link signs in once. Two threads on two connections;
run on PostgreSQL too (APPLIANCE_TEST_BACKEND=postgres, `make test-postgres`), where the rows are
locked rather than serialised by SQLite's write transaction."""

from __future__ import annotations

from appliance.dispatch.auth.sessions import token_hash
from appliance.dispatch.models import AuthSession, RefreshToken
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.test_courier_app_races import at_once


def test_one_refresh_token_used_twice_at_once_rotates_once_and_ends_the_family(
    dispatch_app, dispatch_client
) -> None:
    member = make_member(dispatch_app, make_company("Arev"), "dispatcher")
    answers = at_once(
        dispatch_app,
        lambda c: c.post("/auth/refresh", json={"refreshToken": member.refresh_token}),
    )
    assert sorted(a.status_code for a in answers) == [200, 401]
    # One chain at most: the rotated token is spent once, and reuse detection fired, so the
    # winner's new refresh token is dead too.
    assert RefreshToken.select().where(RefreshToken.rotated_at.is_null(False)).count() == 1
    winner = next(a for a in answers if a.status_code == 200).json
    assert (
        dispatch_client.post("/auth/refresh", json={"refreshToken": winner["refreshToken"]}).status_code
        == 401
    )
    session_id = RefreshToken.get(RefreshToken.token_hash == token_hash(member.refresh_token)).session_id
    assert AuthSession.get_by_id(session_id).revoked_reason == "refresh_token_reuse"


def test_a_member_sign_in_link_used_twice_at_once_signs_in_once(dispatch_app, dispatch_client) -> None:
    company = make_company("Arev")
    dispatcher = make_member(dispatch_app, company, "dispatcher")
    courier = make_member(dispatch_app, company, "courier")
    link = dispatch_client.post(
        f"/company/members/{courier.user.id}/login-link", headers=dispatcher.headers
    ).json["link"]
    token = link.rsplit("/invite/", 1)[1]
    before = AuthSession.select().count()
    answers = at_once(
        dispatch_app, lambda c: c.post("/auth/invite/accept", json={"token": token}).status_code
    )
    assert sorted(answers) == [200, 404]
    assert AuthSession.select().count() == before + 1
