"""eth_local answers standard Ethereum JSON-RPC on a loopback port: web3 (as a wallet or `cast`
would) reads the chain id, heads, balances at the head and at older blocks, nonces, contract
calls and gas estimates, sends a signed transaction, and reads its receipt, its block and its logs."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from eth_account import Account
from web3 import Web3

from appliance.engine.chain.local import FAUCET, NETWORK_ID, TRANSFER_TOPIC, LocalChain
from appliance.engine.chain.local_rpc import bind
from tests.conftest import free_port

ALICE = Account.from_key(b"\x11" * 32)
BOB = "0x000000000000000000000000000000000000b0b0"
ERC20_ABI = [
    {
        "name": "balanceOf",
        "type": "function",
        "stateMutability": "view",
        "inputs": [{"name": "owner", "type": "address"}],
        "outputs": [{"name": "", "type": "uint256"}],
    },
    {
        "name": "transfer",
        "type": "function",
        "stateMutability": "nonpayable",
        "inputs": [{"name": "to", "type": "address"}, {"name": "amount", "type": "uint256"}],
        "outputs": [{"name": "", "type": "bool"}],
    },
]


@pytest.fixture
def chain(tmp_path: Path) -> Iterator[LocalChain]:
    opened = LocalChain(tmp_path / "chain" / "eth_local.db")
    yield opened
    opened.close()


@pytest.fixture
def url(chain: LocalChain) -> Iterator[str]:
    server = bind(chain, free_port())
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_a_wallet_reads_balances_calls_sends_and_finds_the_receipt_block_and_logs(
    chain: LocalChain, url: str
) -> None:
    w3 = Web3(Web3.HTTPProvider(url))
    assert w3.eth.chain_id == NETWORK_ID
    _, funded_at = chain.faucet("ETH", ALICE.address, 10**18)
    chain.faucet("USDC", ALICE.address, 5_000_000)
    assert w3.eth.block_number == chain.head().number
    assert w3.eth.get_balance(ALICE.address) == 10**18
    assert w3.eth.get_balance(ALICE.address, funded_at - 1) == 0  # the state at an older block
    usdc = w3.eth.contract(address=chain.usdc_contract, abi=ERC20_ABI)
    assert usdc.functions.balanceOf(ALICE.address).call() == 5_000_000

    transfer = usdc.functions.transfer(BOB, 1_250_000)
    gas = transfer.estimate_gas({"from": ALICE.address})
    assert 21_000 < gas < 120_000
    nonce = w3.eth.get_transaction_count(ALICE.address)
    assert nonce == 0
    tx = transfer.build_transaction(
        {
            "from": ALICE.address,
            "nonce": nonce,
            "gas": gas,
            "maxFeePerGas": w3.eth.gas_price,
            "maxPriorityFeePerGas": w3.eth.max_priority_fee,
            "chainId": NETWORK_ID,
        }
    )
    tx_hash = w3.eth.send_raw_transaction(ALICE.sign_transaction(tx).raw_transaction)
    assert w3.eth.get_transaction_count(ALICE.address, "pending") == 1
    assert w3.eth.get_transaction_count(ALICE.address) == 0
    block = chain.mine()

    receipt = w3.eth.get_transaction_receipt(tx_hash)
    assert receipt["status"] == 1 and receipt["blockNumber"] == block.number
    assert receipt["from"] == ALICE.address and receipt["to"] == chain.usdc_contract
    assert (
        len(receipt["logs"]) == 1 and int.from_bytes(receipt["logs"][0]["topics"][0], "big") == TRANSFER_TOPIC
    )
    assert usdc.functions.balanceOf(BOB).call() == 1_250_000
    assert w3.eth.get_transaction(tx_hash)["nonce"] == 0

    mined = w3.eth.get_block(block.number, full_transactions=True)
    assert mined["hash"].hex() == block.hash.removeprefix("0x")
    assert [t["hash"] for t in mined["transactions"]] == [tx_hash]
    assert w3.eth.get_block("latest")["number"] == block.number

    logs = w3.eth.get_logs({"fromBlock": 0, "toBlock": "latest", "address": chain.usdc_contract})
    assert [log["transactionHash"] for log in logs][-1] == tx_hash
    assert len(logs) == 2  # the faucet's mint and the transfer
    to_bob = "0x" + bytes(12).hex() + BOB[2:]
    only_bob = w3.eth.get_logs(
        {"fromBlock": 0, "address": chain.usdc_contract, "topics": [None, None, to_bob]}
    )
    assert [log["transactionHash"] for log in only_bob] == [tx_hash]


def test_bad_requests_get_json_rpc_errors_never_a_server_error(chain: LocalChain, url: str) -> None:
    def post(payload):
        return requests.post(url, json=payload, timeout=10)

    unknown = post({"jsonrpc": "2.0", "id": 1, "method": "eth_sign", "params": []}).json()
    assert unknown["error"]["code"] == -32601
    malformed = post(
        {"jsonrpc": "2.0", "id": 2, "method": "eth_getBalance", "params": ["nope", "latest"]}
    ).json()
    assert malformed["error"]["code"] == -32602
    rejected = post(
        {"jsonrpc": "2.0", "id": 3, "method": "eth_sendRawTransaction", "params": ["0x1234"]}
    ).json()
    assert rejected["error"]["code"] == -32000 and "invalid transaction" in rejected["error"]["message"]
    parse = requests.post(url, data=b"{not json", timeout=10)
    assert parse.status_code == 200 and parse.json()["error"]["code"] == -32700
    batch = post(
        [
            {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId"},
            {"jsonrpc": "2.0", "method": "eth_blockNumber"},  # a notification: no answer
            {"jsonrpc": "2.0", "id": 3, "method": "net_version", "params": []},
        ]
    ).json()
    assert batch == [
        {"jsonrpc": "2.0", "id": 1, "result": hex(NETWORK_ID)},
        {"jsonrpc": "2.0", "id": 3, "result": str(NETWORK_ID)},
    ]
    assert requests.get(url, timeout=10).status_code == 405
    above = post({"jsonrpc": "2.0", "id": 4, "method": "eth_getBlockByNumber", "params": ["0xffffff", False]})
    assert above.json()["result"] is None
    faucet_nonce = post(
        {"jsonrpc": "2.0", "id": 5, "method": "eth_getTransactionCount", "params": [FAUCET.address, "latest"]}
    )
    assert faucet_nonce.json()["result"] == "0x1"  # the USDC deployment at genesis


def test_of_two_serving_processes_one_answers_and_the_other_takes_over_when_it_stops(
    chain: LocalChain, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from appliance.engine.chain import local_rpc

    monkeypatch.setattr(local_rpc, "RETRY_BIND_SECONDS", 0.1)
    port = free_port()
    first, second = threading.Event(), threading.Event()
    workers = [
        threading.Thread(target=local_rpc.run_local_rpc, args=(chain, port, stop), daemon=True)
        for stop in (first, second)
    ]

    def answers() -> bool:
        try:
            body = {"jsonrpc": "2.0", "id": 1, "method": "eth_chainId", "params": []}
            return requests.post(f"http://127.0.0.1:{port}", json=body, timeout=2).json()["result"] == "0x539"
        except requests.RequestException:
            return False

    def eventually(condition) -> None:
        deadline = time.monotonic() + 30
        while not condition():
            assert time.monotonic() < deadline, "the local JSON-RPC port did not answer"
            time.sleep(0.05)

    try:
        workers[0].start()
        eventually(answers)
        workers[1].start()  # finds the port taken and keeps trying
        first.set()
        workers[0].join(timeout=10)
        assert not workers[0].is_alive()
        eventually(answers)  # answered by the second worker now
    finally:
        first.set()
        second.set()
        for worker in workers:
            worker.join(timeout=10)


def test_serve_runs_the_listener_only_when_the_port_is_set(settings) -> None:
    from appliance.engine.app import create_app

    def workers(app) -> list[str]:
        return [name for name, _ in app.extensions["engine"].workers]

    assert "local-rpc" not in workers(create_app(settings))
    assert "local-rpc" in workers(create_app(settings.replace(local_rpc_port=free_port())))
