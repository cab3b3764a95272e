"""The deployment's custody key fingerprint: recorded in the engine database at the first use of a
key; a node given another key (a second node set up with its own `custody init`, a wrong restore)
derives no address and signs nothing, says why in health and is not ready."""

from __future__ import annotations

import threading

import pytest

from appliance.common.health import Check
from appliance.engine.custody import KEY_REFUSED, Custody, CustodyRefused
from appliance.engine.custody_record import PLAIN_WARNING, custody_probe, guard, recorded
from appliance.engine.db import database
from appliance.engine.models import Broadcast
from appliance.settings import Settings
from tests.engine.helpers import Signer
from tests.engine.pipeline_harness import TEST_MNEMONIC, Harness, harness_settings, make_harness

OTHER_MNEMONIC = "legal winner thank year wave sausage worth useful legal winner thank yellow"
OTHER_FINGERPRINT = Custody(OTHER_MNEMONIC).fingerprint


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    return make_harness(harness_settings(settings, {}), _mine)


def other_node(settings: Settings, harness: Harness) -> tuple[Harness, Signer]:
    """A node on the same databases and appliance.key but with another custody key, and the
    first node's operator signing requests to it."""
    other = make_harness(
        harness_settings(settings, {"APPLIANCE_CUSTODY_KEY": OTHER_MNEMONIC}), _mine, operator=False
    )
    theirs = Signer(other.app.test_client(), harness.signer.operator_id, harness.signer.secret)
    return other, theirs


def address_for(signer: Signer, account_ref: str):
    return signer.request(
        "POST", "/v1/deposit-addresses", {"accountRef": account_ref, "chainId": "eth_local"}
    )


def probe(app) -> Check:
    runtime = app.extensions["engine"]
    with app.app_context(), database.connection_context():
        return custody_probe(runtime.custody)()


def test_the_first_use_records_the_fingerprint_and_the_same_key_goes_on(harness: Harness) -> None:
    with database.connection_context():
        assert recorded() is None  # starting is no use: nothing derived, nothing signed yet
    assert address_for(harness.signer, "c1").status_code == 201
    with database.connection_context():
        row = recorded()
    assert row is not None and row.fingerprint == "73c5da0a"
    assert address_for(harness.signer, "c2").status_code == 201
    ready = harness.app.test_client().get("/health/ready")
    assert ready.status_code == 200 and ready.json["checks"]["custody"] == "pass"


def test_a_node_with_another_key_derives_and_signs_nothing_says_why_and_is_not_ready(
    settings: Settings, harness: Harness
) -> None:
    assert address_for(harness.signer, "c1").status_code == 201  # the deployment's key, recorded
    other, theirs = other_node(settings, harness)

    refused = address_for(theirs, "c2")
    assert refused.status_code == 503 and refused.json["detail"] == KEY_REFUSED
    assert theirs.request("GET", "/v1/payout-wallet").status_code == 503

    ready = other.app.test_client().get("/health/ready")
    assert ready.status_code == 503 and ready.json["checks"]["custody"] == "fail"
    check = probe(other.app)
    assert check.status == "fail"
    assert f"this node's custody key (fingerprint {OTHER_FINGERPRINT})" in check.detail
    assert "not the deployment's (fingerprint 73c5da0a" in check.detail

    # A payout submitted there waits with the reason and is never signed by the other key.
    assert theirs.submit("pyo_otherkey01", asset="ETH").status_code == 201
    other.run_pass()
    waiting = other.payout("pyo_otherkey01")
    assert waiting.status == "REQUESTED" and "is not the deployment's" in (waiting.reason or "")
    with database.connection_context():
        assert Broadcast.select().count() == 0
    with pytest.raises(CustodyRefused):
        other.app.extensions["engine"].custody.sign_transaction(0, 0, {})

    # The deployment's own node goes on answering.
    assert address_for(harness.signer, "c3").status_code == 201


def test_a_node_whose_key_is_used_first_makes_it_the_deployments_and_refuses_the_other(
    settings: Settings, harness: Harness
) -> None:
    _other, theirs = other_node(settings, harness)
    assert address_for(theirs, "c1").status_code == 201  # first use: the other key is recorded
    assert address_for(harness.signer, "c2").status_code == 503
    assert harness.app.test_client().get("/health/ready").json["checks"]["custody"] == "fail"


def test_two_first_uses_at_once_record_one_fingerprint_and_refuse_the_other(harness: Harness) -> None:
    answers: dict[str, str | None] = {}

    def use(fingerprint: str) -> None:
        with database.connection_context():
            answers[fingerprint] = guard(fingerprint)

    threads = [threading.Thread(target=use, args=(f,)) for f in ("73c5da0a", OTHER_FINGERPRINT)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    with database.connection_context():
        row = recorded()
    assert row is not None
    winner = row.fingerprint
    loser = OTHER_FINGERPRINT if winner == "73c5da0a" else "73c5da0a"
    assert answers[winner] is None and "is not the deployment's" in (answers[loser] or "")


def test_a_key_in_the_clear_passes_health_with_a_warning(settings: Settings, harness: Harness) -> None:
    check = probe(harness.app)  # APPLIANCE_CUSTODY_KEY
    assert check.status == "pass" and check.data["warning"].startswith(
        "the custody key is given in the clear"
    )
    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    plain = make_harness(harness_settings(settings, {"APPLIANCE_CUSTODY_KEY": ""}), _mine, operator=False)
    check = probe(plain.app)
    assert check.status == "pass" and check.data == {
        "fingerprint": "73c5da0a",
        "encrypted": False,
        "warning": check.data["warning"],
    }
    assert check.detail == "warning: " + PLAIN_WARNING
    assert "only an encrypted key (`appliance custody encrypt`) or a signer run as its own OS user" in (
        check.detail
    )


def test_an_encrypted_key_passes_health_without_a_warning_and_health_warns_of_a_plain_one(
    settings: Settings,
) -> None:
    from appliance.cli.admin import _not_built_warnings
    from appliance.engine.custody_file import encrypt_in_place

    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    plain = make_harness(harness_settings(settings, {"APPLIANCE_CUSTODY_KEY": ""}), _mine, operator=False)
    report = {"engine": {"checks": {"custody": {"status": "pass", **probe(plain.app).data}}}}
    assert _not_built_warnings(report) == ["warning: engine custody: " + PLAIN_WARNING]

    encrypt_in_place(settings.data_dir, lambda: "a passphrase")
    encrypted = make_harness(
        harness_settings(
            settings, {"APPLIANCE_CUSTODY_KEY": "", "APPLIANCE_CUSTODY_PASSPHRASE": "a passphrase"}
        ),
        _mine,
        operator=False,
    )
    check = probe(encrypted.app)
    assert check == Check("pass", "", {"fingerprint": "73c5da0a", "encrypted": True})
