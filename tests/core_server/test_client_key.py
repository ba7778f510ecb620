"""`client_key`: whom RATE_LIMITS, the body budget and the lane's turns count."""

from __future__ import annotations

import attrs

from wymcp.core.server import CallRecord, client_key
from wymcp.core.server._rate_limits import principal_of


@attrs.frozen
class Principal:
    subject: str | None
    id: str = "row-7"


def test_an_ipv6_host_counts_by_its_slash_64() -> None:
    one = client_key(None, "2001:db8:1:2::1")
    assert one == client_key(None, "2001:db8:1:2:ffff:ffff:ffff:ffff")
    assert one != client_key(None, "2001:db8:1:3::1")


def test_ipv4_and_mapped_addresses_count_as_they_are() -> None:
    assert client_key(None, "10.0.0.1") == "addr:10.0.0.1"
    assert client_key(None, "10.0.0.1") != client_key(None, "10.0.0.2")
    assert client_key(None, "::ffff:10.0.0.1") == "addr:::ffff:10.0.0.1"


def test_a_token_counts_by_its_subject_whatever_its_address() -> None:
    alice = Principal("alice")
    assert client_key(alice, "10.0.0.1") == client_key(alice, "10.0.0.2")
    assert client_key(alice, None) == "sub:alice"
    assert client_key(Principal(None), None) == "principal:id:row-7"
    assert client_key(None, None) == "anonymous"


def test_the_rate_limits_count_the_same_key() -> None:
    record = CallRecord()
    record.principal, record.peer = Principal("bob"), "10.0.0.9"
    assert principal_of(record) == client_key(record.principal, record.peer)
    record.principal = None
    assert principal_of(record) == "addr:10.0.0.9"
