"""Spending controls per operator (issue 31, item 4), on the embedded chain: a maximum per
payout and a destination allow-list (400 at submission, nothing stored), a rolling 24 h volume
(held at reservation, also when several workers reserve at once), approval of payouts above a
threshold (`appliance payout approve|reject`), pausing an operator (503, nothing more signed),
and the ledger commands of `appliance operator`."""

from __future__ import annotations

import json
import threading
from datetime import timedelta
from typing import Any

import pytest
from click.testing import CliRunner

from appliance.cli import cli
from appliance.common import clock
from appliance.engine.chain.registry import eip55
from appliance.engine.client import EngineClient
from appliance.engine.db import database
from appliance.engine.ledger import service
from appliance.engine.ledger.models import PayoutApproval, PayoutApprovalWindow
from appliance.engine.models import Broadcast, Payout
from appliance.engine.payouts.pipeline import Pipeline
from appliance.settings import Settings
from tests.conftest import serving
from tests.engine.pipeline_harness import (
    ETHER,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)

OPERATOR = "op_alpha0001"


def _mine(app) -> None:
    app.extensions["engine"].chains.get("eth_local").mine()


@pytest.fixture
def harness(settings: Settings) -> Harness:
    made = make_harness(harness_settings(settings, {}), _mine)
    made.app.extensions["engine"].chains.get("eth_local").faucet("ETH", PAYOUT_WALLET, 10 * ETHER)
    return made


def appliance(harness: Harness, *args: str) -> Any:
    data_dir = str(harness.app.extensions["engine"].settings.data_dir)
    return CliRunner().invoke(
        cli, [*args, "--data-dir", data_dir, "--json"], env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC}
    )


def ok(result: Any) -> dict[str, Any]:
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def dest(n: int) -> str:
    return f"0x{0xC000 + n:040x}"


def stored() -> list[str]:
    with database.connection_context():
        return [p.payout_id for p in Payout.select().order_by(Payout.id)]


def test_a_payout_above_the_operators_maximum_is_refused_with_a_400_and_nothing_is_stored(
    harness: Harness,
) -> None:
    ok(appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--max-payout", "1000"))
    refused = harness.signer.submit("pyo_overmax001", amount="1001", asset="ETH", destination=dest(1))
    assert refused.status_code == 400
    assert "above this operator's maximum per payout of ETH on eth_local (1000" in refused.json["detail"]
    assert refused.json["errors"] == [
        {"field": "amountMinor", "message": "above the operator's maximum per payout"}
    ]
    assert stored() == []
    assert (
        harness.signer.submit("pyo_atmax00001", amount="1000", asset="ETH", destination=dest(1)).status_code
        == 201
    )
    # Another asset has no limit; removing the limit lets the larger payout in.
    ok(
        appliance(
            harness, "operator", "set-limits", OPERATOR, "--asset", "eth_local:ETH", "--max-payout", "none"
        )
    )
    assert (
        harness.signer.submit("pyo_overmax001", amount="1001", asset="ETH", destination=dest(1)).status_code
        == 201
    )


def test_a_destination_outside_the_allow_list_is_refused_with_a_400(harness: Harness) -> None:
    allowed = "0x" + "ab" * 20
    controls = ok(
        appliance(harness, "operator", "allow-destination", OPERATOR, allowed, "--chain-id", "eth_local")
    )
    assert controls["allowedDestinations"] == [{"chainId": "eth_local", "address": eip55(allowed)}]
    refused = harness.signer.submit("pyo_notlisted1", amount="5", asset="ETH", destination=dest(2))
    assert refused.status_code == 400
    assert "not on this operator's allow-list" in refused.json["detail"]
    assert refused.json["errors"] == [
        {"field": "destination", "message": "not on the operator's destination allow-list"}
    ]
    assert stored() == []
    # The listed address is accepted (stored in its EIP-55 form, compared in it).
    assert (
        harness.signer.submit("pyo_listed0001", amount="5", asset="ETH", destination=allowed).status_code
        == 201
    )
    ok(appliance(harness, "operator", "remove-destination", OPERATOR, allowed, "--chain-id", "eth_local"))
    assert (
        harness.signer.submit("pyo_notlisted1", amount="5", asset="ETH", destination=dest(2)).status_code
        == 201
    )


def test_a_paused_operator_is_answered_503_and_nothing_more_of_its_is_signed_until_resumed(
    harness: Harness,
) -> None:
    harness.submit("pyo_beforepause", 7, destination=dest(3))
    paused = ok(appliance(harness, "operator", "pause", OPERATOR, "--by", "alice"))
    assert paused["paused"] is True and paused["pausedBy"] == "alice"
    refused = harness.signer.submit("pyo_whilepaused", amount="7", asset="ETH", destination=dest(3))
    assert refused.status_code == 503
    assert f"Operator {OPERATOR} is paused" in refused.json["detail"]
    assert "pyo_whilepaused" not in stored()
    # A retry of the payout accepted before the pause is still answered as a replay.
    replay = harness.signer.submit("pyo_beforepause", amount="7", asset="ETH", destination=dest(3))
    assert replay.status_code == 200 and replay.json["outcome"] == "REPLAYED"
    harness.run_pass()
    harness.run_pass()
    waiting = harness.detail("pyo_beforepause")
    assert waiting["status"] == "REQUESTED" and waiting["broadcast"] is None
    assert "paused by the deployment's administrator" in waiting["reason"]
    ok(appliance(harness, "operator", "resume", OPERATOR))
    harness.skip_waits()
    harness.until_status("pyo_beforepause", "COMPLETED")


def test_a_pause_committed_while_a_payout_is_being_prepared_stops_its_reservation(
    harness: Harness, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The pause is read again under the reservation's lock: a payout whose first look passed is
    not signed once the pause is committed (signing stops at once, not at the next look)."""
    harness.submit("pyo_racepause1", 9, destination=dest(4))
    chain = harness.pipeline.chains.get("eth_local")
    original = chain.estimate_gas

    def pause_meanwhile(*args: Any, **kw: Any) -> int:
        with database.connection_context():
            service.set_paused(OPERATOR, True, "bob")
        return original(*args, **kw)

    monkeypatch.setattr(chain, "estimate_gas", pause_meanwhile)
    harness.run_pass()
    payout = harness.payout("pyo_racepause1")
    assert payout.status == "REQUESTED" and "paused" in (payout.reason or "")
    with database.connection_context():
        assert Broadcast.select().count() == 0


def test_a_payout_above_the_approval_threshold_waits_for_approval_recorded_with_who_and_when(
    harness: Harness,
) -> None:
    ok(appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-above", "100"))
    harness.submit("pyo_small00001", 100, destination=dest(5))
    harness.submit("pyo_large00001", 101, destination=dest(5))
    harness.submit("pyo_large00002", 102, destination=dest(5))
    harness.until_status("pyo_small00001", "COMPLETED")
    waiting = harness.detail("pyo_large00001")
    assert waiting["status"] == "REQUESTED" and waiting["broadcast"] is None
    assert "waiting for an administrator's approval" in waiting["reason"]
    refused = appliance(harness, "payout", "approve", "pyo_small00001")
    assert refused.exit_code != 0 and "COMPLETED" in refused.output
    approved = ok(appliance(harness, "payout", "approve", "pyo_large00001", "--by", "carol"))
    assert approved["decision"] == "approved" and approved["decidedBy"] == "carol" and approved["decidedAt"]
    assert approved["signerApproval"] == {"recorded": True, "reason": None}  # in signer.db as well
    rejected = ok(
        appliance(harness, "payout", "reject", "pyo_large00002", "--by", "dave", "--memo", "unknown payee")
    )
    assert rejected["status"] == "FAILED"
    harness.until_status("pyo_large00001", "COMPLETED")
    failed = harness.detail("pyo_large00002")
    assert failed["status"] == "FAILED" and failed["broadcast"] is None
    assert "rejected by the administrator dave" in failed["reason"] and "unknown payee" in failed["reason"]
    again = appliance(harness, "payout", "approve", "pyo_large00002")
    assert again.exit_code != 0
    with database.connection_context():
        decisions = {(a.payout.payout_id, a.decision, a.decided_by) for a in PayoutApproval.select()}
    assert decisions == {("pyo_large00001", "approved", "carol"), ("pyo_large00002", "rejected", "dave")}


def test_the_rolling_24_hour_volume_holds_payouts_until_earlier_ones_leave_the_window(
    harness: Harness,
) -> None:
    clock.freeze(clock.now())
    ok(appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--daily-volume", "250"))
    harness.submit("pyo_volume0001", 100, destination=dest(6))
    harness.submit("pyo_volume0002", 100, destination=dest(6))
    harness.until_status("pyo_volume0002", "COMPLETED")
    harness.submit("pyo_volume0003", 100, destination=dest(6))
    harness.run_pass()
    waiting = harness.detail("pyo_volume0003")
    assert waiting["status"] == "REQUESTED" and waiting["broadcast"] is None
    assert "rolling 24 h volume of ETH on eth_local would be exceeded (200 reserved" in waiting["reason"]
    clock.advance(timedelta(hours=23))
    harness.skip_waits()
    harness.run_pass()
    assert harness.payout("pyo_volume0003").status == "REQUESTED"
    clock.advance(timedelta(hours=1, seconds=1))
    harness.skip_waits()
    harness.until_status("pyo_volume0003", "COMPLETED")


def test_concurrent_submissions_and_workers_reserve_no_more_than_the_24_hour_volume(
    harness: Harness,
) -> None:
    """Twelve payouts submitted at once from six threads, then four workers reserving at once:
    exactly the volume's worth is signed, the rest wait with the reason (SQLite, and PostgreSQL
    under APPLIANCE_TEST_BACKEND=postgres, where the balance row's FOR UPDATE serialises them)."""
    ok(appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--daily-volume", "500"))
    barrier = threading.Barrier(6)
    answers: list[int] = []

    def submit(n: int) -> None:
        barrier.wait()
        for k in range(2):
            response = harness.signer.submit(
                f"pyo_together{n}{k}", amount="100", asset="ETH", destination=dest(7)
            )
            answers.append(response.status_code)

    threads = [threading.Thread(target=submit, args=(n,)) for n in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert answers == [201] * 12
    workers = [
        Pipeline(harness.pipeline.chains, harness.pipeline.custody, lease=timedelta(seconds=30))
        for _ in range(4)
    ]
    start = threading.Barrier(len(workers))

    def work(pipeline: Pipeline) -> None:
        start.wait()
        with database.connection_context():
            for _ in range(3):
                pipeline.run_pass(limit=4)

    threads = [threading.Thread(target=work, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    # One more look at each (a step that failed for another reason is retried later).
    harness.skip_waits()
    harness.run_pass()
    with database.connection_context():
        payouts = list(Payout.select())
        signed = [p for p in payouts if p.status != "REQUESTED"]
        assert Broadcast.select().count() == 5
    assert len(signed) == 5
    assert all("rolling 24 h volume" in (p.reason or "") for p in payouts if p.status == "REQUESTED")


def test_the_operator_ledger_commands_credit_debit_and_show_the_balance_as_json(harness: Harness) -> None:
    credited = ok(
        appliance(
            harness,
            "operator",
            "credit",
            OPERATOR,
            "--asset",
            "USDC",
            "--amount",
            "5000000",
            "--memo",
            "wire 42",
        )
    )
    assert credited["journalId"].startswith("jrn_")
    ok(
        appliance(
            harness,
            "operator",
            "debit",
            OPERATOR,
            "--asset",
            "eth_local:USDC",
            "--amount",
            "1250000",
            "--memo",
            "fee",
        )
    )
    balance = ok(appliance(harness, "operator", "balance", OPERATOR))
    assert balance == {
        "operatorId": OPERATOR,
        "ledgerMode": "unlimited",
        "balances": [
            {
                "assetId": "eth_local:USDC",
                "chainId": "eth_local",
                "assetCode": "USDC",
                "availableMinor": "3750000",
                "inFlightMinor": "0",
                "depositedMinor": "0",
                "paidOutMinor": "0",
                "networkFeesMinor": "0",
                "adjustmentsMinor": "3750000",
            }
        ],
    }
    assert (
        ok(appliance(harness, "operator", "set-ledger-mode", OPERATOR, "prefunded"))["ledgerMode"]
        == "prefunded"
    )
    for bad in (["--amount", "1.5"], ["--amount", "0"], ["--amount", "-3"]):
        result = appliance(harness, "operator", "credit", OPERATOR, "--asset", "USDC", "--memo", "x", *bad)
        assert result.exit_code != 0 and "positive whole number" in result.output
    unknown = appliance(
        harness, "operator", "credit", OPERATOR, "--asset", "DOGE", "--amount", "1", "--memo", "x"
    )
    assert unknown.exit_code != 0 and "not offered" in unknown.output
    missing = appliance(harness, "operator", "balance", "op_nobody0001")
    assert missing.exit_code != 0 and "no operator op_nobody0001" in missing.output


def test_the_openapi_document_lists_the_controls_answers_of_a_payout_submission(harness: Harness) -> None:
    operation = harness.signer.client.get("/openapi.json").json["paths"]["/v1/payouts"]["post"]
    assert {"400", "503"} <= set(operation["responses"])
    description = operation["description"]
    assert "allow-list" in description and "maximum per payout" in description and "paused" in description
    assert "\n    " not in description  # the docstring's indentation is not kept (it would be code)


def test_five_payouts_under_the_approval_threshold_wait_from_the_one_whose_rolling_sum_passes_it(
    harness: Harness,
) -> None:
    """Issue 41, item 12: payouts each just under the per-payout threshold no longer escape
    approval. Submitted through the real signed HTTP API (the reference client, over a socket)."""
    clock.freeze(clock.now())
    controls = ok(
        appliance(
            harness,
            "operator",
            "set-limits",
            OPERATOR,
            "--asset",
            "ETH",
            "--approval-above",
            "100",
            "--approval-rolling",
            "400",
        )
    )
    assert controls["limits"][0]["approvalRollingMinor"] == "400"
    assert controls["limits"][0]["approvalWindowHours"] == 24
    with serving(harness.app) as url:
        client = EngineClient(url, harness.signer.operator_id, harness.signer.secret)
        for n in range(1, 7):  # 99 each: 99, 198, 297, 396, then 495 passes 400
            client.submit_payout(f"pyo_rolling000{n}", "ETH", "99", dest(8))
        for n in range(1, 5):
            harness.until_status(f"pyo_rolling000{n}", "COMPLETED")
        harness.run_pass()
        fifth = client.get_payout("pyo_rolling0005")
    assert fifth["status"] == "REQUESTED" and fifth["broadcast"] is None
    assert fifth["reason"].startswith(
        "waiting for an administrator's approval: the operator's payouts of ETH on eth_local "
        "submitted within 24 h came to 495 minor units with this one, above its rolling approval "
        "threshold of 400"
    )
    assert "came to 594 minor units" in harness.detail("pyo_rolling0006")["reason"]

    ok(appliance(harness, "payout", "approve", "pyo_rolling0005", "--by", "carol"))
    assert ok(appliance(harness, "payout", "reject", "pyo_rolling0006", "--by", "dave"))["status"] == "FAILED"
    harness.until_status("pyo_rolling0005", "COMPLETED")

    described = harness.signer.client.get("/openapi.json").json["paths"]["/v1/payouts"]["post"]
    assert "rolling approval window" in described["description"]

    # A day later the earlier payouts have left the window: the next one goes out unasked.
    clock.advance(timedelta(hours=24, seconds=1))
    harness.submit("pyo_rolling0007", 99, destination=dest(8))
    harness.until_status("pyo_rolling0007", "COMPLETED")


def test_setting_a_rolling_approval_threshold_counts_the_payouts_already_in_its_window(
    harness: Harness,
) -> None:
    for n in range(3):
        harness.submit(f"pyo_earlier000{n}", 150, destination=dest(9))
    ok(appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-rolling", "500"))
    harness.submit("pyo_after00001", 150, destination=dest(9))  # 600 with the three before
    harness.run_pass()
    assert "came to 600 minor units" in harness.detail("pyo_after00001")["reason"]
    removed = appliance(
        harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-rolling", "none"
    )
    assert ok(removed)["limits"][0]["approvalRollingMinor"] is None
    harness.until_status("pyo_after00001", "COMPLETED")  # the threshold as it stands decides
    bad = appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-window", "0")
    assert bad.exit_code != 0 and "--approval-window must be 1 to 744 hours" in bad.output


def test_concurrent_submissions_never_slip_together_under_the_rolling_approval_threshold(
    harness: Harness,
) -> None:
    """Twelve payouts at once from six threads over real sockets (the admissions share group-commit
    batches): the running sums are exactly 100 … 1200, and exactly the seven past 500 wait (SQLite,
    and PostgreSQL under APPLIANCE_TEST_BACKEND=postgres, where the limit row's FOR UPDATE
    serialises them)."""
    ok(appliance(harness, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-rolling", "500"))
    barrier = threading.Barrier(6)
    answers: list[str] = []
    with serving(harness.app) as url:

        def submit(n: int) -> None:
            client = EngineClient(url, harness.signer.operator_id, harness.signer.secret)
            barrier.wait()
            for k in range(2):
                answers.append(client.submit_payout(f"pyo_rollrace{n}{k}", "ETH", "100", dest(10))["outcome"])

        threads = [threading.Thread(target=submit, args=(n,)) for n in range(6)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert answers == ["ACCEPTED"] * 12
    with database.connection_context():
        entered = list(PayoutApprovalWindow.select())
    assert sorted(int(row.window_sum_minor) for row in entered) == [100 * n for n in range(1, 13)]
    assert sum(row.approval_due for row in entered) == 7
    harness.drive(lambda: _signed_count() == 5, seconds=60)
    with database.connection_context():
        waiting = [p for p in Payout.select() if p.status == "REQUESTED"]
    assert len(waiting) == 7 and all("rolling approval threshold of 500" in (p.reason or "") for p in waiting)


def _signed_count() -> int:
    with database.connection_context():
        return Payout.select().where(Payout.status == "COMPLETED").count()
