"""The SSRF guard of webhook deliveries (issue 33): every special-purpose range and every IPv6
address that carries an IPv4 one is refused; ordinary public addresses pass."""

from __future__ import annotations

import pytest

from appliance.common import webhook_transport as transport
from appliance.common.addresses import embedded_ipv4, forbidden

REFUSED = {
    "NAT64 well-known prefix to loopback": "64:ff9b::7f00:1",
    "NAT64 well-known prefix to a public address": "64:ff9b::808:808",
    "NAT64 local-use prefix": "64:ff9b:1::a00:1",
    "6to4 carrying loopback": "2002:7f00:1::1",
    "6to4 carrying a public address": "2002:808:808::1",
    "IPv4-compatible loopback": "::127.0.0.1",
    "IPv4-compatible cloud metadata": "::169.254.169.254",
    "IPv4-compatible public address": "::8.8.8.8",
    "IPv4-mapped loopback": "::ffff:127.0.0.1",
    "IPv4-mapped public address": "::ffff:8.8.8.8",
    "IPv4-translated": "::ffff:0:7f00:1",
    "Teredo": "2001:0:4136:e378:8000:63bf:3fff:fdd2",
    "IETF protocol assignments 192.0.0.0/24": "192.0.0.1",
    "192.0.0.9 (PCP anycast, called global by Python)": "192.0.0.9",
    "192.0.0.10 (TURN anycast, called global by Python)": "192.0.0.10",
    "this network": "0.1.2.3",
    "private 10/8": "10.1.2.3",
    "shared address space": "100.64.0.1",
    "loopback": "127.0.0.1",
    "link-local and cloud metadata": "169.254.169.254",
    "private 172.16/12": "172.16.5.4",
    "documentation TEST-NET-1": "192.0.2.10",
    "AS112": "192.31.196.1",
    "AMT": "192.52.193.1",
    "6to4 relay anycast": "192.88.99.1",
    "private 192.168/16": "192.168.1.1",
    "direct delegation AS112": "192.175.48.1",
    "benchmarking": "198.18.0.1",
    "documentation TEST-NET-2": "198.51.100.1",
    "documentation TEST-NET-3": "203.0.113.1",
    "multicast": "224.0.0.1",
    "reserved": "240.0.0.1",
    "limited broadcast": "255.255.255.255",
    "IPv6 unspecified": "::",
    "IPv6 loopback": "::1",
    "discard-only": "100::1",
    "benchmarking IPv6": "2001:2::1",
    "ORCHIDv2": "2001:20::1",
    "documentation IPv6": "2001:db8::1",
    "documentation IPv6 3fff::/20": "3fff::1",
    "SRv6 SIDs": "5f00::1",
    "unique local": "fd00::1",
    "link-local IPv6 with a zone": "fe80::1%eth0",
    "site-local": "fec0::1",
    "IPv6 multicast": "ff02::1",
    "not an address at all": "localhost",
}

ALLOWED = {
    "public IPv4": "8.8.8.8",
    "public IPv4 next to 192.0.0.0/24": "192.0.1.1",
    "public IPv6": "2606:4700:4700::1111",
    "public IPv6 next to 6to4": "2003::1",
}


@pytest.mark.parametrize("address", REFUSED.values(), ids=REFUSED.keys())
def test_a_special_purpose_or_ipv4_carrying_address_is_refused(address: str) -> None:
    assert forbidden(address)
    assert transport.forbidden(address)


@pytest.mark.parametrize("address", ALLOWED.values(), ids=ALLOWED.keys())
def test_an_ordinary_public_address_passes(address: str) -> None:
    assert not forbidden(address)


@pytest.mark.parametrize(
    ("address", "inside"),
    [
        ("64:ff9b::7f00:1", "127.0.0.1"),
        ("2002:a00:1::", "10.0.0.1"),
        ("::ffff:169.254.169.254", "169.254.169.254"),
        ("::10.0.0.1", "10.0.0.1"),
        ("2001:0:4136:e378:8000:63bf:3fff:fdd2", "192.0.2.45"),
    ],
)
def test_the_ipv4_address_inside_a_translation_address_is_decoded(address: str, inside: str) -> None:
    import ipaddress

    assert str(embedded_ipv4(ipaddress.IPv6Address(address))) == inside


def test_a_host_resolving_to_a_nat64_address_is_refused_before_any_connection(monkeypatch) -> None:
    def getaddrinfo(host, port, type=0):
        return [(10, 1, 6, "", ("64:ff9b::a9fe:a9fe", port, 0, 0))]

    monkeypatch.setattr(transport.socket, "getaddrinfo", getaddrinfo)
    with pytest.raises(transport.Refused, match="non-public"):
        transport.resolve("hooks.example.com", 443, allow_private=False)
