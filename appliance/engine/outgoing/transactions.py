"""Signing and storing the transactions the engine sends, one nonce reservation at a time.

A reservation is the pair (wallet, nonce), taken serially per wallet inside the same write
transaction that stores the signed bytes: after a crash the stored bytes are re-sent (or found on
chain); a payload is never signed at a second nonce while one at its nonce can still land. A fee
bump re-signs at the SAME nonce and is stored before it is sent; every payload ever signed at a
nonce is kept (SignedPayload), because any of them may be the one that lands.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
from collections.abc import Callable
from typing import Any

import rlp
from eth_account.typed_transactions import TypedTransaction
from eth_utils import keccak, to_checksum_address
from hexbytes import HexBytes

from appliance.common import clock
from appliance.common.db import locked
from appliance.engine.chain.base import Chain, ChainError, ChainTransaction, FeeQuote, Receipt
from appliance.engine.custody import CustodyKeys
from appliance.engine.instructions import SignedInstruction
from appliance.engine.models import Broadcast, SignedPayload, Wallet
from appliance.engine.outgoing import state

TRANSFER_SELECTOR = keccak(text="transfer(address,uint256)")[:4]
# The head recorded as "the wallet's nonces matched here" is taken this many blocks back: a
# load-balanced provider may answer the nonce from a node a few blocks behind the one that gave
# the head, and a later scan from there must not start past a transaction of the gap.
VERIFIED_MARGIN = 12


def erc20_transfer_data(to: str, amount: int) -> bytes:
    return (
        TRANSFER_SELECTOR
        + bytes(12)
        + bytes.fromhex(to_checksum_address(to)[2:])
        + amount.to_bytes(32, "big")
    )


def digest(raw: bytes) -> str:
    """signedPayloadDigest: SHA-256 of the signed bytes (the tx hash is keccak of the same bytes)."""
    return "sha256:" + hashlib.sha256(raw).hexdigest()


def tx_hash_of(raw: bytes) -> str:
    """The transaction hash of signed bytes (keccak-256), as the chain names it: 0x, lower case."""
    return "0x" + keccak(raw).hex()


# Signs one transaction dict; returns (raw bytes, 0x hash). Callers that must hold their own signing
# rules (the sweeps: appliance/engine/sweeps/signing.py) pass theirs; by default the custody key at
# the reservation's key path signs.
Sign = Callable[[dict[str, Any]], tuple[bytes, str]]


def _signer(
    custody: CustodyKeys,
    key_path: tuple[int, int],
    sign: Sign | None,
    payout_id: int | None,
    instruction: SignedInstruction | None = None,
) -> Sign:
    if sign is not None:
        return sign
    return lambda tx: custody.sign_transaction(*key_path, tx, payout_id=payout_id, instruction=instruction)


class NonceAhead(Exception):
    """The chain's nonce for the wallet is ahead of the engine's counter: the nonce fencing
    (outgoing.fencing) must account for the gap before anything is signed."""


def locked_wallet(chain_id: str, address: str) -> Wallet:
    """The wallet's row, created on its first use and locked until the transaction ends (inside a
    write transaction). Created with INSERT … ON CONFLICT DO NOTHING, then selected FOR UPDATE:
    two nodes using a wallet for the first time at once (its row not there yet, so FOR UPDATE
    locked nothing) both inserted it, and the second's reservation failed on the unique key. Now
    the second's insert waits for the first's commit, does nothing, and its select sees the row."""
    Wallet.insert(chain_id=chain_id, address=address, next_nonce=0).on_conflict_ignore().execute()
    wallet = locked(
        Wallet.select().where((Wallet.chain_id == chain_id) & (Wallet.address == address))
    ).first()
    assert wallet is not None  # inserted above, or by another transaction that committed it
    return wallet


def reserve_nonce(chain_id: str, address: str, chain_nonce: int, *, head: int | None = None) -> int:
    """Take the wallet's next nonce (inside a write transaction). ``chain_nonce`` is the chain's
    count of the wallet's mined transactions, read (and checked by the fencing) before the
    transaction. The counter never skips ahead of its own: a chain ahead of it means transactions
    this engine has no record of (a restored copy, the key used elsewhere), and signing over them
    would pay again what was paid (issue 29); that raises NonceAhead instead. ``head`` is recorded
    as the block at which the wallet's nonces were known to match."""
    wallet = locked_wallet(chain_id, address)
    if wallet.fence_reason:
        raise NonceAhead(wallet.fence_reason)
    if chain_nonce > int(wallet.next_nonce):
        raise NonceAhead(
            f"the chain's nonce {chain_nonce} of {address} is ahead of the engine's {wallet.next_nonce}"
        )
    nonce = int(wallet.next_nonce)
    changes: dict[str, Any] = {"next_nonce": nonce + 1}
    if head is not None and chain_nonce == nonce:
        changes["verified_block"] = head  # nothing of ours in flight: the chain agreed at this head
    Wallet.update(**changes).where(Wallet.id == wallet.id).execute()
    return nonce


def reserve(chain_id: str, address: str, chain_nonce: int, head: int) -> int:
    """reserve_nonce with ``head`` (the chain's head read before the transaction) recorded
    VERIFIED_MARGIN blocks back as the block where the wallet's nonces matched."""
    return reserve_nonce(chain_id, address, chain_nonce, head=max(0, head - VERIFIED_MARGIN))


@dataclasses.dataclass(frozen=True)
class Call:
    """What a reservation signs: the call and what it may pay for gas."""

    to: str
    value: int
    data: bytes
    gas: int
    fees: FeeQuote


def reserve_and_sign(
    custody: CustodyKeys,
    key_path: tuple[int, int],
    call: Call,
    chain: tuple[str, int],
    known: tuple[int, int],
    purpose: str,
    payout_id: int | None = None,
    sign: Sign | None = None,
    check: Callable[[], None] | None = None,
    instruction: SignedInstruction | None = None,
) -> Broadcast:
    """The one way a transaction is signed (inside the caller's write transaction): the wallet's
    next nonce is reserved (``known``: the chain's nonce and head read before, checked by the
    fencing), ``check`` runs under the wallet's lock (it raises to roll the reservation back),
    then the call is signed and stored. ``chain`` is (chain id, network id). ``instruction``: the
    operator's signed instruction of the payout, which the signer requires for an operator with a
    signing key (its fee bumps at the same nonce need none: the signer's journal holds the call)."""
    chain_nonce, head = known
    nonce = reserve(chain[0], custody.address(*key_path), chain_nonce, head)
    if check is not None:
        check()
    # payout_id names the stored payout the signer checks this transaction against (its policy).
    raw, tx_hash = _signer(custody, key_path, sign, payout_id, instruction)(
        _tx(chain[1], nonce, call.to, call.value, call.data, call.gas, call.fees)
    )
    origin = Origin(payout_id, purpose, chain[0], custody.address(*key_path), nonce)
    return store(origin, raw, tx_hash, call.fees, call.gas, "signed", head)


@dataclasses.dataclass(frozen=True)
class Origin:
    """Whose reservation a broadcast is: what it pays for, and the (chain, wallet, nonce)."""

    payout_id: int | None
    purpose: str
    chain_id: str
    wallet: str
    nonce: int


def _tx(
    network_id: int, nonce: int, to: str, value: int, data: bytes, gas: int, fees: FeeQuote
) -> dict[str, Any]:
    return {
        "type": 2,
        "chainId": network_id,
        "nonce": nonce,
        "to": to_checksum_address(to),
        "value": value,
        "data": data,
        "gas": gas,
        "maxFeePerGas": fees.max_fee_per_gas,
        "maxPriorityFeePerGas": fees.max_priority_fee_per_gas,
    }


def store(
    origin: Origin, raw: bytes, tx_hash: str, fees: FeeQuote, gas: int, status: str, signed_block: int | None
) -> Broadcast:
    """A new reservation with its first payload (inside the caller's write transaction): signed
    here, or found mined on chain by the fencing."""
    moment = clock.now()
    broadcast = Broadcast.create(
        payout=origin.payout_id,
        purpose=origin.purpose,
        chain_id=origin.chain_id,
        wallet=origin.wallet,
        nonce=origin.nonce,
        gas_limit=gas,
        status=status,
        signed_block=signed_block,
        created_at=moment,
        updated_at=moment,
        **_payload(raw, tx_hash, fees),
    )
    state.record(broadcast, None, moment)
    return _keep_payload(broadcast, moment)


def _payload(raw: bytes, tx_hash: str, fees: FeeQuote | PayloadFees) -> dict[str, str]:
    """The fields of a payload in force."""
    return {
        "raw": raw.hex(),
        "digest": digest(raw),
        "tx_hash": tx_hash,
        "max_fee_per_gas": str(fees.max_fee_per_gas),
        "max_priority_fee_per_gas": str(fees.max_priority_fee_per_gas),
    }


def _keep_payload(broadcast: Broadcast, moment: Any) -> Broadcast:
    """Every payload ever signed at a reservation is kept (append-only): any of them may land."""
    SignedPayload.create(
        broadcast=broadcast,
        tx_hash=broadcast.tx_hash,
        digest=broadcast.digest,
        raw=broadcast.raw,
        max_fee_per_gas=broadcast.max_fee_per_gas,
        created_at=moment,
    )
    return broadcast


def adopt(broadcast: Broadcast, raw: bytes, tx_hash: str) -> Broadcast:
    """Make bytes found mined at the reservation's nonce (the same call, signed by another copy of
    the data directory) its payload in force (inside the caller's write transaction)."""
    fees = fees_of(raw)
    _in_force(broadcast, "mined", raw, tx_hash, fees)
    return _keep_payload(broadcast, broadcast.updated_at)


def _in_force(
    broadcast: Broadcast, status: str, raw: bytes, tx_hash: str, fees: FeeQuote | PayloadFees
) -> None:
    """Make ``raw`` the reservation's payload in force, moving it to ``status``."""
    state.transition(broadcast, status, **_payload(raw, tx_hash, fees))


def replace(
    custody: CustodyKeys,
    key_path: tuple[int, int],
    broadcast: Broadcast,
    network_id: int,
    to: str,
    value: int,
    data: bytes,
    fees: FeeQuote,
    sign: Sign | None = None,
) -> Broadcast:
    """Re-sign the reservation's transaction at the same nonce with ``fees`` and make it the
    payload in force (inside the caller's write transaction)."""
    raw, tx_hash = _signer(custody, key_path, sign, broadcast.payout_id)(
        _tx(network_id, int(broadcast.nonce), to, value, data, int(broadcast.gas_limit), fees)
    )
    _in_force(broadcast, "signed", raw, tx_hash, fees)
    return _keep_payload(broadcast, broadcast.updated_at)


# From this many payloads at one nonce, the wallet's nonce is asked before their receipts.
NONCE_FIRST_FROM = 2


def mined_payload(chain: Chain, broadcast: Broadcast) -> Receipt | None:
    """The receipt of whichever payload signed at the reservation is in the canonical chain (the
    payload in force first), or None. A payout replaced many times over a fee spike has a payload
    per replacement: while the wallet's mined nonce has not passed the reservation's, none of them
    can be mined, and one question answers for all (instead of a receipt look-up per payload on
    every poll, each a call to a provider that may count or limit them)."""
    hashes = [broadcast.tx_hash] + [
        p.tx_hash
        for p in SignedPayload.select(SignedPayload.tx_hash).where(SignedPayload.broadcast == broadcast.id)
        if p.tx_hash != broadcast.tx_hash
    ]
    if len(hashes) > NONCE_FIRST_FROM and chain.nonce(broadcast.wallet) <= int(broadcast.nonce):
        return None
    for tx_hash in hashes:
        receipt = chain.receipt(tx_hash)
        if receipt is not None:
            return receipt
    return None


# Blocks below the head whose state any node keeps (geth's full node: 128); older blocks' state
# only an archive node has.
RECENT_STATE_BLOCKS = 64


def transaction_at_nonce(
    chain: Chain, wallet: str, nonce: int, start: int, head: int
) -> ChainTransaction | None:
    """The wallet's transaction at ``nonce`` in canonical blocks ``start``..``head``, or None
    (not there: a node behind). Its block is found by bisection over the wallet's nonce at a
    block (about log2 of the range calls) and only that block is read. A node without the state
    of the blocks it needs (a full node keeps only recent ones) is read block by block, as
    before: a call per block, thousands for a payout signed a day ago."""
    low = max(0, start)
    try:
        block = _block_using(chain, wallet, nonce, low, head)
        if block is None:
            return None
        blocks = (block, block)
    except ChainError:  # no state of an older block on this node
        blocks = (low, head)
    found = [tx for tx in chain.account_transactions(wallet, *blocks) if tx.nonce == nonce]
    return found[0] if found else None


def _block_using(chain: Chain, wallet: str, nonce: int, low: int, high: int) -> int | None:
    """The first block in low..high after which the wallet's nonce passes ``nonce`` (the block
    holding its transaction at ``nonce``), or None when it is not in that range. The recent
    blocks are tried first: every node keeps their state, and a transaction looked up because
    a send met "nonce too low" is most often among them."""
    if chain.nonce_at(wallet, high) <= nonce:
        return None  # not used by the head, as far as this node knows
    recent = max(low, high - RECENT_STATE_BLOCKS)
    if recent > low and chain.nonce_at(wallet, recent - 1) <= nonce:
        low = recent
    elif low > 0 and chain.nonce_at(wallet, low - 1) > nonce:
        return None  # used before ``low``
    while low < high:
        middle = (low + high) // 2
        if chain.nonce_at(wallet, middle) > nonce:
            high = middle
        else:
            low = middle + 1
    return low


@dataclasses.dataclass(frozen=True)
class PayloadFees:
    max_fee_per_gas: int
    max_priority_fee_per_gas: int
    gas: int


def fees_of(raw: bytes) -> PayloadFees:
    """Fee fields and gas limit of signed bytes found on chain (EIP-1559, or a legacy gas price)."""
    tx = TypedTransaction.from_bytes(HexBytes(raw)).as_dict() if raw[:1] in (b"\x01", b"\x02") else None
    if tx is None:
        fields = rlp.decode(raw)  # legacy: nonce, gasPrice, gas, to, value, data, v, r, s
        price, gas = int.from_bytes(fields[1], "big"), int.from_bytes(fields[2], "big")
        return PayloadFees(price, price, gas)
    price = int(tx.get("maxFeePerGas", tx.get("gasPrice", 0)))
    return PayloadFees(price, int(tx.get("maxPriorityFeePerGas", price)), int(tx["gas"]))


def is_cancel(raw_hex: str, wallet: str) -> bool:
    """Whether signed bytes are a cancellation: a zero-value, data-less transfer from the payout
    wallet to itself (no payout is one: amounts are positive, token calls carry data)."""
    to, value, data = _decode_raw(raw_hex)
    return to.lower() == wallet.lower() and value == 0 and not data


def decode_call(broadcast: Broadcast) -> tuple[str, int, bytes]:
    """(to, value, data) of the payload in force, read back from the stored bytes."""
    return _decode_raw(broadcast.raw)


def decode_raw(raw_hex: str) -> tuple[str, int, bytes]:
    """(to, value, data) of signed bytes given in hex (a stored payload's ``raw``)."""
    return _decode_raw(raw_hex)


@functools.lru_cache(maxsize=8192)
def _decode_raw(raw_hex: str) -> tuple[str, int, bytes]:
    # Memoised on the bytes themselves: the in-flight sum reads every unfinished payload on each
    # preparation, and decoding dominated it with a thousand payouts in flight.
    tx = TypedTransaction.from_bytes(HexBytes(bytes.fromhex(raw_hex))).as_dict()
    return to_checksum_address(tx["to"]), int(tx["value"]), bytes(tx["data"])
