"""decode_by_policy and encode_json: the one JSON policy, against `json` and bytes."""

from __future__ import annotations

import json
import math
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from json_values import JSON_VALUES, depth
from wymcp.core.server import BodyError, decode_by_policy, encode_json, nesting_depth


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_valid_json_decodes_as_json_loads_does(value):
    body = json.dumps(value, ensure_ascii=False).encode()
    assert decode_by_policy(body, depth_limit=1000) == json.loads(body)
    assert nesting_depth(body) == depth(value)


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=200))
def test_any_bytes_decode_or_raise_body_error_only(body):
    reason = ""
    try:
        decode_by_policy(body, depth_limit=10)
    except BodyError as exc:
        reason = exc.reason
    assert len(reason) < 200


@pytest.mark.parametrize(
    "body",
    [b'"\\\\"', b'["\\"[["]', b'{"a]": "}{"}', b'"\xe2\x80\xa8["'],
)
def test_brackets_in_strings_are_skipped(body):
    assert nesting_depth(body) <= 1


def test_brackets_after_an_unterminated_string_are_inside_it():
    """The parser reads them as string text too: they are no nesting."""
    assert nesting_depth(b'["' + b"[" * 500) == 1
    with pytest.raises(BodyError, match="not valid JSON"):
        decode_by_policy(b'["' + b"[" * 500, depth_limit=100)


def test_depth_exactly_at_the_limit_is_accepted():
    assert decode_by_policy(b"[" * 10 + b"]" * 10, depth_limit=10) is not None
    with pytest.raises(BodyError, match="deeper than 10"):
        decode_by_policy(b"[" * 11 + b"]" * 11, depth_limit=10)


def test_integers_up_to_python_s_limit_are_exact():
    assert decode_by_policy(b"9" * 4300, depth_limit=10) == int("9" * 4300)
    with pytest.raises(BodyError, match="too many digits"):
        decode_by_policy(b"9" * 4301, depth_limit=10)


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b'{"a": 1e400}', "too large for a double"),
        (b'{"a": Infinity}', "Infinity is not a JSON number"),
        (b'{"a": NaN}', "NaN is not a JSON number"),
        (b'{"a": 1, "a": 2}', "repeats a key"),
        (b"\xef\xbb\xbf{}", "not valid JSON"),
        (b'{"a": "\xff"}', "not valid UTF-8"),
    ],
)
def test_each_refusal_says_why(body, reason):
    with pytest.raises(BodyError, match=reason):
        decode_by_policy(body, depth_limit=10)


def test_reasons_never_quote_the_body():
    secret = b'{"password": "hunter2", "x": NaN}'
    with pytest.raises(BodyError) as exc:
        decode_by_policy(secret, depth_limit=10)
    assert "hunter2" not in exc.value.reason


@pytest.mark.parametrize(
    "body",
    [rb'"\udcff"', rb'"\ud800"', rb'"a\uD83Db"', rb'"\ude00\ud83d"', rb'{"\udfff": 1}'],
    ids=["low", "high", "high-then-text", "reversed-pair", "in-a-key"],
)
def test_a_lone_surrogate_escape_is_refused(body):
    with pytest.raises(BodyError, match="lone surrogate"):
        decode_by_policy(body, depth_limit=10)


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
    assert decode_by_policy(body, depth_limit=10) == value


def test_reasons_name_the_subject_and_place():
    with pytest.raises(BodyError) as body:
        decode_by_policy(b"{\n  x}", depth_limit=10)
    assert body.value.reason.startswith("the body is not valid JSON (")
    assert "at line 2 column 3)." in body.value.reason
    with pytest.raises(BodyError) as message:
        decode_by_policy(b"{x}", depth_limit=10, subject="message", lines=False)
    assert message.value.reason == (
        "the message is not valid JSON (Expecting property name enclosed in "
        "double quotes at column 2)."
    )
    with pytest.raises(BodyError, match=r"^the message nests deeper than 1 levels"):
        decode_by_policy(b"[[]]", depth_limit=1, subject="message")


def test_a_fast_parser_answers_first_after_the_depth_check():
    seen: list[bytes] = []

    def fast(body: bytes) -> tuple[bool, Any]:
        seen.append(body)
        return (True, "fast") if body == b"1" else (False, None)

    assert decode_by_policy(b"1", depth_limit=10, fast=fast) == "fast"
    assert decode_by_policy(b"2", depth_limit=10, fast=fast) == 2  # left to json
    with pytest.raises(BodyError, match="deeper than 1"):
        decode_by_policy(b"[[1]]", depth_limit=1, fast=fast)
    assert seen == [b"1", b"2"]


def test_a_fast_parser_may_refuse():
    def fast(body: bytes) -> tuple[bool, Any]:
        raise BodyError("an object repeats a key; send each key once.")

    with pytest.raises(BodyError, match="repeats a key"):
        decode_by_policy(b"{}", depth_limit=10, fast=fast)


def stdlib(value: object) -> bytes:
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode()


@settings(max_examples=200, deadline=None)
@given(JSON_VALUES)
def test_encode_json_is_compact_utf8_json(value):
    assert encode_json(value) == stdlib(value)


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused(number):
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode_json({"x": [1, number]})
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode_json({"x": [1, number]}, fast=lambda value: b'{"x":[1,null]}')


def test_a_fast_encoder_writes_unless_it_wrote_null_or_refused():
    assert encode_json({"a": 1}, fast=lambda value: b"FAST") == b"FAST"
    wrote_null = encode_json({"a": None}, fast=lambda value: b'{"a":null,"fast":1}')
    assert wrote_null == b'{"a":null}'  # written again by json

    def refuses(value: object) -> bytes:
        raise TypeError("no")

    assert encode_json({"é": 1}, fast=refuses) == '{"é":1}'.encode()
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode_json({"x": object()}, fast=refuses)
