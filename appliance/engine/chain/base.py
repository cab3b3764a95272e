"""The port every chain adapter implements: the embedded local EVM chain (appliance.engine.chain.local)
and any Ethereum JSON-RPC node (appliance.engine.chain.rpc).

The engine signs transactions itself (eth-account, EIP-1559, the chain's networkId as EIP-155 chain id)
and hands the raw bytes to the adapter; an adapter never holds a private key. Addresses are 0x-prefixed
checksummed hex strings; hashes are 0x-prefixed lowercase hex strings; amounts are ints of minor units.
"""

from __future__ import annotations

import dataclasses
import enum
from typing import Protocol


class ChainError(Exception):
    """The chain could not answer (node down, malformed answer): a transient condition, retried later."""


class Rejection(enum.Enum):
    """What a node's refusal of a raw transaction means to the engine. The adapters name it (from
    the node's words, which differ between clients); the engine acts on the kind, never on the words."""

    NONCE_USED = "nonce_used"  # the nonce is taken: by a payload of ours (mined) or a foreign one
    UNDERPRICED = "underpriced"  # below the base fee, or not enough above the payload it replaces
    INSUFFICIENT_FUNDS = "insufficient_funds"  # the sender cannot pay value + gas × maxFeePerGas
    OTHER = "other"


def compact(words: str) -> str:
    """A node's words lower-cased without spaces or underscores: clients name the same refusal
    as a phrase ("fee too low") or a code ("FeeTooLow", "FEE_TOO_LOW")."""
    return "".join(words.lower().split()).replace("_", "")


# Each kind's words, compacted: geth, Erigon, anvil, Besu, Nethermind (its codes and its geth-like
# phrases), OpenEthereum, and providers relaying ethers' NONCE_EXPIRED.
_WORDS: tuple[tuple[Rejection, tuple[str, ...]], ...] = (
    (Rejection.NONCE_USED, ("noncetoolow", "nonceistoolow", "alreadybeenused", "oldnonce")),
    (
        Rejection.UNDERPRICED,
        ("underpriced", "basefee", "feetoolow", "replacementnotallowed", "gaspriceistoolow"),
    ),
    (Rejection.INSUFFICIENT_FUNDS, ("insufficientfunds", "upfrontcostexceeds")),
)


def rejection_of(reason: str) -> Rejection:
    """The kind of a node's refusal, from its words (geth, Nethermind, Erigon, Besu, OpenEthereum,
    anvil, providers); tests/engine/test_rejection_kinds.py holds the wordings."""
    words = compact(reason)
    for kind, marks in _WORDS:
        if any(mark in words for mark in marks):
            return kind
    return Rejection.OTHER


class TransactionRejected(ChainError):
    """The node refused a raw transaction outright: ``kind`` is what it means, ``reason`` the
    node's words (for example 'nonce too low', 'insufficient funds', 'replacement transaction
    underpriced'), for logs and operators."""

    def __init__(self, reason: str, kind: Rejection | None = None) -> None:
        super().__init__(reason)
        self.reason = reason
        self.kind = kind if kind is not None else rejection_of(reason)


class EstimateReverted(ChainError):
    """A gas estimate whose call reverts: the transaction cannot succeed as it stands (a token
    refusing the transfer, a blacklisted destination). ``reason`` is the chain's words."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclasses.dataclass(frozen=True)
class BlockRef:
    number: int
    hash: str  # 0x… of the block at this height on the adapter's current canonical chain
    timestamp: int  # unix seconds


@dataclasses.dataclass(frozen=True)
class Receipt:
    tx_hash: str
    block_number: int
    block_hash: str
    success: bool  # status 1
    gas_used: int
    effective_gas_price: int  # wei per gas actually paid
    # (contract, sender, to, value) of every ERC20 Transfer log of the transaction: a token that
    # returns false instead of reverting, or takes a fee, shows here what really moved.
    transfers: tuple[tuple[str, str, str, int], ...] = ()


@dataclasses.dataclass(frozen=True)
class NativeTransfer:
    """A transaction in a block that moved a positive amount of the native asset."""

    tx_hash: str
    block_number: int
    block_hash: str
    sender: str
    to: str
    value: int
    success: bool


@dataclasses.dataclass(frozen=True)
class TokenTransfer:
    """An ERC20 ``Transfer(address,address,uint256)`` log."""

    tx_hash: str
    block_number: int
    block_hash: str
    log_index: int
    contract: str
    sender: str
    to: str
    value: int


@dataclasses.dataclass(frozen=True)
class ChainTransaction:
    """A transaction of the canonical chain sent by one account, with its signed bytes: what the
    nonce fencing matches against the engine's own records."""

    tx_hash: str
    block_number: int
    nonce: int
    to: str | None
    value: int
    data: bytes
    raw: bytes


@dataclasses.dataclass(frozen=True)
class FeeQuote:
    max_fee_per_gas: int
    max_priority_fee_per_gas: int


class Chain(Protocol):
    chain_id: str  # the engine's name of the chain, for example "eth_local"
    network_id: int  # EIP-155 chain id, for example 1337
    environment: str  # "local" for the embedded chain, otherwise what the settings say

    def head(self) -> BlockRef:
        """The newest block of the canonical chain."""
        ...

    def block(self, number: int) -> BlockRef | None:
        """The canonical block at ``number``, or None above the head."""
        ...

    def balance(self, address: str, contract: str | None = None) -> int:
        """Native balance (contract None) or ERC20 ``balanceOf`` at the head."""
        ...

    def nonce(self, address: str) -> int:
        """Transactions of ``address`` included in the canonical chain (the 'latest' nonce)."""
        ...

    def pending_nonce(self, address: str) -> int:
        """The 'pending' nonce: the latest nonce, or one above the highest nonce of ``address``
        that the node's pool holds (transactions sent and not yet mined, whoever sent them)."""
        ...

    def nonce_at(self, address: str, number: int) -> int:
        """Transactions of ``address`` included in canonical blocks up to ``number``. Needs the
        state of that block: a full (not archive) node keeps only recent ones and raises
        ChainError for older blocks."""
        ...

    def fee_quote(self) -> FeeQuote:
        """Fees that get a transaction into the next blocks at the current market."""
        ...

    def estimate_gas(self, sender: str, to: str, value: int, data: bytes) -> int: ...

    def send_raw_transaction(self, raw: bytes) -> str:
        """Hand a signed transaction to the chain; returns its hash. Raises TransactionRejected when
        the node refuses it and ChainError when it cannot be reached. Sending bytes that the chain
        already holds (pending or mined) is not an error: the same hash is returned."""
        ...

    def receipt(self, tx_hash: str) -> Receipt | None:
        """The receipt of a transaction included in the canonical chain, else None (pending,
        dropped or unknown)."""
        ...

    def native_transfers(self, number: int) -> list[NativeTransfer]:
        """Transactions of the canonical block ``number`` with a positive value."""
        ...

    def token_transfers(self, from_block: int, to_block: int, contracts: list[str]) -> list[TokenTransfer]:
        """ERC20 Transfer logs of ``contracts`` in canonical blocks from..to (inclusive)."""
        ...

    def account_transactions(self, sender: str, from_block: int, to_block: int) -> list[ChainTransaction]:
        """Transactions sent by ``sender`` in canonical blocks from..to (inclusive), in chain order."""
        ...
