"""Whom an anonymous client counts as: its address, an IPv6 address by its /64.

The tasks' per-principal caps and `RATE_LIMITS` count the same caller alike.
"""

from __future__ import annotations

import ipaddress


def peer_group(peer: str) -> str:
    """Whom an anonymous caller's tasks count against: its address, IPv6 by /64.

    One host is commonly given a whole IPv6 /64: counted per address, one
    client could hold any number of slots. IPv4 (and IPv4-mapped) addresses
    and anything that is not an address count as they are.
    """
    try:
        address = ipaddress.ip_address(peer)
    except ValueError:
        return peer
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is None:
        return str(ipaddress.IPv6Network((address, 64), strict=False))
    return peer
