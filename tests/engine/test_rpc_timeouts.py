"""A node that accepts connections and never answers (a stopped process: the kernel still accepts)
costs one RPC time-out per call, not web3's five retries of it (issue 32: the readiness check of a
stopped anvil took 52 s to fail, every payout and deposit pass as long)."""

from __future__ import annotations

import socket
import threading
import time

import pytest

from appliance.engine.chain.base import ChainError
from appliance.engine.chain.rpc import RpcChain


def test_a_node_that_never_answers_costs_one_request_per_call_then_a_chain_error() -> None:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)
    accepted: list[socket.socket] = []
    done = threading.Event()

    def accept() -> None:
        listener.settimeout(0.1)
        while not done.is_set():
            try:
                accepted.append(listener.accept()[0])  # read nothing, answer nothing
            except TimeoutError:
                continue

    thread = threading.Thread(target=accept)
    thread.start()
    try:
        chain = RpcChain("eth_mute", f"http://127.0.0.1:{listener.getsockname()[1]}", 1, "test", timeout=0.3)
        with pytest.raises(ChainError, match="ReadTimeout"):
            chain.head()
        deadline = time.monotonic() + 30  # the accepting thread may be late on a busy machine
        while not accepted and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        done.set()
        thread.join()
        for connection in accepted:
            connection.close()
        listener.close()
    assert len(accepted) == 1
