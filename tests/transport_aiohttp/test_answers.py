"""encode: every answer's bytes, as `json` would write them, or its refusal.

And `reply_response`: the response aiohttp's own constructor would build.
"""

from __future__ import annotations

import datetime as dt
import json
import math

import pytest
from aiohttp import web
from hypothesis import given, settings

from json_values import JSON_VALUES
from wymcp.core.server import Reply
from wymcp.transport.aiohttp._answers import encode, reply_response


def stdlib(value: object) -> bytes:
    return json.dumps(
        value, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode()


@settings(max_examples=300, deadline=None)
@given(JSON_VALUES)
def test_json_values_are_written_as_json_writes_them(value):
    assert json.loads(encode(value)) == json.loads(stdlib(value))
    if not any(isinstance(v, float) for v in _leaves(value)):
        assert encode(value) == stdlib(value)  # floats may differ in spelling


def _leaves(value: object) -> list[object]:
    if isinstance(value, list):
        return [leaf for item in value for leaf in _leaves(item)]
    if isinstance(value, dict):
        return [leaf for item in value.values() for leaf in _leaves(item)]
    return [value]


@pytest.mark.parametrize("number", [math.nan, math.inf, -math.inf])
def test_non_finite_floats_are_refused_not_written_as_null(number):
    with pytest.raises(ValueError, match="not JSON compliant"):
        encode({"result": {"structuredContent": {"x": [1, number]}}})


def test_keys_json_converts_are_converted_the_same_way():
    value = {None: 1, True: 2, 3: 4}
    assert encode(value) == stdlib(value)


def test_an_integer_past_python_s_digit_limit_raises():
    with pytest.raises(ValueError, match="digits"):
        encode({"n": 10**5000})


def test_an_unknown_type_is_refused_by_json():
    with pytest.raises(TypeError, match="not JSON serializable"):
        encode({"x": object()})


def test_a_datetime_is_written_as_rfc_3339():
    moment = dt.datetime(2026, 7, 28, 12, 0, tzinfo=dt.UTC)
    assert encode({"at": moment}) == b'{"at":"2026-07-28T12:00:00Z"}'


@pytest.mark.parametrize(
    ("status", "headers"),
    [
        (200, {}),
        (200, {"Mcp-Session-Id": "abc"}),
        (400, {"WWW-Authenticate": 'Bearer error="insufficient_scope"'}),
        (429, {"Retry-After": "1"}),
    ],
)
def test_a_reply_s_response_is_the_one_aiohttp_would_build(
    status: int, headers: dict[str, str]
) -> None:
    body = {"jsonrpc": "2.0", "id": 1, "result": {"content": [], "isError": False}}
    built = reply_response(Reply(status, body, headers))
    aiohttps = web.Response(
        status=status,
        body=encode(body),
        headers={**headers, "Content-Type": "application/json"},
    )
    assert isinstance(built, web.Response)
    # every field aiohttp's own constructor sets, set to the same value
    assert vars(built).keys() == vars(aiohttps).keys()
    for name, value in vars(aiohttps).items():
        if name == "_headers":
            assert list(built.headers.items()) == list(value.items())
        else:
            assert getattr(built, name) == value, name
    assert (built.status, built.reason, built.body) == (
        status,
        aiohttps.reason,
        encode(body),
    )
    assert built.content_type == "application/json"
    assert built.content_length == len(encode(body))


def test_each_reply_s_response_has_headers_of_its_own() -> None:
    body = {"jsonrpc": "2.0", "id": 1, "result": {}}
    first = reply_response(Reply(200, body))
    first.headers["X-Changed"] = "1"  # aiohttp adds its own as it sends
    assert "X-Changed" not in reply_response(Reply(200, body)).headers
