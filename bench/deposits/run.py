"""Deposit and webhook benchmark on the embedded chain.

    python bench/deposits/run.py [--addresses 1000] [--deposits 200] [--webhooks 2000]

1. Detection: N watched deposit addresses; the workers of `appliance serve` run (miner, deposit
   watcher, webhook sender) with an HTTPS receiver on loopback (a test CA); deposits are made one
   after another to random watched addresses. Prints p50/p99 of mined → CONFIRMED and mined →
   webhook received, at the default 2 confirmations and 1-second blocks (the floor is therefore
   about one block interval).
2. Deliveries: W queued deposit.confirmed events delivered to the local HTTPS receiver by the
   engine's sender, then W queued order webhooks by the dispatch service's sender, each run by the
   worker loop `appliance serve` runs (common/jobs.run_worker); prints deliveries per second and
   the TLS connections the receiver accepted. The receiver shares this process (and its GIL).
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
from appliance.common import clock  # noqa: E402
from appliance.common.db import write_transaction  # noqa: E402
from appliance.common.jobs import run_worker  # noqa: E402
from appliance.common.webhook_pool import DeliveryPool  # noqa: E402
from appliance.engine.app import create_app  # noqa: E402
from appliance.engine.db import database  # noqa: E402
from appliance.engine.models import Deposit  # noqa: E402
from appliance.engine.webhooks.events import DEPOSIT_CONFIRMED, emit  # noqa: E402
from appliance.engine.webhooks.sender import WebhookSender  # noqa: E402
from appliance.settings import Settings, load_settings  # noqa: E402
from tests.dispatch.factory import make_company  # noqa: E402
from tests.engine.helpers import Signer, make_operator  # noqa: E402
from tests.engine.pipeline_harness import TEST_MNEMONIC  # noqa: E402
from tests.engine.tls_receiver import Receiver, tls_receiver  # noqa: E402


def deliveries_per_second(what: str, sender: DeliveryPool, count: int, receiver: Receiver) -> None:
    """Run the sender's worker loop (as `appliance serve` does) until nothing is queued."""
    model, db = sender.model, sender.database
    receiver.received.clear()
    connections = receiver.connections
    stop = threading.Event()
    worker = threading.Thread(
        target=run_worker, args=(what, db, stop, sender.run_pass), kwargs={"idle_seconds": 0.5}
    )
    started = time.monotonic()
    worker.start()
    with db.connection_context():
        while model.select().where(model.status == "queued").count():
            time.sleep(0.02)
    elapsed = time.monotonic() - started
    stop.set()
    worker.join()
    sender.wait()
    assert len(receiver.received) >= count, "deliveries missing at the receiver"
    print(
        f"{what} webhook deliveries to one HTTPS receiver: {count} in {elapsed:.1f} s = {count / elapsed:.0f}/s "
        f"({receiver.connections - connections} TLS connections)",
        flush=True,
    )


def dispatch_deliveries(settings: Settings, receiver: Receiver, count: int) -> None:
    from appliance.dispatch.app import create_app as create_dispatch_app
    from appliance.dispatch.db import database as dispatch_database
    from appliance.dispatch.integrations.outbox import ORDER_EVENTS
    from appliance.dispatch.integrations.sender import OrderWebhookSender
    from appliance.dispatch.integrations.service import create_webhook
    from appliance.dispatch.models import WebhookDelivery as OrderDelivery
    from appliance.dispatch.models import WebhookMessage

    runtime = create_dispatch_app(settings).extensions["dispatch"]
    with dispatch_database.connection_context():
        company = make_company("Bench shop")
        endpoint = create_webhook(
            runtime.master_key, True, company.id, receiver.url.replace("engine", "orders"), list(ORDER_EVENTS)
        )
        with write_transaction(dispatch_database):
            for n in range(count):  # as the outbox writes them (integrations/outbox.py)
                message = WebhookMessage.create(
                    message_id=f"msg_bench{n:08d}",
                    company=company.id,
                    event_type="order.created",
                    payload=json.dumps({"type": "order.created", "data": {"n": n}}),
                    created_at=clock.now(),
                )
                OrderDelivery.create(
                    message=message.id, endpoint=int(endpoint["id"]), next_attempt_at=clock.now()
                )
    sender = OrderWebhookSender(runtime.master_key, ca_file=str(receiver.ca_file), allow_private=True)
    deliveries_per_second("dispatch", sender, count, receiver)


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
        with database.connection_context(), write_transaction(database):
            for n in range(args.webhooks):
                emit(op["operatorId"], DEPOSIT_CONFIRMED, {"n": n})
        sender = WebhookSender(
            app.extensions["engine"].master_key, ca_file=str(receiver.ca_file), allow_private=True
        )
        deliveries_per_second("engine", sender, args.webhooks, receiver)
        dispatch_deliveries(settings, receiver, args.webhooks)


if __name__ == "__main__":
    main()
