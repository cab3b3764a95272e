"""Binary smoke, engine half: a payout end to end on the embedded chain inside the executable.

    python .ci/smoke_payout.py BIN DATA_DIR ENGINE_URL OPERATOR_ID SECRET

Reads the payout wallet, funds it with the executable's own `chain faucet` (the running server
holds the miner lease, so the faucet waits for its block), submits a signed payout with the
reference client, and waits for COMPLETED.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time

from appliance.engine.client import EngineClient


def main(binary: str, data_dir: str, url: str, operator_id: str, secret: str) -> int:
    client = EngineClient(url, operator_id, secret)
    wallets = client._json(client.request("GET", "/v1/payout-wallet"))
    wallet = wallets["payoutWallet"][0]["address"]
    faucet = subprocess.run(
        [
            binary,
            "chain",
            "faucet",
            "--data-dir",
            data_dir,
            "--json",
            "--chain-id",
            "eth_local",
            "--asset",
            "ETH",
            "--to",
            wallet,
            "--amount",
            str(10**18),
        ],
        check=True,
        capture_output=True,
        text=True,
        timeout=120,
    )
    print("faucet:", faucet.stdout.strip())
    destination = "0x00000000000000000000000000000000000051e0"
    created = client.submit_payout("pyo_smoke00001", "ETH", "123456789", destination)
    print("submitted:", created["status"])
    deadline = time.monotonic() + 120
    while True:
        payout = client.get_payout("pyo_smoke00001")
        if payout["status"] in ("COMPLETED", "FAILED"):
            break
        if time.monotonic() > deadline:
            print("payout did not complete:", json.dumps(payout))
            return 1
        time.sleep(0.5)
    print("payout:", payout["status"], payout.get("txHash"))
    return 0 if payout["status"] == "COMPLETED" else 1


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:6]))
