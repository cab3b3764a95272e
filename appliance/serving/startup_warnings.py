"""What serve warns about at start: links that open nowhere else or travel in the clear, and an
embedded chain on a shared engine database."""

from __future__ import annotations

from urllib.parse import urlsplit

from appliance.settings import Settings


def link_warnings(settings: Settings) -> list[str]:
    """What is wrong with the links this install e-mails and prints (sign-in, invites, tracking)."""
    url = urlsplit(settings.dispatch_public_url)
    # A link to loopback, or to the wildcard address the listener binds, opens nowhere else.
    loopback_link = (url.hostname or "") in {"127.0.0.1", "localhost", "::1", "0.0.0.0", "::"}
    loopback_bind = settings.host in {"127.0.0.1", "localhost", "::1"}
    warnings = []
    if loopback_link and not loopback_bind:
        warnings.append(
            f"links point at {settings.dispatch_public_url}, which only this machine can open (if any), "
            f"while the service listens on {settings.host}: set public_url to the address people reach"
        )
    if url.scheme != "https" and not (loopback_link and loopback_bind):
        warnings.append(
            f"links use {url.scheme}:// ({settings.dispatch_public_url}): sign-in links and tokens travel in "
            "the clear; serve behind TLS (docs/operations.md, reverse proxy) and set public_url to https://…"
        )
    return warnings


def deployment_warnings(settings: Settings) -> list[str]:
    """What is wrong with this node's place in a deployment of several."""
    warnings = []
    if settings.local_chain and not settings.engine_db_url.startswith("sqlite"):
        # An engine database on a server is how several nodes share one engine; the embedded
        # chain is a file of this host, so each node would run its own chain under one name.
        warnings.append(
            "the embedded chain eth_local is a file of this host, but the engine database is shared "
            "(PostgreSQL): with more than one node set local_chain = false on every node and reach the "
            "chains as [[chains]] JSON-RPC nodes (docs/operations.md, Several hosts)"
        )
    return warnings
