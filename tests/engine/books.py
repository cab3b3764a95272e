"""An anvil deployment with a permit token (EIP-2612 and EIP-3009), for the books tests: the
custody wallets' flows, solvency, and the soak. The permits are signed in the tests with the
custody key's own payout-wallet private key (what a leaked key, or a phished signature, allows)."""

from __future__ import annotations

import json
import secrets
from typing import Any

from eth_account import Account
from eth_account.messages import encode_typed_data
from eth_utils import to_checksum_address

from appliance.engine.chain.contracts import artifact as engine_artifact
from appliance.engine.db import database
from appliance.engine.treasury.reconcile import reconcile
from appliance.settings import Settings
from tests.engine.anvil import NETWORK_ID, Anvil
from tests.engine.contracts.compile import artifact
from tests.engine.pipeline_harness import (
    ETHER,
    FEE_WALLET,
    PAYOUT_WALLET,
    TEST_MNEMONIC,
    Harness,
    harness_settings,
    make_harness,
)
from tests.engine.test_deposits import watch

CHAIN = "eth_anvil"
MINTER = "0x00000000000000000000000000000000000a11ce"
THIEF = to_checksum_address("0x00000000000000000000000000000000000bad01")

Account.enable_unaudited_hdwallet_features()


def custody_account(path: str = "m/44'/60'/0'/0/0") -> Any:
    return Account.from_mnemonic(TEST_MNEMONIC, account_path=path)


def _word(value: int | str) -> str:
    if isinstance(value, str):
        return "00" * 12 + value[2:].lower()
    return f"{value:064x}"


class Books:
    def __init__(self, node: Anvil, usdc: str, ptt: str, harness: Harness, environ: dict[str, str]) -> None:
        self.node, self.usdc, self.ptt, self.harness, self.environ = node, usdc, ptt, harness, environ

    @property
    def runtime(self) -> Any:
        return self.harness.app.extensions["engine"]

    def send(self, sender: str, to: str, data: str = "0x", value: int = 0) -> str:
        self.node.rpc("anvil_impersonateAccount", sender)
        tx: dict[str, Any] = {"from": sender, "to": to, "data": data, "gas": hex(300_000)}
        if value:
            tx["value"] = hex(value)
        return str(self.node.rpc("eth_sendTransaction", tx))

    def mint(self, token: str, to: str, amount: int) -> str:
        return self.send(MINTER, token, "0x40c10f19" + _word(to) + _word(amount))

    def send_eth(self, to: str, wei: int) -> str:
        return self.send(MINTER, to, value=wei)

    def token_balance(self, token: str, address: str) -> int:
        data = "0x70a08231" + _word(address)
        return int(self.node.rpc("eth_call", {"to": token, "data": data}, "latest"), 16)

    def allowance(self, owner: str, spender: str) -> int:
        data = "0xdd62ed3e" + _word(owner) + _word(spender)
        return int(self.node.rpc("eth_call", {"to": self.ptt, "data": data}, "latest"), 16)

    def _domain(self) -> dict[str, Any]:
        return {
            "name": "Permit Test Token",
            "version": "1",
            "chainId": NETWORK_ID,
            "verifyingContract": self.ptt,
        }

    def permit(self, owner_key: Any, spender: str, amount: int) -> str:
        """A permit signed off chain with the owner's key and submitted by ``spender``."""
        nonce = int(
            self.node.rpc(
                "eth_call", {"to": self.ptt, "data": "0x7ecebe00" + _word(owner_key.address)}, "latest"
            ),
            16,
        )
        deadline = 2**40
        message = {
            "types": {
                "EIP712Domain": [
                    {"name": "name", "type": "string"},
                    {"name": "version", "type": "string"},
                    {"name": "chainId", "type": "uint256"},
                    {"name": "verifyingContract", "type": "address"},
                ],
                "Permit": [
                    {"name": "owner", "type": "address"},
                    {"name": "spender", "type": "address"},
                    {"name": "value", "type": "uint256"},
                    {"name": "nonce", "type": "uint256"},
                    {"name": "deadline", "type": "uint256"},
                ],
            },
            "primaryType": "Permit",
            "domain": self._domain(),
            "message": {
                "owner": owner_key.address,
                "spender": spender,
                "value": amount,
                "nonce": nonce,
                "deadline": deadline,
            },
        }
        signed = Account.sign_message(encode_typed_data(full_message=message), owner_key.key)
        data = (
            "0xd505accf"
            + _word(owner_key.address)
            + _word(spender)
            + _word(amount)
            + _word(deadline)
            + _word(signed.v)
            + _word(signed.r)
            + _word(signed.s)
        )
        return self.send(spender, self.ptt, data)

    def transfer_from(self, spender: str, owner: str, to: str, amount: int) -> str:
        return self.send(spender, self.ptt, "0x23b872dd" + _word(owner) + _word(to) + _word(amount))

    def transfer_with_authorization(self, owner_key: Any, sender: str, to: str, amount: int) -> str:
        nonce = "0x" + secrets.token_hex(32)
        message = {
            "types": {
                "EIP712Domain": [
                    {"name": "name", "type": "string"},
                    {"name": "version", "type": "string"},
                    {"name": "chainId", "type": "uint256"},
                    {"name": "verifyingContract", "type": "address"},
                ],
                "TransferWithAuthorization": [
                    {"name": "from", "type": "address"},
                    {"name": "to", "type": "address"},
                    {"name": "value", "type": "uint256"},
                    {"name": "validAfter", "type": "uint256"},
                    {"name": "validBefore", "type": "uint256"},
                    {"name": "nonce", "type": "bytes32"},
                ],
            },
            "primaryType": "TransferWithAuthorization",
            "domain": self._domain(),
            "message": {
                "from": owner_key.address,
                "to": to,
                "value": amount,
                "validAfter": 0,
                "validBefore": 2**40,
                "nonce": bytes.fromhex(nonce[2:]),
            },
        }
        signed = Account.sign_message(encode_typed_data(full_message=message), owner_key.key)
        data = (
            "0xe3ee160e"
            + _word(owner_key.address)
            + _word(to)
            + _word(amount)
            + _word(0)
            + _word(2**40)
            + nonce[2:]
            + _word(signed.v)
            + _word(signed.r)
            + _word(signed.s)
        )
        return self.send(sender, self.ptt, data)

    def reconcile(self) -> dict[str, Any]:
        with database.connection_context():
            return reconcile(self.runtime.chains, self.runtime.custody)

    def settle(self, blocks: int = 3) -> None:
        """Mine past the chain's confirmations, the watcher reading every block."""
        for _ in range(blocks):
            self.node.mine()
            watch(self.harness)


def chains_json(node: Anvil, usdc: str, ptt: str, ptt_decimals: int = 6, rpc_url: str | None = None) -> str:
    assets = [
        {"code": "ETH", "kind": "native", "decimals": 18, "confirmations": 2},
        {"code": "USDC", "kind": "ERC20", "decimals": 6, "confirmations": 2, "contract": usdc},
        {"code": "PTT", "kind": "ERC20", "decimals": ptt_decimals, "confirmations": 2, "contract": ptt},
    ]
    return json.dumps(
        [
            {
                "id": CHAIN,
                "rpc_url": rpc_url or node.url,
                "network_id": NETWORK_ID,
                "environment": "test",
                "assets": assets,
            }
        ]
    )


def make_books(
    settings: Settings,
    node: Anvil,
    *,
    ptt_decimals: int = 6,
    environ: dict[str, str] | None = None,
    rpc_url: str | None = None,
) -> Books:
    node.rpc("anvil_impersonateAccount", MINTER)
    node.set_balance(MINTER, 1000 * ETHER)
    node.set_balance(THIEF, ETHER)
    usdc = node.deploy(engine_artifact("usdc")["bytecode"], MINTER)
    ptt = node.deploy(artifact("permit_token")["bytecode"] + f"{ptt_decimals:064x}", MINTER)
    node.set_balance(PAYOUT_WALLET, 10 * ETHER)
    node.set_balance(FEE_WALLET, ETHER)
    env = {
        "APPLIANCE_LOCAL_CHAIN": "0",
        "APPLIANCE_CHAINS": chains_json(node, usdc, ptt, ptt_decimals, rpc_url),
        **(environ or {}),
    }
    harness = make_harness(harness_settings(settings, env), lambda app: node.mine())
    return Books(node, usdc, ptt, harness, env)
