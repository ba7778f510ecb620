"""Which Host and Origin headers the endpoint accepts (DNS-rebinding defence).

Loopback names (127.0.0.1, localhost, [::1]) on any port, and origins on them
over http or https, are always accepted; `ALLOWED_HOSTS` and `ALLOWED_ORIGINS`
add more. An entry is `name`, `name:port` or `name:*` (a bare name allows any
port); an origin entry adds its scheme; `*` accepts anything.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable

import attrs

LOOPBACK_HOSTS = ("127.0.0.1:*", "localhost:*", "[::1]:*")
_MEMO_LIMIT = 256
"""Distinct Host/Origin values remembered; past it the memo starts over."""

_AUTHORITY = re.compile(r"(\[[0-9a-f:.]+\]|[^\[\]:/]+)(?::([0-9]{1,5}))?")
_ORIGIN = re.compile(r"(https?)://(.+)")


def _split(authority: str) -> tuple[str, str | None] | None:
    match = _AUTHORITY.fullmatch(authority.lower())
    if match is None:
        return None
    return match.group(1), match.group(2)


def _entry(entry: str) -> tuple[str, str | None]:
    """Return (name, port) for an entry; port None means any port."""
    if entry.startswith("["):  # an IPv6 literal: [addr] or [addr]:port
        address, _, rest = entry.partition("]")
        name, port = address + "]", rest.removeprefix(":")
    else:
        name, _, port = entry.partition(":")
    return name, (None if port in {"", "*"} else port)


@attrs.frozen
class HostPolicy:
    """Answers whether a request's Host and Origin headers are acceptable."""

    any_host: bool
    hosts: frozenset[tuple[str, str | None]]
    any_origin: bool
    origins: frozenset[tuple[str, str, str | None]]
    _hosts_seen: dict[str, bool] = attrs.field(
        factory=dict, init=False, eq=False, repr=False
    )
    _origins_seen: dict[str, bool] = attrs.field(
        factory=dict, init=False, eq=False, repr=False
    )

    @classmethod
    def build(
        cls, allowed_hosts: Iterable[str], allowed_origins: Iterable[str]
    ) -> HostPolicy:
        """Build the policy from the two settings (entries already checked)."""
        host_entries = [*LOOPBACK_HOSTS, *allowed_hosts]
        hosts = frozenset(_entry(e) for e in host_entries if e != "*")
        origins = {
            (scheme, name, port) for name, port in hosts for scheme in ("http", "https")
        }
        for entry in allowed_origins:
            match = _ORIGIN.fullmatch(entry)
            if match is not None:
                name, port = _entry(match.group(2))
                origins.add((match.group(1), name, port))
        return cls(
            any_host="*" in host_entries,
            hosts=hosts,
            any_origin="*" in allowed_origins,
            origins=frozenset(origins),
        )

    def host_allowed(self, values: list[str]) -> bool:
        """Whether the Host header values (exactly one expected) are acceptable."""
        if len(values) != 1:
            return False
        if self.any_host:
            return True
        return _memo(self._hosts_seen, values[0], self._host_allowed)

    def _host_allowed(self, value: str) -> bool:
        split = _split(value.strip())
        if split is None:
            return False
        name, port = split
        return (name, None) in self.hosts or (port is not None and split in self.hosts)

    def origin_allowed(self, values: list[str]) -> bool:
        """Whether the Origin header values (none, or exactly one) are acceptable."""
        if not values:
            return True
        if len(values) != 1:
            return False
        if self.any_origin:
            return True
        return _memo(self._origins_seen, values[0], self._origin_allowed)

    def _origin_allowed(self, value: str) -> bool:
        match = _ORIGIN.fullmatch(value.strip().lower())
        if match is None:
            return False
        split = _split(match.group(2))
        if split is None:
            return False
        scheme, (name, port) = match.group(1), split
        return (scheme, name, None) in self.origins or (
            port is not None and (scheme, name, port) in self.origins
        )


def _memo(seen: dict[str, bool], value: str, decide: Callable[[str], bool]) -> bool:
    """`decide(value)`, remembered: a client sends the same Host every time."""
    known = seen.get(value)
    if known is None:
        if len(seen) >= _MEMO_LIMIT:
            seen.clear()
        known = seen[value] = decide(value)
    return known
