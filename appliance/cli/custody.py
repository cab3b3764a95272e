"""`appliance custody init|encrypt|fingerprint` and `appliance chain faucet|compact`: the engine's
keys and its local chain."""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings

if TYPE_CHECKING:
    from appliance.engine.custody import CustodyKeys


def stdin_is_terminal() -> bool:
    """Whether a person can be asked (a function of this module, so tests can stand in for one)."""
    return sys.stdin is not None and sys.stdin.isatty()


def ask_passphrase(confirm: bool) -> str | None:
    """The custody passphrase typed on the terminal (hidden; twice when a key is being encrypted);
    None when standard input is not a terminal: nothing is ever read from a pipe."""
    if not stdin_is_terminal():
        return None
    return str(click.prompt("Custody passphrase", hide_input=True, confirmation_prompt=confirm, err=True))


def with_passphrase(settings: Settings) -> Settings:
    """``settings`` carrying the passphrase of an encrypted custody.key, asked on the terminal when
    neither APPLIANCE_CUSTODY_PASSPHRASE nor custody_passphrase_file gives it. Under `serve` only
    the signer's keeper calls it (keeper.py), so the passphrase never enters a serving process;
    `appliance signer` calls it for itself."""
    from appliance.engine.custody_file import file_is_encrypted, passphrase_of

    if settings.custody_key.strip() or not file_is_encrypted(settings.data_dir):
        return settings
    return settings.replace(custody_passphrase=passphrase_of(settings, ask_passphrase)())


def open_custody(settings: Settings) -> CustodyKeys | None:
    """The custody key for a command that signs (the passphrase asked on a terminal if need be),
    guarded like the signer's (the recorded fingerprint is checked at first use) and behind the
    signer's policy: a command signs only what the signer process would."""
    from appliance.engine.chain.registry import declared_assets
    from appliance.engine.custody_file import load_for
    from appliance.engine.custody_record import guard
    from appliance.engine.signer.core import LocalSigner

    custody = load_for(settings, ask_passphrase)
    if custody is None:
        return None
    custody.guard_with(guard)
    return LocalSigner(custody, declared_assets(settings), settings.signer_gas_cap_wei, settings.data_dir)


@click.group("custody")
def custody_group() -> None:
    """The engine's custody master key (custody.key in the data directory)."""


@custody_group.command("init")
@click.option(
    "--encrypt",
    is_flag=True,
    help="Encrypt the new key (age) under the passphrase of APPLIANCE_CUSTODY_PASSPHRASE, "
    "custody_passphrase_file, or typed on the terminal.",
)
@command_options
def custody_init(encrypt: bool, settings: Settings, as_json: bool) -> None:
    """Create custody.key (mode 0600) if it is absent; never overwrites one."""
    from appliance.engine.custody_file import create, file_is_encrypted, passphrase_of

    present = file_is_encrypted(settings.data_dir)
    passphrase = None
    if (present is None and encrypt) or present:  # a new key to encrypt, or an encrypted one to open
        passphrase = passphrase_of(settings, ask_passphrase, confirm=present is None)()
    created, fingerprint = create(settings.data_dir, passphrase)
    encrypted = bool(file_is_encrypted(settings.data_dir))
    result = {"created": created, "fingerprint": fingerprint, "encrypted": encrypted}
    if created:
        advice = (
            "Keep the passphrase apart from custody.key (a password manager, a sealed envelope): "
            "without it the key cannot be opened, and backups hold only the encrypted key."
            if encrypted
            else "custody.key is not encrypted: backups leave it out, so write the 24 words down "
            "and keep them safe, or run `appliance custody encrypt`."
        )
    elif encrypt and not encrypted:
        advice = "It is not encrypted: `appliance custody encrypt` encrypts it in place."
    else:
        advice = ""
    emit(
        as_json,
        result,
        f"custody key {'created' if created else 'already present (left as it was)'}"
        f"{' encrypted' if encrypted else ''}; fingerprint {fingerprint}\n" + advice,
    )


@custody_group.command("encrypt")
@command_options
def custody_encrypt(settings: Settings, as_json: bool) -> None:
    """Encrypt a plain custody.key in place (age under the custody passphrase; atomic, 0600)."""
    from appliance.engine.custody_file import encrypt_in_place, file_is_encrypted, passphrase_of

    confirm = file_is_encrypted(settings.data_dir) is False
    converted, fingerprint = encrypt_in_place(
        settings.data_dir, passphrase_of(settings, ask_passphrase, confirm=confirm)
    )
    result = {"converted": converted, "fingerprint": fingerprint, "encrypted": True}
    emit(
        as_json,
        result,
        (
            f"custody.key encrypted in place; fingerprint {fingerprint}\n"
            "Copies of the plain key made before (older backups, other hosts, the disk's free "
            "blocks) still hold the words: destroy them."
        )
        if converted
        else f"custody.key is already encrypted (left as it was); fingerprint {fingerprint}",
    )


@custody_group.command("fingerprint")
@command_options
def custody_fingerprint(settings: Settings, as_json: bool) -> None:
    """Print the custody key's BIP32 fingerprint (an encrypted key needs its passphrase)."""
    from appliance.engine.custody_file import load_for

    custody = load_for(settings, ask_passphrase)
    if custody is None:
        raise click.ClickException(
            f"there is no custody key in {settings.data_dir} (appliance custody init creates one)"
        )
    result = {"fingerprint": custody.fingerprint, "encrypted": custody.encrypted, "source": custody.source}
    emit(as_json, result, f"{custody.fingerprint} ({custody.source})")


@click.group("chain")
def chain_group() -> None:
    """The engine's chains."""


@chain_group.command("faucet")
@click.option("--chain-id", "chain_id", required=True, help="A chain of environment local (eth_local).")
@click.option("--asset", required=True, help="ETH or USDC.")
@click.option("--to", "to", required=True, help="The address to credit.")
@click.option("--amount", required=True, help="Minor units (wei for ETH, 10^-6 for USDC).")
@command_options
def chain_faucet(chain_id: str, asset: str, to: str, amount: str, settings: Settings, as_json: bool) -> None:
    """Credit ADDRESS with AMOUNT minor units of ASSET on a local chain; prints the including block."""
    from appliance.common.problems import ApiError
    from appliance.engine.chain.registry import LOCAL_CHAIN_ID, check_destination, eip55, open_local_chain

    if chain_id != LOCAL_CHAIN_ID:
        known = {c.id for c in settings.chains}
        why = "is not a local chain" if chain_id in known else "is not a chain of this deployment"
        raise click.ClickException(f"chain {chain_id} {why}: the faucet works on {LOCAL_CHAIN_ID} only")
    if not settings.local_chain:
        raise click.ClickException("the local chain is off on this deployment (local_chain = false)")
    if asset not in {"ETH", "USDC"}:
        raise click.ClickException(f"asset {asset} is not on {LOCAL_CHAIN_ID} (ETH, USDC)")
    if not re.fullmatch(r"[1-9][0-9]{0,77}", amount) or int(amount) >= 2**256:
        raise click.ClickException("--amount must be a positive whole number of minor units below 2^256")
    try:
        check_destination(to, "to")
    except ApiError as exc:
        raise click.ClickException(f"--to: {exc}") from None
    address = eip55(to)
    chain = open_local_chain(settings)
    try:
        tx_hash, height = chain.faucet(asset, address, int(amount))
    finally:
        chain.close()
    result = {"txHash": tx_hash, "blockHeight": str(height)}
    emit(as_json, result, f"credited {amount} {asset} minor units to {address} in block {height} ({tx_hash})")


@chain_group.command("compact")
@click.option(
    "--keep-recent",
    "keep_recent",
    type=click.IntRange(min=0),
    default=None,
    help="Leave the newest N blocks as they are (default 256).",
)
@command_options
def chain_compact(keep_recent: int | None, settings: Settings, as_json: bool) -> None:
    """Pack the headers of old empty blocks of eth_local and VACUUM its file (refused while serve runs)."""
    from appliance.engine.chain.local import KEEP_RECENT, ChainBusy
    from appliance.engine.chain.registry import local_chain_path, open_local_chain

    if not settings.local_chain:
        raise click.ClickException("the local chain is off on this deployment (local_chain = false)")
    if not local_chain_path(settings.data_dir).exists():
        raise click.ClickException(f"there is no local chain in {settings.data_dir}")
    chain = open_local_chain(settings)
    try:
        result = chain.compact(keep_recent=KEEP_RECENT if keep_recent is None else keep_recent)
    except ChainBusy as exc:
        raise click.ClickException(str(exc)) from None
    finally:
        chain.close()
    answer = {
        "headBlock": str(result["headBlock"]),
        "blocksPacked": result["blocksPacked"],
        "bytesBefore": result["bytesBefore"],
        "bytesAfter": result["bytesAfter"],
    }
    emit(
        as_json,
        answer,
        f"packed {answer['blocksPacked']} empty blocks below block {answer['headBlock']}: "
        f"{answer['bytesBefore']} bytes before, {answer['bytesAfter']} after",
    )


def register(group: click.Group) -> None:
    group.add_command(custody_group)
    group.add_command(chain_group)
