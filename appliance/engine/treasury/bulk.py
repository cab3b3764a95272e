"""Reading many balances and nonces of one chain in few round trips.

A JSON-RPC chain is read with Multicall3's ``aggregate3`` (one ``eth_call`` answers up to
MULTICALL_BATCH balances: ``getEthBalance`` for the native asset, the token's ``balanceOf`` for an
ERC20) when the chain has Multicall3 at its canonical address, and otherwise with batched JSON-RPC
(one HTTP request carrying up to RPC_BATCH ``eth_getBalance``/``eth_call`` requests). Nonces are
always batched JSON-RPC (Multicall3 cannot read them). The embedded chain is in the process: it
is read address by address, at its head.

``http_requests`` and ``rpc_requests`` count what a reader sent (bench/treasury prints them).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from typing import Any

import requests
from eth_utils import keccak, to_checksum_address

from appliance.engine.chain.base import Chain, ChainError

MULTICALL3 = "0xcA11bde05977b3631167028862bE2a173976CA11"  # the same address on every chain
AGGREGATE3 = keccak(text="aggregate3((address,bool,bytes)[])")[:4]
GET_ETH_BALANCE = keccak(text="getEthBalance(address)")[:4]
BALANCE_OF = keccak(text="balanceOf(address)")[:4]
MULTICALL_BATCH = 500  # sub-calls per eth_call: about 4 M gas, well under a node's eth_call cap
RPC_BATCH = 100  # requests per JSON-RPC batch: what providers commonly accept
# aggregate3 calls per HTTP request: each carries about 50 kB of call data, and nodes cap a
# request's body (anvil refuses a batch of 40 as an invalid request).
MULTICALL_PER_REQUEST = 4

# (address, contract or None for the native asset)
Holding = tuple[str, str | None]


def _word(address: str) -> bytes:
    return bytes(12) + bytes.fromhex(address[2:])


def _tag(block: int | None) -> str:
    return "latest" if block is None else hex(block)


class BulkReader:
    def __init__(self, chain: Chain, *, multicall: bool | None = None, timeout: float = 30) -> None:
        self.chain = chain
        self.url: str | None = getattr(chain, "url", None)  # None: the embedded chain
        self.timeout = timeout
        self._multicall = multicall  # None: find out on first use
        self._session = requests.Session() if self.url else None
        self._ids = itertools.count(1)
        self.http_requests = 0
        self.rpc_requests = 0

    # -- JSON-RPC --------------------------------------------------------------------------------------

    def batch(self, calls: Sequence[tuple[str, list[Any]]], per_request: int = RPC_BATCH) -> list[Any]:
        """The results of ``calls`` (method, params), in order, ``per_request`` to an HTTP
        request; any error answer is a ChainError (a partial reading is no reading)."""
        assert self._session is not None and self.url is not None
        verify = getattr(self.chain, "verify", None)
        if verify is not None:
            verify()  # the node must serve the configured network (chain/guard.py)
        results: list[Any] = []
        for start in range(0, len(calls), per_request):
            chunk = calls[start : start + per_request]
            body: list[dict[str, Any]] = [
                {"jsonrpc": "2.0", "id": next(self._ids), "method": method, "params": params}
                for method, params in chunk
            ]
            try:
                response = self._session.post(self.url, json=body, timeout=self.timeout)
                answers = response.json()
            except (requests.RequestException, ValueError) as exc:
                raise ChainError(f"{self.chain.chain_id}: batch of {len(body)}: {exc}") from exc
            self.http_requests += 1
            self.rpc_requests += len(body)
            if not isinstance(answers, list):  # a node that refuses batches answers one error
                raise ChainError(
                    f"{self.chain.chain_id}: the node does not answer JSON-RPC batches: {answers}"
                )
            by_id = {a.get("id"): a for a in answers if isinstance(a, dict)}
            for request in body:
                answer = by_id.get(request["id"])
                if answer is None or "error" in answer:
                    problem = answer.get("error") if answer else "no answer"
                    raise ChainError(f"{self.chain.chain_id}: {request['method']}: {problem}")
                results.append(answer["result"])
        return results

    def has_multicall(self) -> bool:
        if self._multicall is None:
            if self.url is None:
                self._multicall = False
            else:
                code = self.batch([("eth_getCode", [MULTICALL3, "latest"])])[0]
                self._multicall = bool(code) and code not in ("0x", "0x0")
        return self._multicall

    # -- balances --------------------------------------------------------------------------------------

    def balances(self, holdings: Sequence[Holding], block: int | None = None) -> list[int]:
        """The balance of each (address, contract) at ``block`` (None: the head), in order."""
        if not holdings:
            return []
        if self.url is None:
            return [self.chain.balance(address, contract) for address, contract in holdings]
        if self.has_multicall():
            return self._multicall_balances(holdings, block)
        calls: list[tuple[str, list[Any]]] = []
        for address, contract in holdings:
            if contract is None:
                calls.append(("eth_getBalance", [address, _tag(block)]))
            else:
                data = "0x" + (BALANCE_OF + _word(address)).hex()
                calls.append(("eth_call", [{"to": contract, "data": data}, _tag(block)]))
        return [_uint(result) for result in self.batch(calls)]

    def _multicall_balances(self, holdings: Sequence[Holding], block: int | None) -> list[int]:
        requests_: list[tuple[str, list[Any]]] = []
        for start in range(0, len(holdings), MULTICALL_BATCH):
            sub = [
                (MULTICALL3, True, GET_ETH_BALANCE + _word(address))
                if contract is None
                else (contract, True, BALANCE_OF + _word(address))
                for address, contract in holdings[start : start + MULTICALL_BATCH]
            ]
            call_data = "0x" + (AGGREGATE3 + encode_calls(sub)).hex()
            requests_.append(("eth_call", [{"to": MULTICALL3, "data": call_data}, _tag(block)]))
        out: list[int] = []
        for answer in self.batch(requests_, MULTICALL_PER_REQUEST):
            for success, data in decode_results(bytes.fromhex(str(answer).removeprefix("0x"))):
                if not success:
                    raise ChainError(f"{self.chain.chain_id}: a balance read through Multicall3 failed")
                out.append(int.from_bytes(data[:32], "big") if data else 0)
        return out

    # -- nonces, blocks, receipts ------------------------------------------------------------------------

    def nonces(self, addresses: Sequence[str], block: int | None = None) -> list[int]:
        if self.url is None:
            return [self.chain.nonce(a) for a in addresses]
        calls = [("eth_getTransactionCount", [a, _tag(block)]) for a in addresses]
        return [_uint(r) for r in self.batch(calls)]

    def receipts(self, tx_hashes: Iterable[str]) -> dict[str, dict[str, Any] | None]:
        """tx hash → {"status", "blockNumber", "fee"} of the canonical chain (fee: gas used ×
        effective gas price, in wei), or None (not included)."""
        hashes = list(dict.fromkeys(tx_hashes))
        if self.url is None:
            out: dict[str, dict[str, Any] | None] = {}
            for h in hashes:
                r = self.chain.receipt(h)
                out[h] = (
                    None
                    if r is None
                    else {
                        "status": 1 if r.success else 0,
                        "blockNumber": r.block_number,
                        "fee": r.gas_used * r.effective_gas_price,
                    }
                )
            return out
        answers = self.batch([("eth_getTransactionReceipt", [h]) for h in hashes])
        return {
            h: None
            if not a or a.get("blockNumber") is None
            else {
                "status": _uint(a.get("status", "0x0")),
                "blockNumber": _uint(a["blockNumber"]),
                "fee": _uint(a.get("gasUsed", "0x0")) * _uint(a.get("effectiveGasPrice", "0x0")),
            }
            for h, a in zip(hashes, answers, strict=True)
        }

    def find_transaction(self, address: str, nonce: int, head: int) -> dict[str, Any] | None:
        """The canonical transaction of ``address`` at ``nonce``: the first block whose state
        shows the nonce used, found by bisection on eth_getTransactionCount (about log2(head)
        requests; needs a node that keeps old state, as anvil and archive nodes do), then that
        block's transactions. None when it cannot be found (the embedded chain, a pruned node)."""
        if self.url is None:
            return None
        try:
            low, high = 0, head
            if _uint(self.batch([("eth_getTransactionCount", [address, hex(high)])])[0]) <= nonce:
                return None
            while low < high:  # the first block after which the count exceeds ``nonce``
                middle = (low + high) // 2
                count = _uint(self.batch([("eth_getTransactionCount", [address, hex(middle)])])[0])
                if count > nonce:
                    high = middle
                else:
                    low = middle + 1
            block = self.batch([("eth_getBlockByNumber", [hex(low), True])])[0]
        except ChainError:
            return None
        wanted = to_checksum_address(address)
        for tx in (block or {}).get("transactions", []):
            if to_checksum_address(tx["from"]) == wanted and _uint(tx["nonce"]) == nonce:
                return {**tx, "blockNumber": low}
        return None


def encode_calls(calls: Sequence[tuple[str, bool, bytes]]) -> bytes:
    """The ABI encoding of one ``(address,bool,bytes)[]`` argument. eth_abi gives the same bytes
    (a test checks) at about 30 times the cost: 8 s of CPU for 10,000 addresses' balances."""
    n = len(calls)
    tails: list[bytes] = []
    for target, allow, data in calls:
        padded = data + bytes(-len(data) % 32)
        tails.append(
            _word(target)
            + int(allow).to_bytes(32, "big")
            + (96).to_bytes(32, "big")
            + len(data).to_bytes(32, "big")
            + padded
        )
    offsets, position = [], 32 * n
    for tail in tails:
        offsets.append(position.to_bytes(32, "big"))
        position += len(tail)
    return (32).to_bytes(32, "big") + n.to_bytes(32, "big") + b"".join(offsets) + b"".join(tails)


def decode_results(blob: bytes) -> list[tuple[bool, bytes]]:
    """The inverse for aggregate3's ``(bool,bytes)[]`` answer (eth_abi's decode: the same, slower)."""

    def word(at: int) -> int:
        if at + 32 > len(blob):
            raise ChainError("a malformed Multicall3 answer")
        return int.from_bytes(blob[at : at + 32], "big")

    start = word(0)
    n = word(start)
    base = start + 32
    out = []
    for i in range(n):
        tuple_at = base + word(base + 32 * i)
        success = word(tuple_at) == 1
        data_at = tuple_at + word(tuple_at + 32)
        length = word(data_at)
        if data_at + 32 + length > len(blob):
            raise ChainError("a malformed Multicall3 answer")
        out.append((success, blob[data_at + 32 : data_at + 32 + length]))
    return out


def _uint(value: Any) -> int:
    text = str(value)
    if text in ("0x", ""):
        return 0  # eth_call of an address without code answers no bytes
    return int(text, 16) if text.startswith("0x") else int(text)
