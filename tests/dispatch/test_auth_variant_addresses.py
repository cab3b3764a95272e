"""One address, one account, one count (issue 41, item 3): the per-account sign-in limit and the
per-address mail limit count every spelling of an address under the one normalised address the
account is stored under (the e-mail type's IDNA/NFKC domain, lower case), so a full-width or
upper-case spelling neither buys more guesses nor gets past a lock, nor sends more mail."""

from __future__ import annotations

from appliance.common.passwords import hash_password
from appliance.dispatch.accounts import normalise_email
from tests.dispatch.factory import make_company, make_member
from tests.dispatch.mail import sent_mail

PASSWORD = "the-right-password"
# Spellings the API's e-mail type reads as ani@demo.am: full-width letters in the domain (NFKC
# through IDNA), upper case, surrounding spaces.
VARIANTS = ["ani@ｄemo.am", "ani@ｄｅｍｏ.ａｍ", "ANI@DEMO.AM", " ani@demｏ.am ", "Ani@Ｄemo.am"]


def _from(client, address: str, path: str, body: dict):
    return client.post(path, json=body, environ_base={"REMOTE_ADDR": address})


def test_every_spelling_normalises_to_the_stored_address() -> None:
    assert {normalise_email(v) for v in VARIANTS} == {"ani@demo.am"}


def test_a_locked_account_stays_locked_through_full_width_spellings_even_with_the_right_password(
    dispatch_app, dispatch_client
) -> None:
    make_member(
        dispatch_app,
        make_company("Demo"),
        "owner",
        email="ani@demo.am",
        password_hash=hash_password(PASSWORD),
    )
    for n in range(10):
        guess = {"email": "ani@demo.am", "password": f"guess-{n:04d}"}
        assert _from(dispatch_client, f"10.0.0.{n}", "/auth/login", guess).status_code == 401
    for n, variant in enumerate(VARIANTS):
        right = _from(dispatch_client, f"10.0.2.{n}", "/auth/login", {"email": variant, "password": PASSWORD})
        assert right.status_code == 429, (variant, right.status_code)


def test_guesses_spread_over_spellings_count_as_one_account(dispatch_app, dispatch_client) -> None:
    make_member(
        dispatch_app,
        make_company("Demo"),
        "owner",
        email="ani@demo.am",
        password_hash=hash_password(PASSWORD),
    )
    for n in range(10):
        guess = {"email": VARIANTS[n % len(VARIANTS)], "password": f"guess-{n:04d}"}
        assert _from(dispatch_client, f"10.0.0.{n}", "/auth/login", guess).status_code == 401
    held = _from(dispatch_client, "10.0.1.1", "/auth/login", {"email": "ani@demo.am", "password": PASSWORD})
    assert held.status_code == 429


def test_magic_links_to_spellings_of_one_address_share_its_five_an_hour(
    dispatch_app, dispatch_client
) -> None:
    make_member(dispatch_app, make_company("Demo"), "owner", email="ani@demo.am")
    spellings = ["ani@demo.am", *VARIANTS]
    answers = [
        _from(dispatch_client, f"10.0.0.{n}", "/auth/magic-link", {"email": email}).status_code
        for n, email in enumerate(spellings)
    ]
    assert answers == [202] * 5 + [429]
    assert len(sent_mail(dispatch_client)) == 5  # the victim's mailbox got five links, no more
