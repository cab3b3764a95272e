"""Access tokens are verified once and their claims remembered; the expiry is still checked on
every use, and a token signed with another key is never taken from the memory."""

from __future__ import annotations

from datetime import timedelta

from appliance.common import clock
from appliance.dispatch.auth.tokens import AccessClaims, decode_access_token, issue_access_token

CLAIMS = AccessClaims(user_id=1, company_id=2, membership_id=3, role="owner", epoch=0, session_id="s" * 32)


def test_a_remembered_token_expires_on_time():
    key = b"k" * 32
    token = issue_access_token(key, CLAIMS, lifetime_seconds=60)
    assert decode_access_token(key, token) == CLAIMS
    assert decode_access_token(key, token) == CLAIMS
    clock.advance(timedelta(seconds=61))
    assert decode_access_token(key, token) is None


def test_a_token_verified_under_one_key_is_refused_under_another():
    token = issue_access_token(b"a" * 32, CLAIMS, lifetime_seconds=60)
    assert decode_access_token(b"a" * 32, token) == CLAIMS
    assert decode_access_token(b"b" * 32, token) is None


def test_a_tampered_token_is_refused_every_time():
    key = b"k" * 32
    token = issue_access_token(key, CLAIMS, lifetime_seconds=60)
    head, payload, signature = token.split(".")
    forged = ".".join([head, payload, signature[:-2] + ("AA" if signature[-2:] != "AA" else "BB")])
    for _ in range(2):
        assert decode_access_token(key, forged) is None
