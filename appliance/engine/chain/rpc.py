"""A chain reached through any Ethereum JSON-RPC node (geth, reth, anvil, a provider), with web3.py."""

from __future__ import annotations

from typing import Any

import requests
from eth_typing import HexStr
from eth_utils import to_checksum_address
from web3 import HTTPProvider, Web3
from web3.exceptions import ContractLogicError, TransactionNotFound, Web3RPCError

from appliance.engine.chain.base import (
    BlockRef,
    ChainError,
    ChainTransaction,
    EstimateReverted,
    FeeQuote,
    NativeTransfer,
    Receipt,
    TokenTransfer,
    TransactionRejected,
    compact,
    rejection_of,
)

TRANSFER_TOPIC = "0x" + Web3.keccak(text="Transfer(address,address,uint256)").hex().removeprefix("0x")
BALANCE_OF = Web3.keccak(text="balanceOf(address)")[:4]
PRIORITY_FEE = 10**9  # 1 gwei tip, raised to the node's suggestion when it asks more


def _hex(value: bytes | str) -> str:
    text = value.hex() if isinstance(value, bytes | bytearray) else str(value)
    return "0x" + text.removeprefix("0x").lower()


class RpcChain:
    def __init__(self, chain_id: str, url: str, network_id: int, environment: str, *, timeout: float = 10):
        self.chain_id = chain_id
        self.network_id = network_id
        self.environment = environment
        self.url = url
        # No retries inside web3 (its default retries a time-out five times): a stopped node then
        # held each call, the readiness check included, for about a minute. A failed call is a
        # ChainError at once; the payout pipeline and the deposit watcher retry with their own
        # back-off (issue 32).
        self.w3 = Web3(
            HTTPProvider(url, request_kwargs={"timeout": timeout}, exception_retry_configuration=None)
        )

    def _call(self, fn, *args):
        try:
            return fn(*args)
        except Web3RPCError as exc:
            raise ChainError(f"{self.chain_id}: {exc}") from exc
        except (requests.RequestException, OSError, ValueError) as exc:
            raise ChainError(f"{self.chain_id}: {type(exc).__name__}: {exc}") from exc

    def check_network(self) -> None:
        """The node must serve the networkId the settings name (a wrong URL must not sign for
        another network)."""
        actual = self._call(lambda: self.w3.eth.chain_id)
        if actual != self.network_id:
            raise ChainError(
                f"{self.chain_id}: node reports chain id {actual}, settings say {self.network_id}"
            )

    def _ref(self, block) -> BlockRef:
        return BlockRef(int(block["number"]), _hex(block["hash"]), int(block["timestamp"]))

    def head(self) -> BlockRef:
        return self._ref(self._call(self.w3.eth.get_block, "latest"))

    def block(self, number: int) -> BlockRef | None:
        try:
            return self._ref(self._call(self.w3.eth.get_block, number))
        except ChainError as exc:
            if "not found" in str(exc).lower():
                return None
            raise

    def balance(self, address: str, contract: str | None = None) -> int:
        address = to_checksum_address(address)
        if contract is None:
            return int(self._call(self.w3.eth.get_balance, address))
        data = BALANCE_OF + bytes(12) + bytes.fromhex(address[2:])
        out = self._call(self.w3.eth.call, {"to": to_checksum_address(contract), "data": data})
        return int.from_bytes(bytes(out), "big") if out else 0

    def nonce(self, address: str) -> int:
        return int(self._call(self.w3.eth.get_transaction_count, to_checksum_address(address), "latest"))

    def pending_nonce(self, address: str) -> int:
        return int(self._call(self.w3.eth.get_transaction_count, to_checksum_address(address), "pending"))

    def nonce_at(self, address: str, number: int) -> int:
        return int(self._call(self.w3.eth.get_transaction_count, to_checksum_address(address), number))

    def fee_quote(self) -> FeeQuote:
        base = int(self._call(self.w3.eth.get_block, "latest").get("baseFeePerGas", 0))
        try:
            tip = max(PRIORITY_FEE, int(self._call(lambda: self.w3.eth.max_priority_fee)))
        except ChainError:
            tip = PRIORITY_FEE
        return FeeQuote(max_fee_per_gas=2 * base + tip, max_priority_fee_per_gas=tip)

    def estimate_gas(self, sender: str, to: str, value: int, data: bytes) -> int:
        tx = {
            "from": to_checksum_address(sender),
            "to": to_checksum_address(to),
            "value": value,
            "data": data,
        }
        try:
            return int(self._call(self.w3.eth.estimate_gas, tx))
        except ContractLogicError as exc:
            # web3 raises this (not an RPC error) when the node says the call reverts: not a
            # transient failure to retry for ever, the transaction cannot succeed.
            raise EstimateReverted(f"{self.chain_id}: the call reverts: {exc.message or exc}") from exc

    def send_raw_transaction(self, raw: bytes) -> str:
        tx_hash = _hex(Web3.keccak(raw))
        try:
            return _hex(self.w3.eth.send_raw_transaction(raw))
        except Web3RPCError as exc:
            message = str(exc.message if hasattr(exc, "message") else exc)
            words = compact(message)  # "already known", Nethermind's "AlreadyKnown"
            if "alreadyknown" in words or "alreadyimported" in words or "knowntransaction" in words:
                return tx_hash
            raise TransactionRejected(message, rejection_of(message)) from exc
        except (requests.RequestException, OSError) as exc:
            raise ChainError(f"{self.chain_id}: {type(exc).__name__}: {exc}") from exc

    def receipt(self, tx_hash: str) -> Receipt | None:
        try:
            r = self.w3.eth.get_transaction_receipt(HexStr(tx_hash))
        except TransactionNotFound:
            return None
        except Web3RPCError as exc:
            raise ChainError(f"{self.chain_id}: {exc}") from exc
        except (requests.RequestException, OSError) as exc:
            raise ChainError(f"{self.chain_id}: {type(exc).__name__}: {exc}") from exc
        if r is None or r.get("blockNumber") is None:
            return None
        return Receipt(
            tx_hash=_hex(r["transactionHash"]),
            block_number=int(r["blockNumber"]),
            block_hash=_hex(r["blockHash"]),
            success=int(r["status"]) == 1,
            gas_used=int(r["gasUsed"]),
            effective_gas_price=int(r.get("effectiveGasPrice", 0)),
            transfers=tuple(
                (
                    to_checksum_address(log["address"]),
                    to_checksum_address(bytes(log["topics"][1])[-20:]),
                    to_checksum_address(bytes(log["topics"][2])[-20:]),
                    int.from_bytes(bytes(log["data"]), "big"),
                )
                for log in r.get("logs", [])
                if len(log["topics"]) == 3 and _hex(log["topics"][0]) == TRANSFER_TOPIC
            ),
        )

    def native_transfers(self, number: int) -> list[NativeTransfer]:
        block = self._call(self.w3.eth.get_block, number, True)
        moved = [tx for tx in block["transactions"] if int(tx["value"]) > 0 and tx.get("to")]
        out = []
        for tx in moved:
            receipt = self.receipt(_hex(tx["hash"]))
            if receipt is None:  # mined in this block: a provider's node that has not seen it yet
                raise ChainError(f"{self.chain_id}: no receipt yet of {_hex(tx['hash'])} in block {number}")
            out.append(
                NativeTransfer(
                    tx_hash=_hex(tx["hash"]),
                    block_number=int(block["number"]),
                    block_hash=_hex(block["hash"]),
                    sender=to_checksum_address(tx["from"]),
                    to=to_checksum_address(tx["to"]),
                    value=int(tx["value"]),
                    success=receipt.success,
                )
            )
        return out

    def token_transfers(self, from_block: int, to_block: int, contracts: list[str]) -> list[TokenTransfer]:
        if not contracts:
            return []
        return self._transfers({"fromBlock": from_block, "toBlock": to_block}, contracts)

    def token_transfers_at(self, block_hash: str, contracts: list[str]) -> list[TokenTransfer]:
        """The Transfer logs of ``contracts`` in the block ``block_hash`` exactly (EIP-234): a node
        that does not hold that block answers an error, where a range query answered by a node
        behind (a load-balanced provider) returns no logs for it and a deposit would be passed over."""
        if not contracts:
            return []
        found = self._transfers({"blockHash": block_hash}, contracts)
        if any(t.block_hash.lower() != block_hash.lower() for t in found):
            raise ChainError(f"{self.chain_id}: the node answered logs of another block than {block_hash}")
        return found

    def _transfers(self, where: dict[str, Any], contracts: list[str]) -> list[TokenTransfer]:
        logs = self._call(
            self.w3.eth.get_logs,
            {**where, "address": [to_checksum_address(c) for c in contracts], "topics": [TRANSFER_TOPIC]},
        )
        if logs is None:  # a null answer is no answer, never "no logs"
            raise ChainError(f"{self.chain_id}: the node answered null to eth_getLogs")
        out = []
        for log in logs:
            topics = log["topics"]
            if len(topics) != 3:
                continue  # not the ERC20 shape (ERC721 indexes the value too)
            out.append(
                TokenTransfer(
                    tx_hash=_hex(log["transactionHash"]),
                    block_number=int(log["blockNumber"]),
                    block_hash=_hex(log["blockHash"]),
                    log_index=int(log["logIndex"]),
                    contract=to_checksum_address(log["address"]),
                    sender=to_checksum_address(bytes(topics[1])[-20:]),
                    to=to_checksum_address(bytes(topics[2])[-20:]),
                    value=int.from_bytes(bytes(log["data"]), "big"),
                )
            )
        return out

    def account_transactions(self, sender: str, from_block: int, to_block: int) -> list[ChainTransaction]:
        # eth_getBlockByNumber with full transactions, block by block: a node has no index of an
        # account's transactions, and the fencing scans only the blocks since a known point.
        wanted = to_checksum_address(sender)
        out = []
        for number in range(max(from_block, 0), to_block + 1):
            block = self._call(self.w3.eth.get_block, number, True)
            for tx in block["transactions"]:
                if to_checksum_address(tx["from"]) != wanted:
                    continue
                tx_hash = _hex(tx["hash"])
                raw = self._call(self.w3.provider.make_request, "eth_getRawTransactionByHash", [tx_hash])
                if not raw.get("result"):
                    raise ChainError(f"{self.chain_id}: the node holds no signed bytes of {tx_hash}")
                out.append(
                    ChainTransaction(
                        tx_hash=tx_hash,
                        block_number=int(block["number"]),
                        nonce=int(tx["nonce"]),
                        to=to_checksum_address(tx["to"]) if tx.get("to") else None,
                        value=int(tx["value"]),
                        data=bytes(tx["input"]),
                        raw=bytes.fromhex(str(raw["result"]).removeprefix("0x")),
                    )
                )
        return out
