"""Deposit and wallet addresses from account-level extended public keys (BIP32 xpub of
m/44'/60'/ACCOUNT'), for the processes that never hold the custody key: address INDEX of an account
is its xpub's child 0/INDEX, the same address the key derives at m/44'/60'/ACCOUNT'/0/INDEX
(appliance/engine/custody.py). A public key derives addresses and signs nothing."""

from __future__ import annotations

import functools

from bip_utils import Bip32Secp256k1, EthAddrEncoder

EXTERNAL_CHAIN = 0  # BIP44's change level: 0, the external chain, as Custody derives


@functools.lru_cache(maxsize=256)
def _account_node(xpub: str) -> Bip32Secp256k1:
    node = Bip32Secp256k1.FromExtendedKey(xpub)
    if not node.IsPublicOnly():  # an xprv here would put a private key in a serving process
        raise ValueError("an account key handed to a serving process must be public (xpub)")
    return node.ChildKey(EXTERNAL_CHAIN)


@functools.lru_cache(maxsize=8192)
def address_from_xpub(xpub: str, index: int) -> str:
    """The checksummed address at index ``index`` of the account whose xpub is ``xpub``."""
    key = _account_node(xpub).ChildKey(index).PublicKey().KeyObject()
    return str(EthAddrEncoder.EncodeKey(key))
