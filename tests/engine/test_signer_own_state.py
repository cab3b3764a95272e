"""Issue 43: the signer's own state (signer.db), against a real signer process on its socket and a
real anvil node. Payout and deposit-address rows are written straight into the engine database,
as a compromised serving process could: the signer's own limits, allow-list, operator keys, fee
ceilings, derived addresses and journal decide, not those rows."""

from __future__ import annotations

import dataclasses
import itertools
import sqlite3
from collections.abc import Iterator
from typing import Any

import pytest
from eth_utils import to_checksum_address

from appliance.common.db import connection
from appliance.engine import instructions
from appliance.engine.custody import Custody
from appliance.engine.db import database
from appliance.engine.instructions import Instruction, SignedInstruction
from appliance.engine.models import DepositAddress, Payout
from appliance.engine.signer import admin
from appliance.engine.signer.client import SignerClient
from appliance.engine.signer.core import SignerRefused
from appliance.engine.signer.store import db_path
from appliance.engine.signer.supervisor import SignerSupervisor
from appliance.settings import Settings
from tests.conftest import BACKEND, free_port
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil
from tests.engine.helpers import make_operator
from tests.engine.pipeline_harness import ETHER, FEE_WALLET, PAYOUT_WALLET, TEST_MNEMONIC, harness_settings
from tests.engine.test_payout_anvil_fencing import environ

OPERATOR = "op_alpha0001"
PAYEE = to_checksum_address("0x" + "d1" * 20)
ATTACKER = to_checksum_address("0x" + "a7" * 20)
GWEI = 10**9
OPERATOR_KEY = "4c" * 32  # the operator's Ed25519 private key (the test plays the operator)
_rows = itertools.count(1)


@dataclasses.dataclass
class Served:
    settings: Settings
    client: SignerClient
    node: Anvil

    def payout_row(self, amount: int, destination: str = PAYEE, payout_id: str | None = None) -> Payout:
        """A payout row written straight into the engine database (no API, no controls)."""
        number = next(_rows)
        with connection(database):
            return Payout.create(
                operator=OPERATOR,
                payout_id=payout_id or f"pyo_forged{number:04d}",
                idempotency_key=f"forged-{number}",
                instruction_hash="0" * 64,
                asset="ETH",
                chain_id="eth_anvil",
                amount_minor=str(amount),
                destination=destination,
                status="REQUESTED",
            )

    def sign(self, account: int, index: int, tx: dict[str, Any], **kw: Any) -> tuple[bytes, str]:
        return self.client.sign_transaction(account, index, tx, **kw)

    def admin(self, command: str, **args: Any) -> dict[str, Any]:
        return admin.run(self.settings, command, **args)


def tx(to: str, value: int, nonce: int = 0, **fees: int) -> dict[str, Any]:
    return {
        "type": 2,
        "chainId": NETWORK_ID,
        "nonce": nonce,
        "to": to_checksum_address(to),
        "value": value,
        "data": b"",
        "gas": fees.get("gas", 21_000),
        "maxFeePerGas": fees.get("max_fee", 3 * GWEI),
        "maxPriorityFeePerGas": fees.get("tip", GWEI),
    }


def signed_instruction(row: Payout, **changes: str) -> SignedInstruction:
    said = Instruction(row.payout_id, "ETH", str(row.amount_minor), row.destination, "eth_anvil")
    signature = instructions.sign(OPERATOR_KEY, said.canonical())
    return SignedInstruction(dataclasses.replace(said, **changes), signature)


@pytest.fixture
def served(settings: Settings) -> Iterator[Served]:
    from appliance.engine.app import create_app

    with running_anvil(free_port()) as node:
        configured = harness_settings(settings, environ(node))
        supervisor = SignerSupervisor(configured)
        supervisor.start()
        client = SignerClient(supervisor.path)
        try:
            app = create_app(configured, custody_source=lambda: client)
            make_operator(app, OPERATOR)
            node.set_balance(PAYOUT_WALLET, 10 * ETHER)
            node.set_balance(FEE_WALLET, 10 * ETHER)
            yield Served(configured, client, node)
        finally:
            supervisor.stop()


def test_a_payout_row_written_into_the_database_beyond_the_signers_limits_or_allow_list_is_refused(
    served: Served,
) -> None:
    limit = {"operator": "*", "chainId": "eth_anvil", "asset": "ETH"}
    served.admin("set", name="max_payout_minor", value=str(ETHER // 10), **limit)
    served.admin("set", name="daily_volume_minor", value=str(ETHER // 4), **limit)
    with pytest.raises(SignerRefused, match="above the signer's maximum per payout"):
        served.sign(0, 0, tx(PAYEE, 4 * ETHER), payout_id=served.payout_row(4 * ETHER).id)
    served.admin("allow", operator=OPERATOR, address=PAYEE)
    with pytest.raises(SignerRefused, match="not on the signer's allow-list"):
        served.sign(0, 0, tx(ATTACKER, ETHER // 10), payout_id=served.payout_row(ETHER // 10, ATTACKER).id)
    for nonce in (0, 1):  # within every limit: signed, and paid on the chain
        raw, _hash = served.sign(
            0, 0, tx(PAYEE, ETHER // 10, nonce), payout_id=served.payout_row(ETHER // 10).id
        )
        served.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    served.node.mine()
    assert served.node.balance(PAYEE) == 2 * ETHER // 10
    with pytest.raises(SignerRefused, match="rolling limit"):  # 0.3 ETH within 24 h > 0.25
        served.sign(0, 0, tx(PAYEE, ETHER // 10, 2), payout_id=served.payout_row(ETHER // 10).id)
    served.admin("pause", operator=OPERATOR)
    with pytest.raises(SignerRefused, match="paused in the signer"):
        served.sign(0, 0, tx(PAYEE, 1, 2), payout_id=served.payout_row(1).id)


def test_an_operator_with_a_signing_key_gets_a_payout_signed_only_with_its_valid_instruction(
    served: Served,
) -> None:
    admin.set_signing_key(served.settings, OPERATOR, instructions.public_key_of(OPERATOR_KEY))
    row = served.payout_row(ETHER)
    payment = tx(PAYEE, ETHER)
    with pytest.raises(SignerRefused, match="no instruction signature came"):
        served.sign(0, 0, payment, payout_id=row.id)
    altered = dataclasses.replace(
        signed_instruction(row), instruction=signed_instruction(row, destination=ATTACKER).instruction
    )
    with pytest.raises(SignerRefused, match="not operator op_alpha0001's"):
        served.sign(0, 0, payment, payout_id=row.id, instruction=altered)
    # The operator signed this payout; a row and transaction paying someone else is still refused.
    forged = served.payout_row(ETHER, ATTACKER, payout_id=row.payout_id + "x")
    with pytest.raises(SignerRefused, match="names another payout"):
        served.sign(0, 0, tx(ATTACKER, ETHER), payout_id=forged.id, instruction=signed_instruction(row))
    raw, _hash = served.sign(0, 0, payment, payout_id=row.id, instruction=signed_instruction(row))
    served.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    served.node.mine()
    assert served.node.balance(PAYEE) == ETHER
    shown = served.admin("show")
    assert shown["journal"]["ok"] and shown["journal"]["entries"] == 1


def test_a_payout_above_the_signers_approval_threshold_waits_for_an_approval_recorded_in_the_signer(
    served: Served,
) -> None:
    limit = {"operator": OPERATOR, "chainId": "eth_anvil", "asset": "ETH"}
    served.admin("set", name="approval_threshold_minor", value=str(ETHER // 2), **limit)
    row = served.payout_row(ETHER)
    with pytest.raises(SignerRefused, match="above the signer's approval threshold"):
        served.sign(0, 0, tx(PAYEE, ETHER), payout_id=row.id)
    served.admin("approve", operator=OPERATOR, payoutId=row.payout_id, by="root")
    served.sign(0, 0, tx(PAYEE, ETHER), payout_id=row.id)
    served.admin("set", name="require_instruction_signatures", value="true")  # tighter: at once
    with pytest.raises(SignerRefused, match="has no signing key and the signer requires"):
        served.sign(0, 0, tx(PAYEE, 1, nonce=1), payout_id=served.payout_row(1).id)
    assert served.admin("show")["approvals"][0]["by"] == "root"


def test_a_forged_deposit_address_row_gets_no_gas_and_a_top_up_goes_only_to_the_derived_address(
    served: Served,
) -> None:
    with connection(database):
        DepositAddress.create(
            address_id="dep_forged0001",
            operator=OPERATOR,
            chain_id="eth_anvil",
            account_ref="forged",
            address=ATTACKER,
            custody_account=1,
            derivation_index=0,
            watch_from=0,
        )
    with pytest.raises(SignerRefused, match="derives at the named"):
        served.sign(0, 1, tx(ATTACKER, ETHER // 100))
    with pytest.raises(SignerRefused, match="derives at the named"):
        served.sign(0, 1, tx(ATTACKER, ETHER // 100), recipient=(1, 0))
    derived = Custody(TEST_MNEMONIC).address(1, 0)
    raw, _hash = served.sign(0, 1, tx(derived, ETHER // 100), recipient=(1, 0))
    served.node.rpc("eth_sendRawTransaction", "0x" + raw.hex())
    served.node.mine()
    assert served.node.balance(derived) == ETHER // 100 and served.node.balance(ATTACKER) == 0


def test_fees_above_the_signers_ceilings_are_refused_through_the_socket(served: Served) -> None:
    row = served.payout_row(ETHER)
    whole = 10 * ETHER // 21_000  # a priority fee that hands the payout wallet's balance to the producer
    with pytest.raises(SignerRefused, match=r"maxFeePerGas .* above the signer's ceiling"):
        served.sign(0, 0, tx(PAYEE, ETHER, max_fee=whole, tip=whole), payout_id=row.id)
    with pytest.raises(SignerRefused, match=r"maxPriorityFeePerGas .* above the signer's ceiling"):
        served.sign(0, 0, tx(PAYEE, ETHER, max_fee=1_900 * GWEI, tip=1_100 * GWEI), payout_id=row.id)
    with pytest.raises(SignerRefused, match="gas limit of 5000000 is above"):
        served.sign(0, 0, tx(PAYEE, ETHER, gas=5_000_000), payout_id=row.id)
    sweep = tx(PAYOUT_WALLET, ETHER // 2, max_fee=whole, tip=whole)
    with pytest.raises(SignerRefused, match="above the signer's ceiling"):
        served.sign(1, 0, sweep)
    served.admin("set", name="max_fee_per_gas_wei", value=str(2 * GWEI), networkId=NETWORK_ID)  # tighter: now
    with pytest.raises(SignerRefused, match="maxFeePerGas 3000000000 is above"):
        served.sign(0, 0, tx(PAYEE, ETHER), payout_id=row.id)


def test_the_journal_signs_one_payload_per_nonce_but_a_fee_bump_or_a_cancellation(served: Served) -> None:
    first, second = served.payout_row(ETHER), served.payout_row(2 * ETHER)
    served.sign(0, 0, tx(PAYEE, ETHER), payout_id=first.id)
    with pytest.raises(SignerRefused, match="signed for another transaction"):
        served.sign(0, 0, tx(PAYEE, 2 * ETHER), payout_id=second.id)
    with pytest.raises(SignerRefused, match="never twice"):
        served.sign(0, 0, tx(PAYEE, ETHER, nonce=1), payout_id=first.id)
    with pytest.raises(SignerRefused, match="higher fees"):
        served.sign(0, 0, tx(PAYEE, ETHER, max_fee=2 * GWEI), payout_id=first.id)
    _bumped, _hash = served.sign(0, 0, tx(PAYEE, ETHER, max_fee=4 * GWEI, tip=2 * GWEI), payout_id=first.id)
    cancel, _hash = served.sign(0, 0, tx(PAYOUT_WALLET, 0, max_fee=5 * GWEI, tip=3 * GWEI))
    with pytest.raises(SignerRefused, match="a cancellation only at a nonce the signer signed"):
        served.sign(0, 0, tx(PAYOUT_WALLET, 0, nonce=7))
    served.node.rpc("eth_sendRawTransaction", "0x" + cancel.hex())
    served.node.mine()
    assert served.node.balance(PAYEE) == 0
    verdict = served.admin("journal-verify")
    assert verdict["ok"] and verdict["entries"] == 3


def test_the_journals_hash_chain_verifies_and_a_hand_edited_entry_fails(served: Served) -> None:
    for nonce in range(3):
        served.sign(0, 0, tx(PAYEE, 1_000 + nonce, nonce), payout_id=served.payout_row(1_000 + nonce).id)
    assert served.admin("journal-verify")["ok"] is True
    edit = sqlite3.connect(db_path(served.settings.data_dir))
    with pytest.raises(sqlite3.IntegrityError, match="append-only"):
        edit.execute("UPDATE journal SET entry = replace(entry, '1001', '9001') WHERE seq = 2")
    edit.execute("DROP TRIGGER journal_no_update")  # what a hand at the file could do
    edit.execute("UPDATE journal SET entry = replace(entry, '\"1001\"', '\"9001\"') WHERE seq = 2")
    edit.commit()
    edit.close()
    verdict = served.admin("journal-verify")
    assert verdict == {**verdict, "ok": False, "problem": "entry 3 does not follow entry 2: edited"}


def test_a_loosening_waits_for_the_delay_while_a_tightening_applies_at_once(served: Served) -> None:
    limit = {"operator": OPERATOR, "chainId": "eth_anvil", "asset": "ETH"}
    now = served.admin("set", name="max_payout_minor", value=str(ETHER), **limit)
    assert now["delayed"] is False  # from no limit to one: tighter
    later = served.admin("set", name="max_payout_minor", value=str(5 * ETHER), **limit)
    assert later["delayed"] is True
    with pytest.raises(SignerRefused, match="maximum per payout of 1000000000000000000"):
        served.sign(0, 0, tx(PAYEE, 2 * ETHER), payout_id=served.payout_row(2 * ETHER).id)
    assert served.admin("resume", operator=OPERATOR)["delayed"] is False  # nothing was paused
    assert served.admin("pause", operator=OPERATOR)["delayed"] is False
    assert served.admin("resume", operator=OPERATOR)["delayed"] is True
    assert served.admin("set", name="change_delay_seconds", value="60")["delayed"] is True
    assert served.admin("allow", operator=OPERATOR, address=PAYEE)["delayed"] is False  # first entry
    assert served.admin("allow", operator=OPERATOR, address=ATTACKER)["delayed"] is True
    assert served.admin("disallow", operator=OPERATOR, address=PAYEE)["delayed"] is True  # list emptied
    shown = served.admin("show")
    assert len(shown["pending"]) == 5
    assert {(p["name"], p["value"]) for p in shown["pending"]} >= {("max_payout_minor", str(5 * ETHER))}


def test_an_administrator_command_with_a_wrong_token_is_forbidden(served: Served) -> None:
    answer = served.client.call({"op": "admin", "token": "x" * 43, "command": "show", "args": {}})
    assert answer == {
        "ok": False,
        "error": "forbidden",
        "reason": "the administrator token is not the signer's",
    }


def test_a_pending_loosening_takes_effect_once_its_delay_has_passed(tmp_path) -> None:
    from datetime import timedelta

    from appliance.common import clock
    from appliance.engine.signer import own_policy
    from appliance.engine.signer.store import open_store

    store = open_store(tmp_path)
    subject = f"{OPERATOR}/eth_anvil/ETH"
    try:
        with store.write_transaction() as db:
            own_policy.set_value(db, "max_payout_minor", subject, "5")
            assert own_policy.set_value(db, "max_payout_minor", subject, "9").delayed
        clock.advance(timedelta(hours=23))
        with store.write_transaction() as db:
            own_policy.apply_due(db)
            assert own_policy.limit(db, "max_payout_minor", OPERATOR, "eth_anvil", "ETH") == 5
        clock.advance(timedelta(hours=2))
        with store.write_transaction() as db:
            own_policy.apply_due(db)
            assert own_policy.limit(db, "max_payout_minor", OPERATOR, "eth_anvil", "ETH") == 9
    finally:
        clock.reset()
        store.close()


@pytest.mark.skipif(
    BACKEND != "sqlite", reason="restores a SQLite data directory (signer.db is SQLite anywhere)"
)
def test_a_backup_carries_the_signers_policy_and_journal_but_never_its_administrator_token(
    served: Served, tmp_path
) -> None:
    """A restore that started the signer on its default policy would loosen every limit at once,
    with no delay in front of it (appliance/backup.py keeps signer.db beside the engine's copy)."""
    from appliance.backup import Unlock, create_backup, restore_backup
    from appliance.common.sealing import Sealer
    from appliance.engine.signer import journal
    from appliance.settings import load_settings

    limit = {"operator": OPERATOR, "chainId": "eth_anvil", "asset": "ETH"}
    served.admin("set", name="max_payout_minor", value=str(ETHER), **limit)
    served.sign(0, 0, tx(PAYEE, 1_000), payout_id=served.payout_row(1_000).id)
    manifest = create_backup(
        served.settings, tmp_path / "backup", sealer=Sealer.with_passphrase("pass phrase")
    )
    assert "signer.db" in {entry["path"] for entry in manifest["files"]}
    assert not any("token" in entry["path"] for entry in manifest["files"])
    target = tmp_path / "restored"
    restore_backup(
        tmp_path / "backup",
        target,
        lambda where: load_settings({"data_dir": str(where)}, environ={}),
        unlock=Unlock(passphrase=lambda: "pass phrase"),
    )
    with sqlite3.connect(db_path(target)) as restored:
        assert journal.verify(restored).ok
        assert restored.execute("SELECT count(*) FROM journal").fetchone()[0] >= 1
    policy = sqlite3.connect(db_path(target))
    assert str(ETHER) in repr(policy.execute("SELECT * FROM policy").fetchall())
    policy.close()
