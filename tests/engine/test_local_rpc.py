"""eth_local answers standard Ethereum JSON-RPC on a loopback port: web3 (as a wallet or `cast`
would) reads the chain id, heads, balances at the head and at older blocks, nonces, contract
calls and gas estimates, sends a signed transaction, and reads its receipt, its block and its logs."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
from eth_account import Account
from web3 import Web3

from appliance.engine.chain.local import (
    FAUCET,
    FAUCET_KEY,
    NETWORK_ID,
    PRIORITY_FEE,
    TRANSFER_TOPIC,
    LocalChain,
    _contract_address,
)
from appliance.engine.chain.local_rpc import RpcLimits, bind
from appliance.settings import DEFAULT_LOCAL_RPC_GAS_CAP
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
    parse = requests.post(url, data=b"{not json", headers={"Content-Type": "application/json"}, timeout=10)
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


# A contract that loops as many times as its calldata's first word says: 40 gas a turn, the
# cheapest opcodes there are, so the most CPU per unit of gas py-evm spends.
BURNER_RUNTIME = bytes.fromhex("6000355b8015601057600190036003565b00")
BURNER_INIT = (
    bytes([0x5F + len(BURNER_RUNTIME)])  # PUSH18 the runtime
    + BURNER_RUNTIME
    + bytes.fromhex("600052")  # MSTORE at 0 (right-aligned in the word)
    + bytes([0x60, len(BURNER_RUNTIME), 0x60, 32 - len(BURNER_RUNTIME), 0xF3])  # RETURN it
)
GAS_PER_TURN = 40


def _faucet_sends(chain: LocalChain, txs: list[dict]) -> list[str]:
    """Faucet-signed transactions through the engine's own path (not the port), then a block."""
    nonce = chain.nonce(FAUCET.address)
    base = chain._view()[0].header.base_fee_per_gas
    hashes = []
    for offset, fields in enumerate(txs):
        raw = chain._faucet_tx(
            nonce + offset, fields.get("to"), fields.get("value", 0), fields.get("data", b""), 300_000, base
        )
        hashes.append(chain.send_raw_transaction(raw))
    chain.mine()
    return hashes


def _deploy_burner(chain: LocalChain) -> str:
    nonce = chain.nonce(FAUCET.address)
    _faucet_sends(chain, [{"data": BURNER_INIT}])
    burner = _contract_address(FAUCET.address, nonce)
    code = chain._view()[0].get_vm().state.get_code(bytes.fromhex(burner[2:]))
    assert code == BURNER_RUNTIME
    return burner


def _rpc(url: str, method: str, *params, headers: dict | None = None) -> dict:
    body = {"jsonrpc": "2.0", "id": 1, "method": method, "params": list(params)}
    return requests.post(url, json=body, headers=headers, timeout=120).json()


def _turns(n: int) -> str:
    return "0x" + n.to_bytes(32, "big").hex()


@pytest.fixture
def small_url(chain: LocalChain) -> Iterator[str]:
    """The port with small caps, so that a test fills them with a few dozen requests."""
    limits = RpcLimits(gas_cap=1_000_000, pool_transactions=20, per_sender=6, nonce_gap=4)
    server = bind(chain, free_port(), limits=limits)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{server.server_port}"
    server.shutdown()
    server.server_close()


def test_an_eth_call_with_the_blocks_30_million_gas_is_refused_and_a_call_runs_with_at_most_the_cap(
    chain: LocalChain, url: str
) -> None:
    burner = _deploy_burner(chain)
    # Enough turns for 6 M gas: runs to the end with 30 M, runs out at the 5 M cap.
    over_the_cap = _turns((DEFAULT_LOCAL_RPC_GAS_CAP + 1_000_000) // GAS_PER_TURN)
    asked = _rpc(url, "eth_call", {"to": burner, "data": over_the_cap, "gas": hex(30_000_000)}, "latest")
    assert asked["error"]["code"] == -32602
    assert (
        "local_rpc_gas_cap" in asked["error"]["message"]
        and str(DEFAULT_LOCAL_RPC_GAS_CAP) in asked["error"]["message"]
    )

    unbounded = _rpc(url, "eth_call", {"to": burner, "data": over_the_cap}, "latest")
    assert unbounded["error"]["code"] == 3 and "out of gas" in unbounded["error"]["message"].lower()

    within = _rpc(url, "eth_call", {"to": burner, "data": _turns(1000), "gas": hex(100_000)}, "latest")
    assert within["result"] == "0x"


def test_a_gas_estimate_searches_only_up_to_the_cap_and_stays_close_to_what_the_call_needs(
    chain: LocalChain, small_url: str
) -> None:
    burner = _deploy_burner(chain)
    # 1.2 M gas of turns: py-evm's estimator found it (searching up to the block's 30 M).
    beyond = _rpc(small_url, "eth_estimateGas", {"to": burner, "data": _turns(30_000)}, "latest")
    assert beyond["error"]["code"] == -32000
    assert beyond["error"]["message"] == "gas required exceeds allowance (1000000)"

    transfer = _rpc(small_url, "eth_estimateGas", {"from": FAUCET.address, "to": BOB, "value": "0x1"})
    assert transfer["result"] == hex(21_000)

    turns = 10_000
    estimate = int(_rpc(small_url, "eth_estimateGas", {"to": burner, "data": _turns(turns)})["result"], 16)
    need = turns * GAS_PER_TURN
    assert need < estimate <= (need + 30_000) * 1.02
    too_little = _rpc(small_url, "eth_call", {"to": burner, "data": _turns(turns), "gas": hex(need)})
    assert "error" in too_little  # the estimate is not more than needed for nothing
    assert (
        _rpc(small_url, "eth_call", {"to": burner, "data": _turns(turns), "gas": hex(estimate)})["result"]
        == "0x"
    )


def _signed(account, nonce: int, base_fee: int, to: str = BOB, *, max_fee: int | None = None) -> str:
    tx = {
        "type": 2,
        "chainId": NETWORK_ID,
        "nonce": nonce,
        "to": to,
        "value": 1,
        "gas": 21_000,
        "maxFeePerGas": 2 * base_fee + PRIORITY_FEE if max_fee is None else max_fee,
        "maxPriorityFeePerGas": PRIORITY_FEE if max_fee is None else max_fee,
    }
    return "0x" + bytes(account.sign_transaction(tx).raw_transaction).hex()


def test_a_flood_of_future_nonce_transactions_is_refused_and_the_pool_stays_bounded(
    chain: LocalChain, small_url: str
) -> None:
    senders = [Account.from_key(bytes([0x20 + i]) * 32) for i in range(5)]
    _faucet_sends(chain, [{"to": s.address, "value": 10**18} for s in senders])
    base = int(chain._view()[0].header.base_fee_per_gas)
    first = senders[0]

    # Nonce 0 never sent: nonces 1..3 wait (within the gap of 4), those beyond are refused.
    future = [_rpc(small_url, "eth_sendRawTransaction", _signed(first, n, base)) for n in range(1, 40)]
    accepted = [n for n, answer in zip(range(1, 40), future, strict=True) if "result" in answer]
    assert accepted == [1, 2, 3]
    refused = future[len(accepted)]["error"]
    assert refused["code"] == -32000 and refused["message"].startswith("nonce too high")

    # The faucet's key is public: anyone signs as it, with runnable nonces. Its share is capped.
    faucet = Account.from_key(FAUCET_KEY)
    start = chain.nonce(FAUCET.address)
    shares = [_rpc(small_url, "eth_sendRawTransaction", _signed(faucet, start + n, base)) for n in range(10)]
    assert sum("result" in a for a in shares) == 6
    assert shares[6]["error"]["message"].startswith("txpool is full: this sender")

    # Others fill what is left of the pool, then are refused; the pool never holds more than its cap.
    answers = [
        _rpc(small_url, "eth_sendRawTransaction", _signed(sender, n, base))
        for sender in senders[1:]
        for n in range(6)
    ]
    assert sum("result" in a for a in answers) == 20 - 3 - 6
    assert any(a.get("error", {}).get("message", "").startswith("txpool is full (") for a in answers)
    assert chain.pending_count() == 20
    underpriced = _rpc(small_url, "eth_sendRawTransaction", _signed(first, 0, base, max_fee=base - 1))
    assert "below the base fee" in underpriced["error"]["message"]

    # The engine's own transactions never wait behind the port's caps; mining drains the pool.
    last = senders[-1]
    next_nonce = int(_rpc(small_url, "eth_getTransactionCount", last.address, "pending")["result"], 16)
    own = chain.send_raw_transaction(bytes.fromhex(_signed(last, next_nonce, base)[2:]))
    chain.mine()
    assert chain.receipt(own) is not None
    assert chain.pending_count() < 20
    assert "result" in _rpc(small_url, "eth_sendRawTransaction", _signed(first, 0, base))


def test_a_cross_origin_or_text_plain_post_is_refused_unread_while_json_calls_work(
    chain: LocalChain, url: str
) -> None:
    port = int(url.rsplit(":", 1)[1])
    base = int(chain._view()[0].header.base_fee_per_gas)
    _faucet_sends(chain, [{"to": ALICE.address, "value": 10**18}])
    pool_before = chain.pending_count()
    send = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "eth_sendRawTransaction",
        "params": [_signed(ALICE, 0, base)],
    }
    # What a web page the administrator has open can send without a preflight: a text/plain POST.
    forged = requests.post(
        url,
        data=json.dumps(send),
        headers={"Content-Type": "text/plain;charset=UTF-8", "Origin": "https://attacker.example"},
        timeout=10,
    )
    assert forged.status_code == 403 and "origin" in forged.text
    for content_type in (
        "text/plain",
        "application/x-www-form-urlencoded",
        "multipart/form-data; boundary=x",
        None,
    ):
        headers = {"Content-Type": content_type} if content_type else {}
        answer = requests.post(url, data=json.dumps(send), headers=headers, timeout=10)
        assert answer.status_code == 415 and "application/json" in answer.text
    as_json = requests.post(url, json=send, headers={"Origin": "http://evil.localhost:1"}, timeout=10)
    assert as_json.status_code == 403
    assert chain.pending_count() == pool_before  # nothing of them was read

    chain_id = {"jsonrpc": "2.0", "id": 2, "method": "eth_chainId", "params": []}
    for origin in (None, f"http://127.0.0.1:{port}", f"http://localhost:{port}", "chrome-extension://wallet"):
        headers = {"Origin": origin} if origin else {}
        ok = requests.post(url, json=chain_id, headers=headers, timeout=10)
        assert ok.status_code == 200 and ok.json()["result"] == hex(NETWORK_ID)
    rebound = requests.post(
        url,
        json=chain_id,
        headers={"Origin": f"http://attacker.example:{port}", "Host": f"attacker.example:{port}"},
        timeout=10,
    )
    assert rebound.status_code == 403  # a page whose name now points at 127.0.0.1
    sent = requests.post(
        url, json=send, headers={"Content-Type": "application/json; charset=utf-8"}, timeout=10
    )
    assert "result" in sent.json() and chain.pending_count() == pool_before + 1


def test_the_engines_own_estimate_stops_at_its_cap_instead_of_searching_the_blocks_30_million(
    chain: LocalChain,
) -> None:
    """A payout to a contract that burns what it gets: py-evm's estimator ran a dozen calls of up
    to 30 M gas each in the engine's worker; the engine now tries at most ESTIMATE_CAP."""
    from appliance.engine.chain.base import EstimateReverted
    from appliance.engine.chain.local import ESTIMATE_CAP

    burner = _deploy_burner(chain)
    over = bytes.fromhex(_turns((ESTIMATE_CAP + 500_000) // GAS_PER_TURN)[2:])
    with pytest.raises(EstimateReverted, match=f"gas required exceeds allowance \\({ESTIMATE_CAP}\\)"):
        chain.estimate_gas(FAUCET.address, burner, 0, over)
    assert chain.estimate_gas(FAUCET.address, BOB, 1, b"") == 21_000
    need = 10_000 * GAS_PER_TURN
    assert (
        need
        < chain.estimate_gas(FAUCET.address, burner, 0, bytes.fromhex(_turns(10_000)[2:]))
        <= ((need + 30_000) * 1.02)
    )
