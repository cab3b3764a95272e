"""A real anvil node (Foundry, from the npm registry via `make setup`) on a free loopback port."""

from __future__ import annotations

import contextlib
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests

ROOT = Path(__file__).resolve().parents[2]
ANVIL = ROOT / ".tools" / "node_modules" / ".bin" / "anvil"
NETWORK_ID = 31337


class Anvil:
    def __init__(self, url: str, process: subprocess.Popen) -> None:
        self.url = url
        self.process = process
        self._id = 0

    def rpc(self, method: str, *params: Any) -> Any:
        self._id += 1
        answer = requests.post(
            self.url,
            json={"jsonrpc": "2.0", "id": self._id, "method": method, "params": list(params)},
            timeout=10,
        ).json()
        if "error" in answer:
            raise RuntimeError(f"{method}: {answer['error']}")
        return answer["result"]

    def mine(self, blocks: int = 1) -> None:
        self.rpc("anvil_mine", hex(blocks))

    def set_balance(self, address: str, wei: int) -> None:
        self.rpc("anvil_setBalance", address, hex(wei))

    def balance(self, address: str) -> int:
        return int(self.rpc("eth_getBalance", address, "latest"), 16)

    def deploy(self, bytecode: str, sender: str) -> str:
        """Deploy contract creation code from an unlocked dev account; returns the address."""
        self.rpc("anvil_impersonateAccount", sender)
        tx_hash = self.rpc("eth_sendTransaction", {"from": sender, "data": bytecode, "gas": hex(3_000_000)})
        self.mine()
        receipt = self.rpc("eth_getTransactionReceipt", tx_hash)
        return receipt["contractAddress"]


@contextlib.contextmanager
def running_anvil(port: int, *extra: str, chain_id: int = NETWORK_ID) -> Iterator[Anvil]:
    if not ANVIL.exists():
        pytest.skip("anvil is not installed: `make setup` installs it from the npm registry (needs npm)")
    process = subprocess.Popen(
        [str(ANVIL), "--port", str(port), "--chain-id", str(chain_id), "--silent", *extra],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    node = Anvil(f"http://127.0.0.1:{port}", process)
    try:
        deadline = time.monotonic() + 15
        while True:
            try:
                node.rpc("eth_chainId")
                break
            except (requests.RequestException, ValueError):
                if time.monotonic() > deadline or process.poll() is not None:
                    raise RuntimeError("anvil did not start") from None
                time.sleep(0.05)
        yield node
    finally:
        process.terminate()
        try:
            process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            process.kill()
