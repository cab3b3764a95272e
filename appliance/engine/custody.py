"""The custody master key and the wallets derived from it (BIP39 → BIP32 → BIP44, coin 60).

The key is a BIP39 mnemonic of 24 English words, kept in ``<data_dir>/custody.key`` (mode 0600,
created only by ``appliance custody init``, never overwritten) or given in ``APPLIANCE_CUSTODY_KEY``.
It never enters a database. Derivation paths (m/44'/60'/ACCOUNT'/0/INDEX):

- account 0, index 0: the payout wallet (sends every payout);
- account 0, index 1: the fee wallet (keeps the payout wallet's gas funded);
- account 1 + N, index I: deposit address I of the operator whose custody account number is N.

Private keys are derived when a transaction is signed and dropped right after; nothing here logs
or returns one. Derivation is memoised by public address only.
"""

from __future__ import annotations

import functools
import os
from pathlib import Path

from bip_utils import (
    Bip32Secp256k1,
    Bip39MnemonicGenerator,
    Bip39MnemonicValidator,
    Bip39SeedGenerator,
    Bip39WordsNum,
    Bip44,
    Bip44Changes,
    Bip44Coins,
)
from eth_account import Account

CUSTODY_FILE = "custody.key"
PAYOUT_WALLET = (0, 0)
FEE_WALLET = (0, 1)


class CustodyError(Exception):
    pass


class Custody:
    """The master seed of one deployment. Holds the seed in memory (needed to derive keys to sign)
    and never exposes it."""

    def __init__(self, mnemonic: str) -> None:
        words = " ".join(mnemonic.split())
        if not Bip39MnemonicValidator().IsValid(words):
            raise CustodyError("the custody key is not a valid BIP39 mnemonic")
        self._seed = Bip39SeedGenerator(words).Generate()
        self.fingerprint = Bip32Secp256k1.FromSeed(self._seed).FingerPrint().ToHex()

    def __repr__(self) -> str:  # never print key material, even by accident
        return f"Custody(fingerprint={self.fingerprint})"

    def _node(self, account: int, index: int) -> Bip44:
        return (
            Bip44.FromSeed(self._seed, Bip44Coins.ETHEREUM)
            .Purpose()
            .Coin()
            .Account(account)
            .Change(Bip44Changes.CHAIN_EXT)
            .AddressIndex(index)
        )

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - lives as long as the deployment's Custody
    def address(self, account: int, index: int) -> str:
        """The checksummed address at m/44'/60'/account'/0/index."""
        return str(self._node(account, index).PublicKey().ToAddress())

    def sign_transaction(self, account: int, index: int, tx: dict) -> tuple[bytes, str]:
        """Sign ``tx`` (an eth-account transaction dict) with the key at (account, index);
        returns (raw bytes, 0x hash). The private key lives only inside this call."""
        key = self._node(account, index).PrivateKey().Raw().ToBytes()
        signed = Account.sign_transaction(tx, key)
        del key
        return bytes(signed.raw_transaction), "0x" + bytes(signed.hash).hex()

    @property
    def payout_address(self) -> str:
        return self.address(*PAYOUT_WALLET)

    @property
    def fee_address(self) -> str:
        return self.address(*FEE_WALLET)


def custody_path(data_dir: Path) -> Path:
    return Path(data_dir) / CUSTODY_FILE


def create_custody_key(data_dir: Path) -> tuple[bool, str]:
    """Create custody.key if absent (mode 0600, never overwritten); returns (created, fingerprint)."""
    path = custody_path(data_dir)
    if path.exists():
        return False, load_custody(data_dir, "").fingerprint  # type: ignore[union-attr]
    path.parent.mkdir(parents=True, exist_ok=True)
    mnemonic = Bip39MnemonicGenerator().FromWordsNumber(Bip39WordsNum.WORDS_NUM_24).ToStr()
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    except FileExistsError:  # another process created it meanwhile: keep theirs
        return False, load_custody(data_dir, "").fingerprint  # type: ignore[union-attr]
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        handle.write(mnemonic + "\n")
        handle.flush()
        os.fsync(handle.fileno())
    return True, Custody(mnemonic).fingerprint


def load_custody(data_dir: Path, from_environment: str) -> Custody | None:
    """The deployment's custody key: APPLIANCE_CUSTODY_KEY, else custody.key, else None (the engine
    still starts; payouts wait and deposit addresses answer 503)."""
    if from_environment.strip():
        return Custody(from_environment)
    path = custody_path(data_dir)
    if not path.is_file():
        return None
    return Custody(path.read_text(encoding="utf-8"))
