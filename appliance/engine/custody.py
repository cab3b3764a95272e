"""The custody master key and the wallets derived from it (BIP39 → BIP32 → BIP44, coin 60).

The key is a BIP39 mnemonic of 24 English words, kept in ``<data_dir>/custody.key`` (mode 0600,
created only by ``appliance custody init``, never overwritten) or given in ``APPLIANCE_CUSTODY_KEY``.
custody.key is either the words in plain text or the words encrypted with age under a passphrase
(``custody init --encrypt``, ``custody encrypt``; appliance/engine/custody_file.py opens it). The
key never enters a database; its BIP32 fingerprint does, at first use, and a process holding another
key refuses to derive or sign (appliance/engine/custody_record.py). Derivation paths
(m/44'/60'/ACCOUNT'/0/INDEX):

- account 0, index 0: the payout wallet (sends every payout);
- account 0, index 1: the fee wallet (keeps the payout wallet's gas funded);
- account 1 + N, index I: deposit address I of the operator whose custody account number is N.

Private keys are derived when a transaction is signed and dropped right after; nothing here logs
or returns one. Derivation is memoised by public address only.
"""

from __future__ import annotations

import abc
import dataclasses
import functools
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

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

if TYPE_CHECKING:
    from appliance.engine.instructions import SignedInstruction

PAYOUT_WALLET = (0, 0)
FEE_WALLET = (0, 1)


class CustodyError(Exception):
    pass


class CustodyRefused(CustodyError):
    """This key is not the deployment's (its fingerprint differs from the one recorded)."""


# The answer to an operator (HTTP 503) on a node whose key is not the deployment's; the reason with
# both fingerprints is for the administrator (health, the log).
KEY_REFUSED = (
    "This node's custody key is not the deployment's: it derives no address and signs nothing "
    "(its health check says why); try again later."
)

# The answer (HTTP 503) when the signer process holding the key does not answer (restarting).
SIGNER_SILENT = (
    "The engine's signer does not answer right now: nothing can be derived or signed; try again shortly."
)

# Where a key came from: custody.key encrypted, custody.key in plain text, APPLIANCE_CUSTODY_KEY.
ENCRYPTED, PLAIN_FILE, ENVIRONMENT = "encrypted", "plain file", "environment"

# Given the key's fingerprint: None when the deployment accepts it, else why not (one line).
Guard = Callable[[str], "str | None"]


@dataclasses.dataclass(frozen=True)
class Grounds:
    """What the signer's policy judges a transaction by: the payout it pays, the deposit address
    (account, index) a gas top-up funds, the operator's signed instruction. The bare key (Custody)
    takes no notice of it."""

    payout_id: int | None = None
    recipient: tuple[int, int] | None = None
    instruction: SignedInstruction | None = None


class CustodyKeys(abc.ABC):
    """What the engine's code asks of custody: the key itself in one process (Custody, or
    LocalSigner applying the signer's policy), or a client of the signer process that holds it
    (appliance/engine/signer/): addresses from public keys, signatures through the signer.
    Each of them says how it derives and signs; what follows from that is here, once."""

    @property
    @abc.abstractmethod
    def fingerprint(self) -> str: ...

    @property
    @abc.abstractmethod
    def source(self) -> str: ...

    @property
    def encrypted(self) -> bool:
        return self.source == ENCRYPTED

    @abc.abstractmethod
    def verify(self) -> str | None:
        """Why nothing may be derived or signed now (the key refused, the signer silent), or None."""

    def _usable(self) -> None:
        refusal = self.verify()
        if refusal is not None:
            raise CustodyRefused(refusal)

    @abc.abstractmethod
    def address(self, account: int, index: int) -> str: ...

    def sign_transaction(
        self,
        account: int,
        index: int,
        tx: dict,
        *,
        payout_id: int | None = None,
        recipient: tuple[int, int] | None = None,
        instruction: SignedInstruction | None = None,
    ) -> tuple[bytes, str]:
        """Sign ``tx`` (an eth-account transaction dict) with the key at (account, index); returns
        (raw bytes, 0x hash)."""
        return self._sign(account, index, tx, Grounds(payout_id, recipient, instruction))

    @abc.abstractmethod
    def _sign(self, account: int, index: int, tx: dict, grounds: Grounds) -> tuple[bytes, str]: ...

    @property
    def payout_address(self) -> str:
        return self.address(*PAYOUT_WALLET)

    @property
    def fee_address(self) -> str:
        return self.address(*FEE_WALLET)


class Custody(CustodyKeys):
    """The master seed of one deployment. Holds the seed in memory (needed to derive keys to sign)
    and never exposes it. With a guard, the first derivation or signature asks it whether this key
    is the deployment's; once refused, every derivation and signature raises CustodyRefused."""

    def __init__(self, mnemonic: str, *, source: str = PLAIN_FILE) -> None:
        words = " ".join(mnemonic.split())
        if not Bip39MnemonicValidator().IsValid(words):
            raise CustodyError("the custody key is not a valid BIP39 mnemonic")
        self._seed = Bip39SeedGenerator(words).Generate()
        self._fingerprint = Bip32Secp256k1.FromSeed(self._seed).FingerPrint().ToHex()
        self._source = source
        self.refusal: str | None = None
        self._guard: Guard | None = None
        self._verified = False

    def __repr__(self) -> str:  # never print key material, even by accident
        return f"Custody(fingerprint={self.fingerprint})"

    @property
    def fingerprint(self) -> str:
        return self._fingerprint

    @property
    def source(self) -> str:
        return self._source

    def guard_with(self, guard: Guard) -> None:
        self._guard, self._verified, self.refusal = guard, False, None

    def verify(self) -> str | None:
        """Ask the guard once (it records the fingerprint where none is yet); the refusal or None.
        A guard that raises (no database yet) is asked again next time."""
        if not self._verified and self._guard is not None:
            self.refusal = self._guard(self.fingerprint)
            self._verified = True
        return self.refusal

    def _node(self, account: int, index: int) -> Bip44:
        return (
            Bip44.FromSeed(self._seed, Bip44Coins.ETHEREUM)
            .Purpose()
            .Coin()
            .Account(account)
            .Change(Bip44Changes.CHAIN_EXT)
            .AddressIndex(index)
        )

    def address(self, account: int, index: int) -> str:
        """The checksummed address at m/44'/60'/account'/0/index."""
        self._usable()
        return self._address(account, index)

    @functools.lru_cache(maxsize=4096)  # noqa: B019 - lives as long as the deployment's Custody
    def _address(self, account: int, index: int) -> str:
        return str(self._node(account, index).PublicKey().ToAddress())

    def account_xpub(self, account: int) -> str:
        """The extended public key of m/44'/60'/account' (BIP32 xpub): whoever holds it derives
        the account's addresses (appliance/engine/custody_public.py) and can sign nothing."""
        self._usable()
        return str(
            Bip44.FromSeed(self._seed, Bip44Coins.ETHEREUM)
            .Purpose()
            .Coin()
            .Account(account)
            .PublicKey()
            .ToExtended()
        )

    def _sign(self, account: int, index: int, tx: dict, grounds: Grounds) -> tuple[bytes, str]:
        """The private key lives only inside this call. No policy here (``grounds`` is the
        signer's): the signer applies it before it calls this."""
        self._usable()
        key = self._node(account, index).PrivateKey().Raw().ToBytes()
        signed = Account.sign_transaction(tx, key)
        del key
        return bytes(signed.raw_transaction), "0x" + bytes(signed.hash).hex()


def new_mnemonic() -> str:
    return Bip39MnemonicGenerator().FromWordsNumber(Bip39WordsNum.WORDS_NUM_24).ToStr()


# -- the key file: appliance/engine/custody_file.py reads and writes it (and depends on this module,
# never the other way round); its name is here for the callers that only name it ----------------

CUSTODY_FILE = "custody.key"


def custody_path(data_dir: Path) -> Path:
    return Path(data_dir) / CUSTODY_FILE
