"""Which network addresses a server-side request may reach (the SSRF guard of webhook deliveries
and of the dispatch companies' SMPP providers).

Only ordinary public unicast addresses pass. Refused:

- everything Python's ``ipaddress`` does not call global, and multicast;
- every range of the IANA special-purpose registries, even those it marks as globally reachable
  (``192.0.0.0/24`` as a whole, AS112, AMT, the 6to4 relay anycast, benchmarking, ORCHID,
  documentation, SRv6 SIDs): no operator's receiver lives there;
- every IPv6 address that carries or reaches an IPv4 address: IPv4-mapped ``::ffff:a.b.c.d``,
  IPv4-compatible ``::a.b.c.d``, IPv4/IPv6 translation ``::ffff:0:a.b.c.d``, NAT64
  ``64:ff9b::/96`` and ``64:ff9b:1::/48``, 6to4 ``2002::/16`` and Teredo ``2001::/32``. A gateway
  on the path would turn them into a connection to the IPv4 address inside (``64:ff9b::7f00:1`` is
  127.0.0.1 behind a NAT64), so they are refused outright, whatever that address is.
"""

from __future__ import annotations

import ipaddress
import socket
from collections.abc import Callable
from functools import lru_cache

IPv4 = ipaddress.IPv4Network
IPv6 = ipaddress.IPv6Network

# IANA IPv4 Special-Purpose Address Registry, plus multicast and the limited broadcast.
SPECIAL_IPV4 = tuple(
    IPv4(net)
    for net in (
        "0.0.0.0/8",
        "10.0.0.0/8",
        "100.64.0.0/10",
        "127.0.0.0/8",
        "169.254.0.0/16",
        "172.16.0.0/12",
        "192.0.0.0/24",
        "192.0.2.0/24",
        "192.31.196.0/24",
        "192.52.193.0/24",
        "192.88.99.0/24",
        "192.168.0.0/16",
        "192.175.48.0/24",
        "198.18.0.0/15",
        "198.51.100.0/24",
        "203.0.113.0/24",
        "224.0.0.0/4",
        "240.0.0.0/4",
    )
)

# IPv6 ranges that embed or reach an IPv4 address.
IPV4_CARRYING = tuple(
    IPv6(net)
    for net in (
        "::/96",  # IPv4-compatible (deprecated), and :: and ::1 with it
        "::ffff:0:0/96",  # IPv4-mapped
        "::ffff:0:0:0/96",  # IPv4-translated (SIIT)
        "64:ff9b::/96",  # NAT64 well-known prefix
        "64:ff9b:1::/48",  # NAT64 local-use prefixes
        "2001::/32",  # Teredo
        "2002::/16",  # 6to4
    )
)

# IANA IPv6 Special-Purpose Address Registry (the rest of it), multicast and the old site-local.
SPECIAL_IPV6 = IPV4_CARRYING + tuple(
    IPv6(net)
    for net in (
        "100::/64",
        "2001::/23",
        "2001:db8::/32",
        "3fff::/20",
        "5f00::/16",
        "fc00::/7",
        "fe80::/10",
        "fec0::/10",
        "ff00::/8",
    )
)


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address of a translation range carries (the client address for
    Teredo), or None."""
    if ip.ipv4_mapped is not None:
        return ip.ipv4_mapped
    if ip.sixtofour is not None:
        return ip.sixtofour
    if ip.teredo is not None:
        return ip.teredo[1]
    if any(ip in net for net in IPV4_CARRYING):
        return ipaddress.IPv4Address(int(ip) & 0xFFFFFFFF)
    return None


@lru_cache(maxsize=4096)
def forbidden(address: str) -> bool:
    """True when a request must not go to ``address`` (an IP address, IPv6 with or without a
    ``%zone``); anything that does not parse as an address is forbidden too."""
    try:
        ip = ipaddress.ip_address(address.split("%")[0])
    except ValueError:
        return True
    if isinstance(ip, ipaddress.IPv6Address):
        if embedded_ipv4(ip) is not None or any(ip in net for net in SPECIAL_IPV6):
            return True
    elif any(ip in net for net in SPECIAL_IPV4):
        return True
    return not ip.is_global or ip.is_multicast


class HostRefused(Exception):
    """The host may not be reached: it does not resolve, or one of its addresses is refused.
    Deliberately without the address (nor which of the two): a refusal that named what an
    internal name resolves to, or told an unknown name from a private one, would map the network
    behind the appliance for whoever can submit a host."""


def checked_addresses(
    host: str, port: int, allow_private: bool, refused: Callable[[str], bool] = forbidden
) -> list[str]:
    """Every address ``host`` resolves to, each one allowed (``allow_private`` lets loopback and
    private ones through, for development); else HostRefused. Connect to one of these addresses,
    never to the name again: a second resolution could answer differently (DNS rebinding).
    ``refused`` is the guard (``forbidden``; a caller may pass its own module's name for it)."""
    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM)
    except (OSError, UnicodeError) as exc:  # socket.gaierror is an OSError
        raise HostRefused(host) from exc
    addresses = list(dict.fromkeys(str(info[4][0]) for info in infos))
    if not addresses or (not allow_private and any(refused(a) for a in addresses)):
        raise HostRefused(host)
    return addresses
