"""The engine administrator's console in Chromium over real HTTP (waitress): sign in with the
password and the authenticator's code, approve a payout waiting for approval, acknowledge an
unknown outflow (a transfer signed with the bare key, outside the engine) and pause an operator;
each act then shows in the console's audit log, whose chain verifies."""

from __future__ import annotations

import json

import pyotp
from click.testing import CliRunner

from appliance.cli import cli
from appliance.engine.db import database
from appliance.engine.treasury.reconcile import reconcile
from tests.conftest import serving
from tests.e2e.console_server import BROWSER_TEST, chromium, screenshot
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC, harness_settings, make_harness

pytestmark = BROWSER_TEST
OPERATOR = "op_alpha0001"
PASSWORD = "correct horse battery staple"
OUTSIDER = "0x000000000000000000000000000000000000dEaD"


def _cli(data_dir: str, *args: str, **env: str) -> dict:
    done = CliRunner().invoke(
        cli, [*args, "--data-dir", data_dir, "--json"], env={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **env}
    )
    assert done.exit_code == 0, done.output
    return json.loads(done.output)


def test_the_administrator_approves_acknowledges_and_pauses_and_sees_each_in_the_audit_log(settings) -> None:
    harness = make_harness(
        harness_settings(settings, {}), lambda app: app.extensions["engine"].chains.get("eth_local").mine()
    )
    runtime = harness.app.extensions["engine"]
    chain = runtime.chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, 10 * ETHER)
    data_dir = str(runtime.settings.data_dir)
    totp = pyotp.TOTP(
        _cli(data_dir, "admin", "set-password", APPLIANCE_ADMIN_PASSWORD=PASSWORD)["totpSecret"]
    )
    _cli(data_dir, "operator", "set-limits", OPERATOR, "--asset", "ETH", "--approval-above", "100")
    harness.submit("pyo_console001", 3 * 10**15)
    harness.run_pass()

    # Someone holding the key pays from the payout wallet directly: an unknown outflow.
    raw, _ = runtime.custody.key.sign_transaction(
        0,
        0,
        {
            "chainId": chain.network_id,
            "nonce": chain.nonce(PAYOUT_WALLET),
            "to": OUTSIDER,
            "value": ETHER,
            "gas": 21_000,
            "maxFeePerGas": 10**10,
            "maxPriorityFeePerGas": 10**9,
            "type": 2,
        },
    )
    chain.send_raw_transaction(raw)
    chain.mine()
    with database.connection_context():
        kinds = [f["kind"] for f in reconcile(runtime.chains, runtime.custody)["findings"]]
    assert "unknown_outflow" in kinds

    with serving(harness.app) as url, chromium() as browser:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(url + "/admin/")
        page.wait_for_selector("body[data-view='signed-out']")
        page.fill("#password", PASSWORD)
        page.fill("#code", totp.now())
        page.click("#sign-in button[type=submit]")
        page.wait_for_selector("body[data-view='console'][data-loaded]")
        assert page.evaluate("document.activeElement.id") == "main"

        page.click("[data-approve='pyo_console001']")
        page.wait_for_selector("#audit tr[data-action='payout.approved']")
        page.click("[data-acknowledge]")
        page.wait_for_selector("#audit tr[data-action='finding.acknowledged']")
        assert "approval above 0.0000000000000001 ETH" in page.inner_text(
            f"#operators tr[data-operator='{OPERATOR}']"
        )
        page.click(f"[data-entries='{OPERATOR}']")
        page.wait_for_selector("#entries-card:not([hidden])")
        assert page.evaluate("document.activeElement.id") == "entries-title"
        page.click(f"[data-pause='{OPERATOR}']")
        page.wait_for_selector(f"#operators tr[data-operator='{OPERATOR}'][data-paused='true']")
        page.wait_for_selector("#audit tr[data-action='operator.paused']")
        assert "verifies" in page.inner_text("#audit-chain")
        actors = page.eval_on_selector_all(
            "#audit tr[data-action]", "rows => rows.map(r => r.children[1].textContent)"
        )
        assert all(actor.startswith("administrator console (session") for actor in actors[:3])

        page.click("#load-treasury")
        page.wait_for_selector("#treasury td:has-text('ETH')")
        page.wait_for_selector("#solvency tr[data-asset='eth_local:ETH']")
        screenshot(page, "admin-console")
        page.click("#sign-out")
        page.wait_for_selector("body[data-view='signed-out']")
