from appliance.common.passwords import hash_password, verify_password


def test_a_password_verifies_against_its_hash_and_a_wrong_one_does_not(
    production_password_hashing: None,
) -> None:
    stored = hash_password("correct horse")
    assert stored.startswith("$argon2id$v=19$m=65536,t=3,p=4$")
    assert verify_password(stored, "correct horse")
    assert not verify_password(stored, "wrong horse")


def test_verifying_without_a_hash_is_false() -> None:
    assert not verify_password(None, "placeholder-password-for-timing")
    assert not verify_password("not-a-hash", "anything")


def test_the_placeholder_for_missing_accounts_costs_what_a_real_hash_costs(
    production_password_hashing: None,
) -> None:
    """The placeholder is a fixed string; its parameters must stay the hasher's, or a wrong email
    would answer faster than a wrong password."""
    from appliance.common import passwords

    assert not passwords.needs_rehash(passwords._PLACEHOLDER)
    assert passwords._hasher.verify(passwords._PLACEHOLDER, "placeholder-password-for-timing")
