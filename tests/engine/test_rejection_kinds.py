"""appliance.engine.chain.base.rejection_of: what a node's refusal of a raw transaction means, from
the words real nodes use. The engine acts on the kind only (a nonce used: look for what was mined
there; underpriced: bump; insufficient funds: wait), so a wording read as OTHER makes the payout
wait and send the same bytes again later instead of doing what the refusal asks.

Wordings: geth (core/error.go, core/txpool/errors.go, with the details it appends), Erigon, Besu,
Nethermind (the AcceptTxResult codes its releases answered before it took geth's phrases, and
those phrases with its details), OpenEthereum, anvil 1.7.1 (from the strings of the binary under
.tools, and checked by sending it raw transactions: the same bytes again, "transaction already
imported"; below the base fee, from an empty account, at a mined nonce (the same bytes once mined
included), "max fee per gas less than block base fee", "Insufficient funds for gas * price +
value", "nonce too low"), and what providers and client libraries say. A real wording the mapping reads
wrongly fails here.

The last tests send through appliance.engine.chain.rpc.RpcChain to a JSON-RPC server written from
the published contract (an error object with code and message), to check the words reach the
mapping and that a node's "I have it already" is not a refusal."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from web3 import Web3

from appliance.engine.chain.base import Rejection, TransactionRejected, rejection_of
from appliance.engine.chain.rpc import RpcChain

ADDRESS = "0x5A5A5a5A5a5a5A5A5a5a5A5a5a5A5a5A5a5A5a5a"

NONCE_USED = [
    "nonce too low",  # geth, Erigon, anvil
    f"nonce too low: address {ADDRESS}, tx: 4 state: 5",  # geth with its details
    f"nonce too low: address {ADDRESS} current nonce (5) > tx nonce (4)",  # Avalanche (coreth)
    "Nonce too low",  # Besu
    "nonce has already been used",  # ethers' NONCE_EXPIRED, relayed by providers
    "NONCE_EXPIRED: nonce has already been used",
    "nonce too low, Current nonce: 5, nonce of rejected tx: 4",  # Nethermind with geth's phrases
]
UNDERPRICED = [
    "replacement transaction underpriced",  # geth, Erigon, anvil
    "Replacement transaction underpriced",  # Besu
    "transaction underpriced",  # geth, Erigon
    "transaction underpriced: gas tip cap 1, minimum needed 1000000000",  # geth 1.13+
    "max fee per gas less than block base fee",  # anvil, Arbitrum, zkSync
    f"max fee per gas less than block base fee: address {ADDRESS}, maxFeePerGas: 1000, baseFee: 7000",
    f"fee cap less than block base fee: address {ADDRESS}, gasFeeCap: 1000 baseFee: 7000",  # geth < 1.10.7
    "transaction underpriced, MaxFeePerGas too low. MaxFeePerGas: 1000, BaseFee: 7000, "
    "MaxPriorityFeePerGas:1, Block number: 10",  # Nethermind with geth's phrases
    "fee too low: 21000, use at least tx.gasLimit = 21000 and tx.gasPrice = 1",  # Metis, legacy L2s
]
INSUFFICIENT_FUNDS = [
    "insufficient funds for gas * price + value",  # geth, Erigon
    f"insufficient funds for gas * price + value: address {ADDRESS} have 0 want 21000000000000",
    "Insufficient funds for gas * price + value",  # anvil
    "insufficient funds for transfer",  # geth, Erigon: value above the balance
    "Insufficient funds. The account you tried to send transaction from does not have enough funds. "
    "Required 21000000000000 and got: 0.",  # OpenEthereum
]
OTHER = [
    "nonce too high",  # geth, Erigon: a gap below it, nothing used
    "Nonce too high",  # anvil
    "NonceGap, Future nonce. Expected nonce: 5",  # Nethermind
    "exceeds block gas limit",
    "intrinsic gas too low",
    "max priority fee per gas higher than max fee per gas",  # geth, anvil: a malformed payload
    "txpool is full",
    "invalid sender",
    "tx fee (1.05 ether) exceeds the configured cap (1.00 ether)",
    "execution reverted",
]

# Wordings of clients that write codes without spaces (Nethermind) or their own phrases
# (OpenEthereum, Besu): read wrongly until rejection_of compacted the words (issue 42).
CODES_AND_PHRASES = [
    ("OldNonce", Rejection.NONCE_USED, "Nethermind's code for a nonce already used is read as OTHER"),
    (
        "OldNonce, Current nonce: 5, nonce of rejected tx: 4",
        Rejection.NONCE_USED,
        "Nethermind's code for a nonce already used is read as OTHER",
    ),
    (
        "Transaction nonce is too low. Try incrementing the nonce.",
        Rejection.NONCE_USED,
        "OpenEthereum's 'nonce is too low' is not 'nonce too low'",
    ),
    (
        "FeeTooLow, MaxFeePerGas too low. MaxFeePerGas: 1000, BaseFee: 7000, MaxPriorityFeePerGas:1, "
        "Block number: 10",
        Rejection.UNDERPRICED,
        "Nethermind writes FeeTooLow and BaseFee without spaces: read as OTHER",
    ),
    ("FeeTooLowToCompete", Rejection.UNDERPRICED, "Nethermind's FeeTooLowToCompete is read as OTHER"),
    (
        "ReplacementNotAllowed",
        Rejection.UNDERPRICED,
        "Nethermind's refusal of a replacement whose bump is too small is read as OTHER",
    ),
    (
        "Transaction gas price is too low. There is another transaction with same nonce in the queue. "
        "Try increasing the gas price or incrementing the nonce.",
        Rejection.UNDERPRICED,
        "OpenEthereum's replacement underpriced is read as OTHER",
    ),
    (
        "InsufficientFunds, Account balance: 0, cumulative cost: 21000000000000",
        Rejection.INSUFFICIENT_FUNDS,
        "Nethermind writes InsufficientFunds without a space: read as OTHER",
    ),
    (
        "Upfront cost exceeds account balance",
        Rejection.INSUFFICIENT_FUNDS,
        "Besu's insufficient funds is read as OTHER",
    ),
]


@pytest.mark.parametrize("words", NONCE_USED)
def test_a_nodes_nonce_too_low_means_the_nonce_is_used(words: str) -> None:
    assert rejection_of(words) is Rejection.NONCE_USED


@pytest.mark.parametrize("words", UNDERPRICED)
def test_a_nodes_underpriced_or_below_base_fee_means_underpriced(words: str) -> None:
    assert rejection_of(words) is Rejection.UNDERPRICED


@pytest.mark.parametrize("words", INSUFFICIENT_FUNDS)
def test_a_nodes_insufficient_funds_means_insufficient_funds(words: str) -> None:
    assert rejection_of(words) is Rejection.INSUFFICIENT_FUNDS


@pytest.mark.parametrize("words", OTHER)
def test_a_refusal_that_is_none_of_the_three_is_other(words: str) -> None:
    assert rejection_of(words) is Rejection.OTHER


@pytest.mark.parametrize(("words", "kind"), [(words, kind) for words, kind, _ in CODES_AND_PHRASES])
def test_a_real_nodes_wording_is_read_as_what_it_means(words: str, kind: Rejection) -> None:
    assert rejection_of(words) is kind


def test_a_rejection_takes_its_kind_from_the_nodes_words() -> None:
    rejected = TransactionRejected("replacement transaction underpriced")
    assert rejected.kind is Rejection.UNDERPRICED
    assert rejected.reason == "replacement transaction underpriced"
    assert str(rejected) == "replacement transaction underpriced"


def test_a_rejection_whose_kind_is_given_keeps_it_whatever_the_words() -> None:
    rejected = TransactionRejected("nonce too low", Rejection.INSUFFICIENT_FUNDS)
    assert rejected.kind is Rejection.INSUFFICIENT_FUNDS


# Through the JSON-RPC adapter.


class RefusingNode:
    """Answers eth_sendRawTransaction with a JSON-RPC error object carrying ``words``."""

    def __init__(self, words: str) -> None:
        self.words = words
        node = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                request = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                error = {"code": -32000, "message": node.words}
                data = json.dumps({"jsonrpc": "2.0", "id": request["id"], "error": error}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"


@pytest.fixture
def node() -> Iterator[RefusingNode]:
    refusing = RefusingNode("")
    thread = threading.Thread(target=refusing.server.serve_forever, daemon=True)
    thread.start()
    yield refusing
    refusing.server.shutdown()
    refusing.server.server_close()


RAW = bytes.fromhex("02f86b82053980843b9aca00850bdfd63e0082520894")  # any bytes: the node refuses them


@pytest.mark.parametrize(
    ("words", "kind"),
    [
        ("nonce too low", Rejection.NONCE_USED),
        ("replacement transaction underpriced", Rejection.UNDERPRICED),
        ("insufficient funds for gas * price + value", Rejection.INSUFFICIENT_FUNDS),
        ("nonce too high", Rejection.OTHER),
    ],
)
def test_a_json_rpc_nodes_refusal_reaches_the_engine_with_the_kind_of_its_words(
    node: RefusingNode, words: str, kind: Rejection
) -> None:
    node.words = words
    chain = RpcChain("eth_test", node.url, 1337, "test", timeout=5)
    with pytest.raises(TransactionRejected) as refused:
        chain.send_raw_transaction(RAW)
    assert refused.value.kind is kind
    assert words in refused.value.reason


@pytest.mark.parametrize(
    "words",
    [
        "already known",  # geth, Erigon
        "transaction already imported",  # anvil
        "Known transaction",  # Besu
        "AlreadyKnown",  # Nethermind
    ],
)
def test_a_node_that_holds_the_same_bytes_already_answers_their_hash_not_a_refusal(
    node: RefusingNode, words: str
) -> None:
    node.words = words
    chain = RpcChain("eth_test", node.url, 1337, "test", timeout=5)
    assert chain.send_raw_transaction(RAW) == "0x" + Web3.keccak(RAW).hex().removeprefix("0x")
