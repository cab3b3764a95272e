"""`appliance custody init` and `appliance chain faucet`: the engine's keys and its local chain."""

from __future__ import annotations

import re

import click

from appliance.cli._options import command_options, emit
from appliance.settings import Settings


@click.group("custody")
def custody_group() -> None:
    """The engine's custody master key (custody.key in the data directory)."""


@custody_group.command("init")
@command_options
def custody_init(settings: Settings, as_json: bool) -> None:
    """Create custody.key (mode 0600) if it is absent; never overwrites one."""
    from appliance.engine.custody import CustodyError, create_custody_key

    try:
        created, fingerprint = create_custody_key(settings.data_dir)
    except CustodyError as exc:
        raise click.ClickException(str(exc)) from None
    result = {"created": created, "fingerprint": fingerprint}
    emit(
        as_json,
        result,
        f"custody key {'created' if created else 'already present (left as it was)'}; "
        f"fingerprint {fingerprint}\n"
        + ("Back up custody.key: every wallet and deposit address is derived from it." if created else ""),
    )


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
    from appliance.engine.chain.registry import LOCAL_CHAIN_ID, check_destination, open_local_chain

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
        address = check_destination(to, "to")
    except ApiError as exc:
        raise click.ClickException(f"--to: {exc}") from None
    chain = open_local_chain(settings)
    try:
        tx_hash, height = chain.faucet(asset, address, int(amount))
    finally:
        chain.close()
    result = {"txHash": tx_hash, "blockHeight": str(height)}
    emit(as_json, result, f"credited {amount} {asset} minor units to {address} in block {height} ({tx_hash})")


def register(group: click.Group) -> None:
    group.add_command(custody_group)
    group.add_command(chain_group)
