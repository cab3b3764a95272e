"""The `custody` health check of a serving process, whose key is the signer process's: a plain key
still works, with the warning; a signer that does not answer fails the check; the signer's
socket is owner-only and answers a malformed request with a refusal, not a crash."""

from __future__ import annotations

import socket
import stat

from appliance.common.db import bind_database
from appliance.engine.custody_record import PLAIN_WARNING, custody_probe
from appliance.engine.db import database
from appliance.engine.signer import wire
from appliance.engine.signer.client import SignerClient
from appliance.engine.signer.supervisor import SignerSupervisor
from appliance.settings import Settings
from tests.engine.pipeline_harness import PAYOUT_WALLET, TEST_MNEMONIC


def test_a_plain_key_held_by_the_signer_passes_health_with_a_warning_and_a_silent_signer_fails(
    settings: Settings,
) -> None:
    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    bind_database(database, settings.engine_db_url)
    supervisor = SignerSupervisor(settings)
    supervisor.start()
    client = SignerClient(supervisor.path)
    try:
        assert stat.S_IMODE(supervisor.path.stat().st_mode) == 0o600
        check = custody_probe(client)()
        assert check.status == "pass" and check.data["warning"] == PLAIN_WARNING
        assert check.data["encrypted"] is False
        assert client.payout_address == PAYOUT_WALLET  # derived here from the account's xpub
        with socket.socket(socket.AF_UNIX) as raw, wire.reachable(supervisor.path) as address:
            raw.connect(address)
            wire.send(raw, {"op": "sign", "account": 0, "index": 0, "tx": {"to": 5}})
            answer = wire.receive(raw)
        assert answer == {
            "ok": False,
            "error": "refused",
            "reason": "not a transaction the signer can read ('chainId')",
        }
    finally:
        supervisor.stop()
    stopped = custody_probe(SignerClient(supervisor.path))()
    assert stopped.status == "fail" and "the signer process does not answer" in stopped.detail


def test_deposit_addresses_come_from_public_keys_and_a_new_account_waits_for_a_silent_signer(
    settings: Settings,
) -> None:
    from appliance.engine.app import create_app
    from appliance.engine.custody import SIGNER_SILENT
    from tests.engine.helpers import Signer, make_operator

    (settings.data_dir / "custody.key").write_text(TEST_MNEMONIC + "\n")
    supervisor = SignerSupervisor(settings)
    supervisor.start()
    try:
        app = create_app(settings, custody_source=lambda: SignerClient(supervisor.path))
        app.testing = True
        apis = []
        for operator_id in ("op_alpha0001", "op_bravo0001"):
            made = make_operator(app, operator_id)
            apis.append(Signer(app.test_client(), made["operatorId"], made["secret"]))

        def ask(api: Signer, account_ref: str):
            return api.request(
                "POST", "/v1/deposit-addresses", {"accountRef": account_ref, "chainId": "eth_local"}
            )

        assert ask(apis[0], "c1").status_code == 201
    finally:
        supervisor.stop()
    # The first operator's account key is known here: its next address needs no signer.
    assert ask(apis[0], "c2").status_code == 201
    silent = ask(apis[1], "c1")  # a new custody account: its xpub must be asked of the signer
    assert silent.status_code == 503 and silent.json["detail"] == SIGNER_SILENT
