"""decode_json with msgspec first: the same answers as the policy's `json` path.

The policy itself is tested in tests/core_server/test_json_policy.py.
"""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_values import JSON_VALUES
from wymcp.core.server import BodyError
from wymcp.transport.aiohttp._json_body import decode_json


@pytest.mark.parametrize(
    "body",
    [
        b'{"a": 1, "a": 1}',
        rb'{"\u0061": 1, "a": 2}',
        b'{"a": {"b": 1}, "a": {"b": 1, "c": {"d": 2}}}',
        rb'{"a": 1, "a": "\u003a"}',
        rb'{"a": 1, "a": "\u003A\u003a"}',
        b'[{"k": ":", "k": "::"}]',
        b'{"x": [], "y": {"z": 1, "z": 1}}',
    ],
    ids=[
        "plain",
        "escaped-key",
        "kept-value-larger",
        "escaped-colon-in-kept-value",
        "escaped-colons-upper-case",
        "colons-in-strings",
        "nested",
    ],
)
def test_a_repeated_key_is_refused_however_it_is_spelled(body):
    with pytest.raises(BodyError, match="repeats a key"):
        decode_json(body, depth_limit=10)


KEYS = st.text(alphabet=st.sampled_from('ab:\\"é'), max_size=3)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.tuples(KEYS, JSON_VALUES), max_size=5), st.booleans())
def test_repeats_are_found_exactly_when_present(pairs, escape):
    """Objects written pair by pair, repeats allowed, keys escaped or not."""
    ensure_ascii = escape  # ensure_ascii escapes é and keeps ':' literal
    body = (
        "{"
        + ",".join(
            json.dumps(k, ensure_ascii=ensure_ascii)
            + ":"
            + json.dumps(v, ensure_ascii=ensure_ascii)
            for k, v in pairs
        )
        + "}"
    ).encode()
    keys = [k for k, _ in pairs]  # JSON_VALUES' own objects never repeat a key
    if len(set(keys)) == len(keys):
        assert decode_json(body, depth_limit=1000) == json.loads(body)
    else:
        with pytest.raises(BodyError, match="repeats a key"):
            decode_json(body, depth_limit=1000)


def test_the_fast_path_yields_to_a_lower_int_digit_limit():
    """With Python's limit lowered, integers past it are refused as before."""
    old = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(1000)
    try:
        with pytest.raises(BodyError, match="too many digits"):
            decode_json(b"9" * 2000, depth_limit=10)
    finally:
        sys.set_int_max_str_digits(old)


def test_a_large_body_keeps_the_policy():
    """Past 64 KiB the body is parsed by `json` alone, under the same rules."""
    items = [{"sku": f"SKU-{i:05d}", "qty": i} for i in range(5000)]
    body = json.dumps({"items": items}).encode()
    assert len(body) > 64 * 1024
    assert decode_json(body, depth_limit=10) == {"items": items}
    repeated = body[:-1] + b', "items": []}'
    with pytest.raises(BodyError, match="repeats a key"):
        decode_json(repeated, depth_limit=10)


def _policy(body: bytes, *, fast: bool) -> tuple[str, Any]:
    """("ok", value) or ("refused", reason) for `body`, fast path on or off."""
    from wymcp.transport.aiohttp import _json_body

    saved = _json_body._FAST_BODY_LIMIT
    _json_body._FAST_BODY_LIMIT = saved if fast else -1
    try:
        return "ok", decode_json(body, depth_limit=20)
    except BodyError as exc:
        return "refused", exc.reason
    finally:
        _json_body._FAST_BODY_LIMIT = saved


@pytest.mark.parametrize("fast", [True, False], ids=["msgspec-first", "json"])
def test_integers_up_to_python_s_limit_are_exact_either_way(fast):
    """msgspec takes 4,300 digits; one more goes the `json` way, and is refused."""
    assert _policy(b"9" * 4300, fast=fast) == ("ok", int("9" * 4300))
    refused, reason = _policy(b"9" * 4301, fast=fast)
    assert (refused, "too many digits" in reason) == ("refused", True)


SPICE = st.sampled_from(
    [
        b" ",
        b"\t",
        b"\x0c",
        b"\xa0",
        b"\xef\xbb\xbf",
        b"\x00",
        b"\\u003a",
        b"\\ud800",
        b'"',
        b"\\",
        b":",
        b",",
        b"}",
        b"]",
        b"1e400",
        b"NaN",
        b"-0",
        b"01",
        b"\xff",
    ]
)


@settings(max_examples=500, deadline=None)
@given(
    JSON_VALUES,
    st.booleans(),
    st.lists(st.tuples(st.integers(min_value=0), SPICE), max_size=2),
)
def test_the_fast_path_answers_as_the_json_path_does(value, ascii_, spices):
    """msgspec first or `json` alone: the same value, or a refusal both ways."""
    body = json.dumps(value, ensure_ascii=ascii_).encode()
    for at, spice in spices:  # mutate: most mutants are invalid, some are not
        cut = at % (len(body) + 1)
        body = body[:cut] + spice + body[cut:]
    fast, slow = _policy(body, fast=True), _policy(body, fast=False)
    assert fast[0] == slow[0], (body, fast, slow)
    if fast[0] == "refused":
        assert fast[1] == slow[1]  # the same reason, whichever path found it
    else:
        assert fast[1] == slow[1]
        assert repr(fast[1]) == repr(slow[1])  # -0.0 and 0, 1 and 1.0 differ here


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_the_fast_path_answers_any_bytes_as_the_json_path_does(body):
    fast, slow = _policy(body, fast=True), _policy(body, fast=False)
    assert fast == slow
    if fast[0] == "refused":
        assert len(fast[1]) < 200
