"""A JSON-RPC chain that is used only while its node serves the network the settings name.

A ``network_id = 1`` pointed at a testnet node would announce test ETH as mainnet deposits and
sign payouts for the wrong network. Every call to the chain first makes sure the node's
``eth_chainId`` equals the configured networkId: at the first use (start-up), again after any
failed call (a reconnect may reach another node: a restarted one, another backend of a load
balancer) and at least every RECHECK_SECONDS. On a mismatch every call raises NetworkMismatch, a
ChainError: the deposit watcher and the payout pipeline leave the chain alone (they retry later,
as for a node that is down), and the chain's readiness check fails with the reason.
"""

from __future__ import annotations

import logging
import threading
import time
from typing import Any

from appliance.engine.chain.base import (
    BlockRef,
    ChainError,
    ChainTransaction,
    FeeQuote,
    NativeTransfer,
    Receipt,
    TokenTransfer,
)

log = logging.getLogger("appliance.engine.chain")

RECHECK_SECONDS = 30.0


class NetworkMismatch(ChainError):
    """The node serves another network than the settings name: the chain is refused."""


class GuardedChain:
    """Wraps an adapter with ``check_network()`` (RpcChain); the same interface (base.Chain)."""

    def __init__(self, inner: Any) -> None:
        self.inner = inner
        self.chain_id: str = inner.chain_id
        self.network_id: int = inner.network_id
        self.environment: str = inner.environment
        self._lock = threading.Lock()
        self._verified_at: float | None = None  # monotonic time of the last good check
        self.refused: str | None = None  # the reason, while the node serves another network

    def __getattr__(self, name: str) -> Any:  # url, w3 and the adapter's extras
        return getattr(self.inner, name)

    def verify(self) -> None:
        """Check the node's chain id unless checked recently; raises NetworkMismatch (or the
        ChainError of a node that cannot be reached)."""
        with self._lock:
            fresh = self._verified_at is not None and time.monotonic() - self._verified_at < RECHECK_SECONDS
        if fresh:
            return
        actual = self._node_chain_id()  # a ChainError when unreachable: still not verified
        if actual != self.network_id:
            reason = f"refused: node reports chain id {actual}, settings say {self.network_id}"
            if self.refused != reason:
                log.error("chain %s %s; deposits and payouts on it are stopped", self.chain_id, reason)
            self.refused = reason
            raise NetworkMismatch(f"{self.chain_id}: {reason}")
        with self._lock:
            if self.refused:
                log.warning("chain %s: the node serves networkId %s again", self.chain_id, self.network_id)
            self.refused = None
            self._verified_at = time.monotonic()

    def _node_chain_id(self) -> int:
        """The node's eth_chainId, asked afresh (web3 does not cache it unless told to); any
        failure is a ChainError, as the adapter's own calls raise."""
        w3 = self.inner.w3
        try:
            return int(w3.eth.chain_id)
        except Exception as exc:  # transport errors, RPC errors, a malformed answer
            raise ChainError(f"{self.chain_id}: eth_chainId: {type(exc).__name__}: {exc}") from exc

    def _call(self, name: str, *args: Any) -> Any:
        self.verify()
        try:
            return getattr(self.inner, name)(*args)
        except ChainError:
            with self._lock:
                self._verified_at = None  # the next call may reach another node: check again
            raise

    def check_network(self) -> None:
        self.verify()

    def head(self) -> BlockRef:
        return self._call("head")  # type: ignore[no-any-return]

    def block(self, number: int) -> BlockRef | None:
        return self._call("block", number)  # type: ignore[no-any-return]

    def balance(self, address: str, contract: str | None = None) -> int:
        return self._call("balance", address, contract)  # type: ignore[no-any-return]

    def nonce(self, address: str) -> int:
        return self._call("nonce", address)  # type: ignore[no-any-return]

    def pending_nonce(self, address: str) -> int:
        return self._call("pending_nonce", address)  # type: ignore[no-any-return]

    def nonce_at(self, address: str, number: int) -> int:
        return self._call("nonce_at", address, number)  # type: ignore[no-any-return]

    def fee_quote(self) -> FeeQuote:
        return self._call("fee_quote")  # type: ignore[no-any-return]

    def estimate_gas(self, sender: str, to: str, value: int, data: bytes) -> int:
        return self._call("estimate_gas", sender, to, value, data)  # type: ignore[no-any-return]

    def send_raw_transaction(self, raw: bytes) -> str:
        return self._call("send_raw_transaction", raw)  # type: ignore[no-any-return]

    def receipt(self, tx_hash: str) -> Receipt | None:
        return self._call("receipt", tx_hash)  # type: ignore[no-any-return]

    def native_transfers(self, number: int) -> list[NativeTransfer]:
        return self._call("native_transfers", number)  # type: ignore[no-any-return]

    def token_transfers(self, from_block: int, to_block: int, contracts: list[str]) -> list[TokenTransfer]:
        return self._call("token_transfers", from_block, to_block, contracts)  # type: ignore[no-any-return]

    def token_transfers_at(self, block_hash: str, contracts: list[str]) -> list[TokenTransfer]:
        return self._call("token_transfers_at", block_hash, contracts)  # type: ignore[no-any-return]

    def account_transactions(self, sender: str, from_block: int, to_block: int) -> list[ChainTransaction]:
        # the nonce fencing's scan: a wrong network's history must never be matched to payouts
        return self._call("account_transactions", sender, from_block, to_block)  # type: ignore[no-any-return]

    def close(self) -> None:
        close = getattr(self.inner, "close", None)
        if close is not None:
            close()
