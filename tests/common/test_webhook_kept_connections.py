"""Kept HTTPS connections to webhook receivers (common/webhook_transport.KeptConnections), against
a real TLS receiver on loopback: one handshake for many deliveries, and the SSRF check on every
connection actually made."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from pathlib import Path

import pytest

from appliance.common import webhook_transport as transport
from appliance.common.addresses import forbidden
from tests.engine.tls_receiver import Receiver, tls_receiver

PRIVATE = "10.0.0.7"


@pytest.fixture
def receiver(tmp_path: Path) -> Iterator[Receiver]:
    with tls_receiver(tmp_path) as running:
        yield running


@pytest.fixture
def names(monkeypatch: pytest.MonkeyPatch) -> dict[str, str]:
    """The resolver, for names in this dict (host -> address); every other name as usual. The
    receiver's loopback address counts as public here (it stands for a receiver on the internet);
    every other address is judged by the real guard (10.0.0.7 is private)."""
    table: dict[str, str] = {}
    real = socket.getaddrinfo

    def getaddrinfo(host, port, *args, **kwargs):
        if host in table:
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (table[host], port))]
        return real(host, port, *args, **kwargs)

    monkeypatch.setattr(transport.socket, "getaddrinfo", getaddrinfo)
    monkeypatch.setattr(transport, "forbidden", lambda address: address != "127.0.0.1" and forbidden(address))
    return table


def post(connections: transport.KeptConnections, receiver: Receiver, n: int) -> str | None:
    return connections.attempt("endpoint-1", receiver.url, b'{"n": %d}' % n, {"x-n": str(n)})


def test_deliveries_to_one_receiver_share_one_tls_connection(receiver: Receiver) -> None:
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=True)
    assert [post(connections, receiver, n) for n in range(20)] == [None] * 20
    assert len(receiver.received) == 20
    assert receiver.connections == 1 and connections.opened == 1


def test_a_connection_the_receiver_closes_is_replaced_and_the_certificate_is_still_verified(
    receiver: Receiver,
) -> None:
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=True)
    receiver.answers.extend([200, "close"])
    assert [post(connections, receiver, n) for n in range(4)] == [None] * 4
    assert receiver.connections == 2  # a new one after the receiver's "Connection: close"
    unknown_ca = transport.KeptConnections(ca_file="", allow_private=True)
    assert "CERTIFICATE_VERIFY_FAILED" in (post(unknown_ca, receiver, 5) or "")
    assert len(receiver.received) == 4


def test_a_name_that_later_resolves_to_a_private_address_is_refused_on_reconnecting_a_kept_pool(
    receiver: Receiver, names: dict[str, str]
) -> None:
    names["localhost"] = "127.0.0.1"
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=False)
    receiver.answers.extend([200, 200, "close"])  # the receiver ends the kept connection
    assert [post(connections, receiver, n) for n in range(3)] == [None] * 3
    assert receiver.connections == 1
    names["localhost"] = PRIVATE  # DNS now points the receiver's name inside the network
    error = post(connections, receiver, 3)
    assert error is not None and "non-public" in error
    assert PRIVATE not in error  # the refusal does not tell where the name points (issue 41)
    assert len(receiver.received) == 3 and receiver.connections == 1  # nothing reached anyone


def test_a_kept_connection_is_not_reused_past_its_age_so_a_changed_name_is_checked_again(
    receiver: Receiver, names: dict[str, str], monkeypatch: pytest.MonkeyPatch
) -> None:
    names["localhost"] = "127.0.0.1"
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=False)
    assert post(connections, receiver, 0) is None  # the connection is kept, open
    names["localhost"] = PRIVATE
    monkeypatch.setattr(transport, "REUSE_SECONDS", 0.0)  # it has now been open too long
    error = post(connections, receiver, 1)
    assert error is not None and "non-public" in error
    assert len(receiver.received) == 1


def test_an_attempt_on_a_kept_connection_is_bounded_and_its_connection_not_reused(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(transport, "TIMEOUT_SECONDS", 3)  # a handshake fits on a busy machine
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=True)
    receiver.answers.extend([200, "hang:6"])
    assert post(connections, receiver, 0) is None
    assert post(connections, receiver, 1) == "AttemptTimeout: no answer within 3 s"
    assert post(connections, receiver, 2) is None
    assert receiver.connections == 2  # the timed-out connection was closed, not kept


def test_a_socket_timeout_before_the_watchdog_is_the_same_attempt_timeout(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each socket timeout is what is left of the attempt: on a loaded machine it can fire before
    the watchdog does, and the attempt then ends the same way (CI saw both orders)."""
    monkeypatch.setattr(transport, "TIMEOUT_SECONDS", 1)
    monkeypatch.setattr(transport._watchdog, "arm", lambda deadline, action: [action])  # never fires
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=True)
    receiver.answers.extend(["hang:2"])
    assert post(connections, receiver, 0) == "AttemptTimeout: no answer within 1 s"


def test_idle_connections_past_their_age_are_closed_not_kept_for_good(
    receiver: Receiver, monkeypatch: pytest.MonkeyPatch
) -> None:
    connections = transport.KeptConnections(ca_file=str(receiver.ca_file), allow_private=True)
    assert post(connections, receiver, 0) is None
    [[kept]] = connections._idle.values()
    monkeypatch.setattr(transport, "REUSE_SECONDS", 0.0)
    # Any later delivery, here to another endpoint, closes the first endpoint's idle connection.
    assert connections.attempt("endpoint-2", receiver.url, b"{}", {}) is None
    assert kept.sock is None
    assert [key[0] for key in connections._idle] == ["endpoint-2"]
