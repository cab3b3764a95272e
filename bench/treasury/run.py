"""Treasury benchmark: reconcile and positions over many funded deposit addresses on anvil.

    python bench/treasury/run.py [--addresses 10000]

N deposit addresses are derived from the test mnemonic (as the engine derives them), funded in
bulk on anvil (anvil_setBalance in JSON-RPC batches) and recorded with one CONFIRMED deposit each
(inserted directly: the deposit watcher is not what is measured), the watcher's cursor at the
head. Then, once with Multicall3 installed at its canonical address and once without it (batched
JSON-RPC), it times `reconcile` (every address's ETH and USDC balance at the scanned block and its
nonce) and `treasury` positions, printing the wall time and the HTTP and JSON-RPC requests sent.
A clean run must report no findings: the figures are of a real reconciliation, not of an error.
"""

from __future__ import annotations

import argparse
import json
import secrets
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))

from bip_utils import Bip39SeedGenerator, Bip44, Bip44Changes, Bip44Coins  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common import clock  # noqa: E402
from appliance.common.db import bind_database, write_transaction  # noqa: E402
from appliance.engine.chain.contracts import artifact  # noqa: E402
from appliance.engine.chain.registry import build_chains  # noqa: E402
from appliance.engine.custody_file import load_custody  # noqa: E402
from appliance.engine.db import database  # noqa: E402
from appliance.engine.models import ChainCursor, CustodyAccount, Deposit, DepositAddress, Operator  # noqa: E402
from appliance.engine.treasury import bulk, positions, reconcile  # noqa: E402
from appliance.settings import load_settings  # noqa: E402
from tests.engine.anvil import NETWORK_ID, Anvil, running_anvil  # noqa: E402
from tests.engine.pipeline_harness import ETHER, PAYOUT_WALLET, TEST_MNEMONIC  # noqa: E402
from tests.engine.test_treasury_anvil import MINTER, MULTICALL_RUNTIME  # noqa: E402

CHAIN = "eth_anvil"
OPERATOR = "op_bench00001"


def derive(count: int) -> list[str]:
    """Deposit addresses m/44'/60'/1'/0/i: the engine's derivation, one child step per address."""
    change = (
        Bip44.FromSeed(Bip39SeedGenerator(TEST_MNEMONIC).Generate(), Bip44Coins.ETHEREUM)
        .Purpose()
        .Coin()
        .Account(1)
        .Change(Bip44Changes.CHAIN_EXT)
    )
    return [str(change.AddressIndex(i).PublicKey().ToAddress()) for i in range(count)]


def batch(node: Anvil, calls: list[tuple[str, list[Any]]], size: int = 500) -> None:
    import requests

    for start in range(0, len(calls), size):
        body = [
            {"jsonrpc": "2.0", "id": i, "method": m, "params": p}
            for i, (m, p) in enumerate(calls[start : start + size])
        ]
        answers = requests.post(node.url, json=body, timeout=120).json()
        errors = [a for a in answers if "error" in a]
        if errors:
            raise RuntimeError(errors[0])


def record(addresses: list[str], amounts: list[int], head: int) -> None:
    now = clock.now()
    with write_transaction(database):
        Operator.create(id=OPERATOR)
        CustodyAccount.create(operator=OPERATOR, account=1, next_index=len(addresses))
        DepositAddress.insert_many(
            [
                {
                    "address_id": f"waddr_{i:024d}",
                    "operator": OPERATOR,
                    "chain_id": CHAIN,
                    "account_ref": f"customer-{i}",
                    "address": a,
                    "custody_account": 1,
                    "derivation_index": i,
                    "watch_from": 1,
                    "created_at": now,
                }
                for i, a in enumerate(addresses)
            ]
        ).execute()
        ids = {a: i for a, i in DepositAddress.select(DepositAddress.address, DepositAddress.id).tuples()}
        rows = [
            {
                "transfer_id": f"wtr_{i:024d}",
                "operator": OPERATOR,
                "address": ids[a],
                "chain_id": CHAIN,
                "tx_hash": "0x" + secrets.token_hex(32),
                "output_index": 0,
                "asset_code": "ETH",
                "amount_minor": str(amount),
                "block_height": head,
                "block_hash": "0x" + "00" * 32,
                "status": "CONFIRMED",
                "detected_at": now,
                "confirmed_at": now,
                "updated_at": now,
            }
            for i, (a, amount) in enumerate(zip(addresses, amounts, strict=True))
        ]
        for start in range(0, len(rows), 500):
            Deposit.insert_many(rows[start : start + 500]).execute()
        ChainCursor.create(chain_id=CHAIN, next_block=head + 1, holder=None, lease_until=None, updated_at=now)


class Counting(bulk.BulkReader):
    made: list[Counting] = []

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        Counting.made.append(self)


def measure(label: str, action: Any) -> Any:
    Counting.made.clear()
    began = time.perf_counter()
    result = action()
    seconds = time.perf_counter() - began
    http = sum(r.http_requests for r in Counting.made)
    rpc = sum(r.rpc_requests for r in Counting.made)
    print(f"  {label:<22} {seconds:7.2f} s   {http:5d} HTTP requests   {rpc:6d} JSON-RPC requests")
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--addresses", type=int, default=10_000)
    parser.add_argument("--port", type=int, default=0)
    args = parser.parse_args()
    from tests.conftest import free_port

    began = time.perf_counter()
    addresses = derive(args.addresses)
    print(f"derived {len(addresses)} deposit addresses in {time.perf_counter() - began:.1f} s")
    with running_anvil(args.port or free_port()) as node:
        node.rpc("anvil_impersonateAccount", MINTER)
        node.set_balance(MINTER, 1000 * ETHER)
        token = node.deploy(artifact("usdc")["bytecode"], MINTER)
        node.set_balance(PAYOUT_WALLET, 10 * ETHER)
        amounts = [10**15 + i for i in range(len(addresses))]
        began = time.perf_counter()
        batch(node, [("anvil_setBalance", [a, hex(v)]) for a, v in zip(addresses, amounts, strict=True)])
        node.mine()
        head = int(node.rpc("eth_blockNumber"), 16)
        print(f"funded them on anvil in {time.perf_counter() - began:.1f} s (anvil_setBalance batches)")
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
        data = Path(tempfile.mkdtemp(prefix="bench-treasury-"))
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
        reconcile.BulkReader = Counting  # type: ignore[misc]
        positions.BulkReader = Counting  # type: ignore[misc]
        with database.connection_context():
            record(addresses, amounts, head)
            opened = build_chains(settings)
            custody = load_custody(settings.data_dir, settings.custody_key)
            print(f"{len(addresses)} deposit addresses, ETH and USDC each ({2 * len(addresses)} balances):")
            for mode in ("multicall3", "batched"):
                if mode == "multicall3":
                    node.rpc("anvil_setCode", bulk.MULTICALL3, MULTICALL_RUNTIME)
                else:
                    node.rpc("anvil_setCode", bulk.MULTICALL3, "0x")
                print(f" {mode}:")
                report = measure("reconcile", lambda: reconcile.reconcile(opened, custody))
                if report["findings"]:
                    raise SystemExit(f"a clean deployment reported findings: {report['findings'][:3]}")
                rows = measure("treasury positions", lambda: positions.all_positions(opened, custody))
                assert sum(1 for r in rows if r.role == "deposit") == len(addresses)
            opened.close()


if __name__ == "__main__":
    main()
