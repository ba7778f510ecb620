"""HostPolicy: loopback by default, extended by ALLOWED_HOSTS and ALLOWED_ORIGINS."""

from __future__ import annotations

import pytest

from wymcp.transport.aiohttp._host_policy import (
    MEMO_LIMIT,
    MEMO_VALUE_LIMIT,
    HostPolicy,
)

DEFAULT = HostPolicy.build((), ())
EXTENDED = HostPolicy.build(
    ("mcp.example.com:8443", "other.example.org", "[2001:db8::1]:*"),
    ("https://app.example.com", "http://dev.example.com:3000"),
)


@pytest.mark.parametrize(
    "host", ["127.0.0.1", "127.0.0.1:8000", "localhost:1", "LOCALHOST", "[::1]:8000"]
)
def test_loopback_hosts_are_allowed_by_default(host):
    assert DEFAULT.host_allowed([host])


@pytest.mark.parametrize(
    "values",
    [
        ["evil.example.com"],
        ["127.0.0.1.evil.example.com"],
        ["localhost.evil"],
        ["127.0.0.1:8000", "127.0.0.1:8000"],
        [],
        ["127.0.0.1:99999999"],
        ["user@127.0.0.1"],
    ],
)
def test_anything_else_is_refused(values):
    assert not DEFAULT.host_allowed(values)


def test_allowed_hosts_match_name_and_port():
    assert EXTENDED.host_allowed(["mcp.example.com:8443"])
    assert not EXTENDED.host_allowed(["mcp.example.com:8444"])
    assert not EXTENDED.host_allowed(["mcp.example.com"])
    assert EXTENDED.host_allowed(["other.example.org:1234"])
    assert EXTENDED.host_allowed(["[2001:db8::1]:80"])


@pytest.mark.parametrize(
    ("origin", "allowed"),
    [
        ("http://localhost:3000", True),
        ("https://127.0.0.1", True),
        ("http://[::1]:6274", True),
        ("null", False),
        ("file://", False),
        ("http://evil.example.com", False),
        ("ftp://localhost", False),
    ],
)
def test_origins_by_default(origin, allowed):
    assert DEFAULT.origin_allowed([origin]) is allowed


def test_no_origin_is_fine_but_two_are_not():
    assert DEFAULT.origin_allowed([])
    assert not DEFAULT.origin_allowed(["http://localhost", "http://localhost"])


def test_origins_follow_allowed_hosts_and_allowed_origins():
    assert EXTENDED.origin_allowed(["https://mcp.example.com:8443"])
    assert not EXTENDED.origin_allowed(["https://mcp.example.com:1"])
    assert EXTENDED.origin_allowed(["https://app.example.com"])
    assert EXTENDED.origin_allowed(["https://app.example.com:444"])
    assert not EXTENDED.origin_allowed(["http://app.example.com"])
    assert EXTENDED.origin_allowed(["http://dev.example.com:3000"])
    assert not EXTENDED.origin_allowed(["http://dev.example.com:3001"])


def test_a_star_turns_a_check_off():
    policy = HostPolicy.build(("*",), ("*",))
    assert policy.host_allowed(["anything.example"])
    assert policy.origin_allowed(["https://anything.example"])


def test_remembered_answers_stay_right_past_the_memo_limit():
    """Hosts and origins are decided once per value; the memo stays bounded."""
    policy = HostPolicy.build(["api.example.com"], [])
    for round_ in range(2):  # the second round answers from the memo
        for n in range(300):
            assert policy.host_allowed([f"evil{n}.example:80"]) is False
            assert policy.origin_allowed([f"http://evil{n}.example"]) is False
        assert policy.host_allowed(["api.example.com:443"]), round_
        assert policy.host_allowed(["127.0.0.1:8000"]), round_
        assert policy.origin_allowed(["https://api.example.com"]), round_
    assert len(policy.hosts_seen) <= MEMO_LIMIT
    assert len(policy.origins_seen) <= MEMO_LIMIT


def test_a_value_too_long_to_be_a_host_is_decided_but_never_remembered():
    policy = HostPolicy.build(["api.example.com"], [])
    long_host = "a" * (MEMO_VALUE_LIMIT + 1)
    long_origin = "http://" + long_host
    for _ in range(2):
        assert policy.host_allowed([long_host]) is False
        assert policy.origin_allowed([long_origin]) is False
    assert len(policy.hosts_seen) == len(policy.origins_seen) == 0
    assert policy.host_allowed(["api.example.com"])
    assert len(policy.hosts_seen) == 1
