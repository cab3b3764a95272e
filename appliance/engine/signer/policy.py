"""What the signer signs: a pure function of the transaction asked for and the facts the signer
read from the database itself (facts.py), so that a serving process cannot talk it into anything.

- From the payout wallet (m/44'/60'/0'/0/0): the transfer of a stored payout (same chain,
  destination, amount and asset: the ETH value, or the ERC20 transfer call to the asset's contract),
  not cancelled or failed, its operator not paused, the operator's controls allowing it when it is
  first signed, and at the payout's own nonce once it has one; or a cancellation, a zero-value,
  data-less self-transfer (at a nonce the signer's journal holds: bounds.py).
- From the fee wallet (m/44'/60'/0'/0/1): gas, a data-less transfer of at most the cap, to the
  payout wallet or to the deposit address the signer derives itself at the (account >= 1, index)
  the request names (``recipient``): never to an address a database row names.
- From a deposit address's key (m/44'/60'/1+N'/0/I, derived by the signer: no row is needed): a
  sweep, whose only effect pays the payout wallet (an ETH transfer, or an ERC20 transfer call to a
  known asset's contract).

Everything else is refused with the reason (returned, and logged by the signer). The signer's own
state (signer.db: bounds.py) is asked after these rules.
"""

from __future__ import annotations

import dataclasses

from eth_utils import keccak, to_checksum_address

PAYOUT_WALLET = (0, 0)
FEE_WALLET = (0, 1)
TRANSFER_SELECTOR = keccak(text="transfer(address,uint256)")[:4]
TRANSFER_CALL_BYTES = 4 + 32 + 32
CLOSED = ("COMPLETED", "COMPLETED_SHORT", "FAILED")


@dataclasses.dataclass(frozen=True)
class Tx:
    """The fields of an EIP-1559 transaction that decide what it does."""

    network_id: int
    nonce: int
    to: str
    value: int
    data: bytes

    @classmethod
    def of(cls, tx: dict) -> Tx:
        data = tx.get("data", b"")
        if isinstance(data, str):
            data = bytes.fromhex(data.removeprefix("0x"))
        return cls(
            network_id=int(tx["chainId"]),
            nonce=int(tx["nonce"]),
            to=to_checksum_address(tx["to"]),
            value=int(tx.get("value", 0)),
            data=bytes(data),
        )


@dataclasses.dataclass(frozen=True)
class StoredPayout:
    """A payout as the database holds it, with what the signer read about its operator."""

    payout_id: str
    network_id: int | None  # of its chain; None when the chain is not configured here
    destination: str
    amount: int
    contract: str | None  # the ERC20 asset's contract; None for the chain's native asset
    status: str
    paused: bool
    nonce: int | None  # the nonce reserved for it (signed before); None before its first signature
    hold: str | None  # why the operator's controls hold it now (asked only before its first signature)
    operator_id: str = ""
    chain_id: str = ""
    asset: str = ""  # the asset's code on chain_id


@dataclasses.dataclass(frozen=True)
class Facts:
    payout_wallet: str
    fee_wallet: str
    networks: frozenset[int]  # network ids of the deployment's chains
    contracts: frozenset[str]  # ERC20 contracts of the deployment's assets on the tx's network
    payout: StoredPayout | None  # the stored payout the caller named, if any
    reserved_nonce: bool  # the engine stored a reservation of the payout wallet at the tx's nonce
    recipient_derived: bool  # the tx's recipient is the deposit address the signer derived at the named path
    gas_cap: int  # the most one gas transfer from the fee wallet may carry (wei)


def transfer_call(data: bytes) -> tuple[str, int] | None:
    """(recipient, amount) of an exact ERC20 transfer(address,uint256) call; None for anything else."""
    if len(data) != TRANSFER_CALL_BYTES or data[:4] != TRANSFER_SELECTOR or any(data[4:16]):
        return None
    return to_checksum_address(data[16:36]), int.from_bytes(data[36:68], "big")


def judge(account: int, index: int, tx: Tx, facts: Facts) -> str | None:
    """None when the key at (account, index) may sign ``tx``; else why not (one line)."""
    if tx.network_id not in facts.networks:
        return f"network {tx.network_id} is not a chain of this deployment"
    if (account, index) == PAYOUT_WALLET:
        return _payout_wallet(tx, facts)
    if (account, index) == FEE_WALLET:
        return _fee_wallet(tx, facts)
    if account >= 1:
        return _sweep(tx, facts)
    return f"the key m/44'/60'/{account}'/0/{index} signs nothing"


def _payout_wallet(tx: Tx, facts: Facts) -> str | None:
    if tx.to == facts.payout_wallet and tx.value == 0 and not tx.data:
        # A cancellation: signed only at a nonce the signer's journal holds (bounds.journal_refusal;
        # the engine's reservation counts only while the journal holds nothing of the wallet).
        return None
    payout = facts.payout
    if payout is None:
        return "no stored payout is named for this transfer from the payout wallet"
    if payout.status in CLOSED:
        return f"payout {payout.payout_id} is {payout.status}"
    if payout.paused:
        return f"the operator of payout {payout.payout_id} is paused"
    if payout.network_id != tx.network_id:
        return f"payout {payout.payout_id} is not on network {tx.network_id}"
    if payout.contract is None:
        if tx.data:
            return f"payout {payout.payout_id} pays the native asset: the transaction carries data"
        destination, amount = tx.to, tx.value
    else:
        if tx.to != payout.contract or tx.value != 0:
            return (
                f"payout {payout.payout_id} pays through its asset's contract {payout.contract}, not {tx.to}"
            )
        call = transfer_call(tx.data)
        if call is None:
            return f"payout {payout.payout_id}: the call is not an ERC20 transfer"
        destination, amount = call
    if destination != to_checksum_address(payout.destination):
        return f"payout {payout.payout_id} pays {payout.destination}, not {destination}"
    if amount != payout.amount:
        return f"payout {payout.payout_id} pays {payout.amount} minor units, not {amount}"
    if payout.nonce is not None and payout.nonce != tx.nonce:
        return f"payout {payout.payout_id} is signed at nonce {payout.nonce}, not {tx.nonce}"
    if payout.nonce is None and payout.hold is not None:
        return f"payout {payout.payout_id} is held: {payout.hold}"
    return None


def _fee_wallet(tx: Tx, facts: Facts) -> str | None:
    if tx.data:
        return "the fee wallet only sends gas: the transaction carries data"
    if tx.to != facts.payout_wallet and not facts.recipient_derived:
        return (
            f"the fee wallet sends gas only to the payout wallet or the deposit address the signer "
            f"derives at the named (account, index), not {tx.to}"
        )
    if tx.value > facts.gas_cap:
        return f"a gas transfer of {tx.value} wei is above the cap of {facts.gas_cap}"
    return None


def _sweep(tx: Tx, facts: Facts) -> str | None:
    # The source is the key at (account >= 1, index) by construction: whatever the database says of
    # it, a sweep moves custody's own funds to the payout wallet only.
    if not tx.data:
        if tx.to != facts.payout_wallet:
            return f"a sweep pays the payout wallet, not {tx.to}"
        return None
    call = transfer_call(tx.data)
    if tx.to not in facts.contracts or tx.value != 0 or call is None:
        return "a deposit address signs only an ETH transfer or a known token's transfer call"
    if call[0] != facts.payout_wallet:
        return f"a sweep pays the payout wallet, not {call[0]}"
    return None
