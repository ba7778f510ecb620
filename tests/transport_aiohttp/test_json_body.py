"""decode_json: the body policy, checked against json.loads and arbitrary bytes."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.transport.aiohttp._json_body import BodyError, decode_json, nesting_depth

JSON_VALUES = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.text(),
    lambda children: (
        st.lists(children, max_size=4)
        | st.dictionaries(st.text(max_size=5), children, max_size=4)
    ),
    max_leaves=30,
)


def depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((depth(v) for v in value.values()), default=0)
    return 0


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_valid_json_decodes_as_json_loads_does(value):
    body = json.dumps(value, ensure_ascii=False).encode()
    assert decode_json(body, depth_limit=1000) == json.loads(body)
    assert nesting_depth(body) == depth(value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_body_error_only(body):
    reason = ""
    try:
        decode_json(body, depth_limit=10)
    except BodyError as exc:
        reason = exc.reason
    assert len(reason) < 200


@pytest.mark.parametrize(
    "body",
    [b'"\\\\"', b'["\\"[["]', b'{"a]": "}{"}', b'"\xe2\x80\xa8["'],
)
def test_brackets_in_strings_are_skipped(body):
    assert nesting_depth(body) <= 1


def test_depth_exactly_at_the_limit_is_accepted():
    assert decode_json(b"[" * 10 + b"]" * 10, depth_limit=10) is not None
    with pytest.raises(BodyError, match="deeper than 10"):
        decode_json(b"[" * 11 + b"]" * 11, depth_limit=10)


def test_integers_up_to_python_s_limit_are_exact():
    assert decode_json(b"9" * 4300, depth_limit=10) == int("9" * 4300)
    with pytest.raises(BodyError, match="too many digits"):
        decode_json(b"9" * 4301, depth_limit=10)


def test_reasons_never_quote_the_body():
    secret = b'{"password": "hunter2", "x": NaN}'
    with pytest.raises(BodyError) as exc:
        decode_json(secret, depth_limit=10)
    assert "hunter2" not in exc.value.reason


@pytest.mark.parametrize(
    "body",
    [rb'"\udcff"', rb'"\ud800"', rb'"a\uD83Db"', rb'"\ude00\ud83d"', rb'{"\udfff": 1}'],
    ids=["low", "high", "high-then-text", "reversed-pair", "in-a-key"],
)
def test_a_lone_surrogate_escape_is_refused(body):
    with pytest.raises(BodyError, match="lone surrogate"):
        decode_json(body, depth_limit=10)


@pytest.mark.parametrize(
    ("body", "value"),
    [
        (rb'"\ud83d\ude00"', "\U0001f600"),
        (rb'"\uD83D\uDE00"', "\U0001f600"),
        (rb'"\\udcff"', "\\udcff"),
        (rb'"\uE000"', "\ue000"),
    ],
    ids=["pair", "pair-upper-case", "escaped-backslash", "private-use"],
)
def test_surrogate_pairs_and_lookalikes_decode(body, value):
    assert decode_json(body, depth_limit=10) == value


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
