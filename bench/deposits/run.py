"""Deposit and webhook benchmark on the embedded chain.

    python bench/deposits/run.py [--addresses 1000] [--deposits 200] [--webhooks 2000]

1. Detection: N watched deposit addresses; the workers of `appliance serve` run (miner, deposit
   watcher, webhook sender) with an HTTPS receiver on loopback (a test CA); deposits are made one
   after another to random watched addresses. Prints p50/p99 of mined → CONFIRMED and mined →
   webhook received, at the default 2 confirmations and 1-second blocks (the floor is therefore
   about one block interval).
2. Deliveries: W queued deposit.confirmed events delivered by the sender to the local receiver;
   prints deliveries per second.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import threading
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from support import percentile  # noqa: E402

from appliance.cli.admin import migrate_all  # noqa: E402
from appliance.common.db import write_transaction  # noqa: E402
from appliance.engine.app import create_app  # noqa: E402
from appliance.engine.db import database  # noqa: E402
from appliance.engine.models import Deposit, WebhookDelivery  # noqa: E402
from appliance.engine.webhooks.events import DEPOSIT_CONFIRMED, emit  # noqa: E402
from appliance.engine.webhooks.sender import WebhookSender  # noqa: E402
from appliance.settings import load_settings  # noqa: E402
from tests.engine.helpers import Signer, make_operator  # noqa: E402
from tests.engine.pipeline_harness import TEST_MNEMONIC  # noqa: E402
from tests.engine.tls_receiver import tls_receiver  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--addresses", type=int, default=1000)
    parser.add_argument("--deposits", type=int, default=200)
    parser.add_argument("--webhooks", type=int, default=2000)
    args = parser.parse_args()
    data = Path(tempfile.mkdtemp(prefix="bench-deposits-"))
    with tls_receiver(data) as receiver:
        settings = load_settings(
            {"data_dir": str(data)},
            environ={
                "APPLIANCE_CUSTODY_KEY": TEST_MNEMONIC,
                "APPLIANCE_WEBHOOK_ALLOW_PRIVATE": "1",
                "APPLIANCE_WEBHOOK_CA_FILE": str(receiver.ca_file),
            },
        )
        migrate_all(settings)
        app = create_app(settings)
        op = make_operator(app)
        signer = Signer(app.test_client(), op["operatorId"], op["secret"])
        assert (
            signer.request("POST", "/v1/webhooks/subscriptions", {"endpointUrl": receiver.url}).status_code
            == 201
        )
        addresses = []
        started = time.monotonic()
        for n in range(args.addresses):
            body = signer.request(
                "POST", "/v1/deposit-addresses", {"accountRef": f"c{n}", "chainId": "eth_local"}
            )
            addresses.append(body.json["address"])
        print(f"{args.addresses} deposit addresses in {time.monotonic() - started:.1f} s", flush=True)
        chain = app.extensions["engine"].chains.get("eth_local")
        stop = threading.Event()
        threads = [
            threading.Thread(target=fn, args=(stop,), daemon=True)
            for _, fn in app.extensions["engine"].workers
        ]
        for thread in threads:
            thread.start()
        mined_at: dict[str, float] = {}
        for n in range(args.deposits):
            tx_hash, _ = chain.faucet("ETH" if n % 2 else "USDC", random.choice(addresses), 1000 + n)
            mined_at[tx_hash] = time.time()
            time.sleep(random.uniform(0.05, 0.3))
        deadline = time.monotonic() + 300
        with database.connection_context():
            while Deposit.select().where(Deposit.status == "CONFIRMED").count() < args.deposits:
                assert time.monotonic() < deadline, "deposits did not confirm"
                time.sleep(0.2)
            confirmed = {d.tx_hash: d.confirmed_at.timestamp() for d in Deposit.select()}
        while len(receiver.received) < args.deposits:
            assert time.monotonic() < deadline, "webhooks did not arrive"
            time.sleep(0.2)
        stop.set()
        for thread in threads:
            thread.join(timeout=10)
        received = {}
        for r in receiver.received:
            received[json.loads(r.body)["data"]["txHash"]] = r.at
        to_confirmed = [confirmed[h] - t for h, t in mined_at.items()]
        to_webhook = [received[h] - t for h, t in mined_at.items()]
        print(
            f"detection with {args.addresses} watched addresses, {args.deposits} deposits (ETH and USDC): "
            f"mined→CONFIRMED p50 {percentile(to_confirmed, 0.5):.2f} s p99 {percentile(to_confirmed, 0.99):.2f} s; "
            f"mined→webhook p50 {percentile(to_webhook, 0.5):.2f} s p99 {percentile(to_webhook, 0.99):.2f} s",
            flush=True,
        )

        # Deliveries per second: a backlog of events to the same receiver.
        receiver.received.clear()
        with database.connection_context(), write_transaction(database):
            for n in range(args.webhooks):
                emit(op["operatorId"], DEPOSIT_CONFIRMED, {"n": n})
        sender = WebhookSender(
            app.extensions["engine"].master_key, ca_file=str(receiver.ca_file), allow_private=True
        )
        started = time.monotonic()
        with database.connection_context():
            while WebhookDelivery.select().where(WebhookDelivery.status == "queued").count():
                sender.run_pass()
        elapsed = time.monotonic() - started
        print(
            f"webhook deliveries: {args.webhooks} in {elapsed:.1f} s = {args.webhooks / elapsed:.0f}/s",
            flush=True,
        )


if __name__ == "__main__":
    main()
