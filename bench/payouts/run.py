"""Payout pipeline benchmark: payouts completed per minute and the time from submission to
COMPLETED, on the embedded chain and on anvil (Foundry's node, the peer) in the same run.

    python bench/payouts/run.py [--payouts 1000] [--assets ETH,USDC] [--skip-anvil]

For each chain and asset: a fresh data directory, the engine app with the workers `appliance serve`
runs (the payout worker and, on the embedded chain, the miner), a funded payout wallet, 1-block
confirmations, and N payouts submitted through the signed API while the workers run. Prints
payouts/minute (first submission to last COMPLETED) and p50/p99 of submission → COMPLETED.
Anvil runs with its default automine (a block per transaction), the embedded chain with its
defaults (a block at least every second, sooner when transactions wait).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from support import free_port, percentile  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.engine.app import create_app  # noqa: E402
from appliance.engine.chain.contracts import artifact  # noqa: E402
from appliance.engine.db import database  # noqa: E402
from appliance.engine.models import Payout, PayoutTransition  # noqa: E402
from appliance.settings import load_settings  # noqa: E402
from tests.engine.anvil import NETWORK_ID, running_anvil  # noqa: E402
from tests.engine.helpers import Signer, make_operator  # noqa: E402
from tests.engine.pipeline_harness import FEE_WALLET, PAYOUT_WALLET, TEST_MNEMONIC  # noqa: E402

ETHER = 10**18


def run_case(label: str, environ: dict[str, str], fund, asset: str, payouts: int) -> dict[str, float | str]:
    data = Path(tempfile.mkdtemp(prefix="bench-payouts-"))
    try:
        settings = load_settings(
            {"data_dir": str(data)}, environ={"APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC, **environ}
        )
        migrate_all(settings)
        app = create_app(settings)
        app.testing = True
        fund(app)
        op = make_operator(app)
        signer = Signer(app.test_client(), op["operatorId"], op["secret"])
        stop = threading.Event()
        threads = [
            threading.Thread(target=fn, args=(stop,), daemon=True)
            for _, fn in app.extensions["engine"].workers
        ]
        for thread in threads:
            thread.start()
        started = time.monotonic()
        for n in range(payouts):
            response = signer.submit(
                f"pyo_bench{n:07d}", amount=str(1000 + n), asset=asset, destination=f"0x{0xB0000 + n:040x}"
            )
            assert response.status_code == 201, response.json
        submitted = time.monotonic() - started
        deadline = time.monotonic() + 1800
        with database.connection_context():
            while Payout.select().where(Payout.status != "COMPLETED").count():
                failed = Payout.select().where(Payout.status == "FAILED").count()
                if failed or time.monotonic() > deadline:
                    raise SystemExit(f"{label}: {failed} failed or timed out")
                time.sleep(0.2)
            elapsed = time.monotonic() - started
            rows = (
                PayoutTransition.select(Payout.created_at, PayoutTransition.occurred_at)
                .join(Payout)
                .where(PayoutTransition.to_status == "COMPLETED")
                .tuples()
            )
            latencies = [(done - created).total_seconds() for created, done in rows]
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        app.extensions["engine"].chains.close()
        return {
            "case": label,
            "payouts": payouts,
            "submitSeconds": round(submitted, 1),
            "perMinute": round(payouts / elapsed * 60),
            "p50": round(percentile(latencies, 0.5), 2),
            "p99": round(percentile(latencies, 0.99), 2),
        }
    finally:
        shutil.rmtree(data, ignore_errors=True)


def fund_local(app) -> None:
    chain = app.extensions["engine"].chains.get("eth_local")
    chain.faucet("ETH", PAYOUT_WALLET, 10**6 * ETHER)
    chain.faucet("USDC", PAYOUT_WALLET, 10**15)
    chain.faucet("ETH", FEE_WALLET, 10 * ETHER)


def anvil_environ(url: str, usdc: str) -> dict[str, str]:
    chains = [
        {
            "id": "eth_anvil",
            "rpc_url": url,
            "network_id": NETWORK_ID,
            "environment": "test",
            "assets": [
                {"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 1},
                {"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 1, "contract": usdc},
            ],
        }
    ]
    return {"APPLIANCE_LOCAL_CHAIN": "0", "APPLIANCE_CHAINS": json.dumps(chains)}


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--payouts", type=int, default=1000)
    parser.add_argument("--assets", default="ETH,USDC")
    parser.add_argument("--skip-anvil", action="store_true")
    args = parser.parse_args()
    results = []
    for asset in args.assets.split(","):
        results.append(
            run_case(
                f"eth_local {asset}", {"APPLIANCE_LOCAL_CONFIRMATIONS": "1"}, fund_local, asset, args.payouts
            )
        )
        print(json.dumps(results[-1]), flush=True)
        if args.skip_anvil:
            continue
        with running_anvil(free_port()) as node:
            minter = "0x00000000000000000000000000000000000a11ce"
            node.set_balance(minter, ETHER)
            usdc = node.deploy(artifact("usdc")["bytecode"], minter)
            mint = "0x40c10f19" + "00" * 12 + PAYOUT_WALLET[2:].lower() + f"{10**15:064x}"
            node.rpc("eth_sendTransaction", {"from": minter, "to": usdc, "data": mint, "gas": hex(200_000)})
            node.set_balance(PAYOUT_WALLET, 10**6 * ETHER)
            node.set_balance(FEE_WALLET, 10 * ETHER)
            results.append(
                run_case(
                    f"anvil {asset}", anvil_environ(node.url, usdc), lambda app: None, asset, args.payouts
                )
            )
        print(json.dumps(results[-1]), flush=True)
    print()
    print(f"{'case':<16} {'payouts':>8} {'per minute':>11} {'p50 s':>7} {'p99 s':>7}")
    for r in results:
        print(f"{r['case']:<16} {r['payouts']:>8} {r['perMinute']:>11} {r['p50']:>7} {r['p99']:>7}")


if __name__ == "__main__":
    main()
