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
MEMO_LIMIT = 256
"""Distinct Host/Origin values remembered; past it the memo starts over."""
MEMO_VALUE_LIMIT = 300
"""Longest value remembered (a DNS name is at most 253 characters, plus a port
and a scheme): a longer one is decided each time, so a memo holds at most
`MEMO_LIMIT` x `MEMO_VALUE_LIMIT` characters whatever clients send."""

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


class Memo:
    """Verdicts remembered by header value, bounded in count and value length.

    A client sends the same Host every time; a hostile one sends a new value
    each time and only ever empties the memo. `verdicts` (value to verdict)
    is the one dict for the memo's life, so a reader may keep it: a value it
    lacks is decided by calling the memo.
    """

    def __init__(self, decide: Callable[[str], bool]) -> None:
        self._decide = decide
        self.verdicts: dict[str, bool] = {}

    def __len__(self) -> int:
        return len(self.verdicts)

    def __call__(self, value: str) -> bool:
        """`decide(value)`, remembered when `value` is short enough to keep."""
        known = self.verdicts.get(value)
        if known is not None:
            return known
        known = self._decide(value)
        if len(value) <= MEMO_VALUE_LIMIT:
            if len(self.verdicts) >= MEMO_LIMIT:
                self.verdicts.clear()  # in place: readers keep the same dict
            self.verdicts[value] = known
        return known


@attrs.define(eq=False)
class HostPolicy:
    """Answers whether a request's Host and Origin headers are acceptable.

    The rules are fixed at `build`; the policy owns the two `Memo`s of its
    verdicts, so it is not a frozen value.
    """

    any_host: bool
    hosts: frozenset[tuple[str, str | None]]
    any_origin: bool
    origins: frozenset[tuple[str, str, str | None]]
    hosts_seen: Memo = attrs.field(init=False, repr=False)
    origins_seen: Memo = attrs.field(init=False, repr=False)

    def __attrs_post_init__(self) -> None:
        self.hosts_seen = Memo(self._host_allowed)
        self.origins_seen = Memo(self._origin_allowed)

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
        return _one_allowed(values, anything=self.any_host, seen=self.hosts_seen)

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
        return _one_allowed(values, anything=self.any_origin, seen=self.origins_seen)

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


def _one_allowed(values: list[str], *, anything: bool, seen: Memo) -> bool:
    """Whether `values` is one header value that `*` (`anything`) or `seen` allows."""
    return len(values) == 1 and (anything or seen(values[0]))
