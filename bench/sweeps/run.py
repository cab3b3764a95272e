"""Sweeps benchmark: 1,000 confirmed deposits on anvil swept into the payout wallet.

    python bench/sweeps/run.py [--eth 800] [--usdc 200]

Deposit addresses are derived from the test mnemonic (as the engine derives them), funded on anvil
(ETH with anvil_setBalance, USDC minted by the token's owner) and recorded with one CONFIRMED
deposit each (inserted directly: the deposit watcher is not what is measured). Then the sweep job
runs pass after pass (anvil mining a block between passes) until every deposit is swept: ETH
directly, USDC after a gas top-up from the fee wallet. Prints the wall time, sweeps per second,
the transactions sent and the gas they used; then reconciles (it must be clean) and checks that
every deposit address's treasury position equals the chain.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

import requests  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common.db import bind_database, write_transaction  # noqa: E402
from appliance.engine.chain.contracts import artifact  # noqa: E402
from appliance.engine.chain.registry import build_chains  # noqa: E402
from appliance.engine.custody_file import load_custody  # noqa: E402
from appliance.engine.db import database  # noqa: E402
from appliance.engine.models import Broadcast, ChainCursor, Deposit, Sweep  # noqa: E402
from appliance.engine.sweeps.job import Sweeper  # noqa: E402
from appliance.engine.treasury import positions, reconcile  # noqa: E402
from appliance.settings import load_settings  # noqa: E402
from bench.treasury.run import CHAIN, batch, derive, record  # noqa: E402
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil  # noqa: E402
from tests.engine.pipeline_harness import ETHER, FEE_WALLET, PAYOUT_WALLET, TEST_MNEMONIC  # noqa: E402
from tests.engine.test_treasury_anvil import MINTER  # noqa: E402


def answers(node: Anvil, calls: list[tuple[str, list[Any]]], size: int = 500) -> list[Any]:
    out: list[Any] = []
    for start in range(0, len(calls), size):
        body = [
            {"jsonrpc": "2.0", "id": i, "method": m, "params": p}
            for i, (m, p) in enumerate(calls[start : start + size])
        ]
        got = sorted(requests.post(node.url, json=body, timeout=120).json(), key=lambda a: a["id"])
        out += [a.get("result") for a in got]
    return out


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--eth", type=int, default=800, help="deposit addresses holding an ETH deposit")
    parser.add_argument("--usdc", type=int, default=200, help="deposit addresses holding a USDC deposit")
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    from tests.conftest import free_port

    addresses = derive(args.eth + args.usdc)
    eth_addresses, usdc_addresses = addresses[: args.eth], addresses[args.eth :]
    with running_anvil(args.port or free_port()) as node:
        node.rpc("anvil_impersonateAccount", MINTER)
        node.set_balance(MINTER, 1000 * ETHER)
        token = node.deploy(artifact("usdc")["bytecode"], MINTER)
        node.set_balance(FEE_WALLET, 100 * ETHER)
        eth_amounts = [10**16 + i for i in range(len(eth_addresses))]
        usdc_amounts = [1_000_000 + i for i in range(len(usdc_addresses))]
        batch(
            node, [("anvil_setBalance", [a, hex(v)]) for a, v in zip(eth_addresses, eth_amounts, strict=True)]
        )
        node.rpc("evm_setAutomine", False)
        first = int(node.rpc("eth_getTransactionCount", MINTER, "pending"), 16)
        batch(
            node,
            [
                (
                    "eth_sendTransaction",
                    [
                        {
                            "from": MINTER,
                            "nonce": hex(first + i),
                            "to": token,
                            "gas": hex(200_000),
                            "data": "0x40c10f19" + "00" * 12 + a[2:].lower() + f"{v:064x}",
                        }
                    ],
                )
                for i, (a, v) in enumerate(zip(usdc_addresses, usdc_amounts, strict=True))
            ],
        )
        node.mine()
        node.rpc("evm_setAutomine", True)
        head = int(node.rpc("eth_blockNumber"), 16)
        chains = [
            {
                "id": CHAIN,
                "rpc_url": node.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": [
                    {"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2},
                    {"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 2, "contract": token},
                ],
            }
        ]
        data = Path(tempfile.mkdtemp(prefix="bench-sweeps-"))
        settings = load_settings(
            {"data_dir": str(data)},
            environ={
                "APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC,
                "APPLIANCE_LOCAL_CHAIN": "0",
                "APPLIANCE_CHAINS": json.dumps(chains),
            },
        )
        migrate_all(settings, ["engine"])
        bind_database(database, settings.engine_db_url)
        with database.connection_context():
            record(addresses, eth_amounts + usdc_amounts, head)
            with write_transaction(database):  # the last ones are USDC deposits
                for address in usdc_addresses:
                    Deposit.update(asset_code="USDC").where(Deposit.address.in_(_ids([address]))).execute()
            opened = build_chains(settings)
            custody = load_custody(settings.data_dir, settings.custody_key)
            sweeper = Sweeper(opened, custody, batch=1000)
            total = len(addresses)
            print(
                f"{total} confirmed deposits ({len(eth_addresses)} ETH, {len(usdc_addresses)} USDC) on anvil"
            )
            began = time.perf_counter()
            passes = 0
            while Sweep.select().where(Sweep.status == "completed").count() < total:
                passes += 1
                if passes > 200:
                    raise SystemExit("the sweeps did not finish in 200 passes")
                sweeper.sweep_pass()
                node.mine()
            seconds = time.perf_counter() - began
            hashes = [b.mined_tx_hash for b in Broadcast.select() if b.mined_tx_hash]
            receipts = answers(node, [("eth_getTransactionReceipt", [h]) for h in hashes])
            gas = sum(int(r["gasUsed"], 16) for r in receipts)
            fee = sum(int(r["gasUsed"], 16) * int(r["effectiveGasPrice"], 16) for r in receipts)
            topups = Broadcast.select().where(Broadcast.purpose == "sweep_topup").count()
            print(
                f"  swept {total} deposits in {seconds:.1f} s over {passes} passes: {total / seconds:.1f} sweeps/s"
            )
            print(
                f"  {len(hashes)} transactions ({topups} gas top-ups), {gas} gas used "
                f"({gas / total:.0f} per deposit), {fee} wei of fees"
            )
            usdc_in = int(
                answers(
                    node,
                    [
                        (
                            "eth_call",
                            [
                                {"to": token, "data": "0x70a08231" + "00" * 12 + PAYOUT_WALLET[2:].lower()},
                                "latest",
                            ],
                        )
                    ],
                )[0],
                16,
            )
            assert usdc_in == sum(usdc_amounts), (usdc_in, sum(usdc_amounts))
            node.mine(3)
            ChainCursor.update(next_block=int(node.rpc("eth_blockNumber"), 16) + 1).execute()
            began = time.perf_counter()
            report = reconcile.reconcile(opened, custody)
            if report["findings"]:
                raise SystemExit(f"reconcile after the sweeps reported findings: {report['findings'][:3]}")
            rows = positions.all_positions(opened, custody)
            unequal = [r for r in rows if r.role == "deposit" and r.on_chain != r.expected]
            if unequal:
                raise SystemExit(f"positions differ from the chain: {unequal[:3]}")
            print(
                f"  reconcile after the sweeps: clean, every deposit position equals the chain "
                f"({time.perf_counter() - began:.1f} s)"
            )
            opened.close()


def _ids(addresses: list[str]) -> Any:
    from appliance.engine.models import DepositAddress

    return DepositAddress.select(DepositAddress.id).where(DepositAddress.address.in_(addresses))


if __name__ == "__main__":
    main()
