"""The mirrored-header check's fast path agrees with its full comparison.

`check_standard` accepts the usual request (each header once, exactly as the
body has it) without the full comparison; every other request takes it. For
tricky values the two must give the same outcome: accepted, or the same -32020.
"""

from __future__ import annotations

import itertools
from typing import Any

import pytest

from wymcp.core.server._jsonrpc import RpcError
from wymcp.core.server._stateless_mirror import _check_standard, check_standard

_VERSION = "2026-07-28"
_TRICKY = [
    "calc",
    " calc",
    "calc\t",
    "ca lc",
    "cälc",
    "calc\x00",
    "calc\x7f",
    "=?base64?Y2FsYw==?=",
    "=?base64?not base64?=",
    "=?",
    "",
]


def _outcome(check: Any, headers: dict[str, list[str]], params: dict[str, Any]) -> Any:
    try:
        check(headers, "tools/call", _VERSION, params)
    except RpcError as error:
        return (error.code, error.message)
    return "accepted"


def _headers(
    name: list[str], version: list[str], method: list[str]
) -> dict[str, list[str]]:
    headers = {"mcp-protocol-version": version, "mcp-method": method}
    if name:
        headers["mcp-name"] = name
    return headers


@pytest.mark.parametrize(("sent", "body"), list(itertools.product(_TRICKY, _TRICKY)))
def test_the_name_header_gets_the_full_comparisons_answer(sent: str, body: str) -> None:
    headers = _headers([sent], [_VERSION], ["tools/call"])
    params = {"name": body}
    assert _outcome(check_standard, headers, params) == _outcome(
        _check_standard, headers, params
    )


@pytest.mark.parametrize(
    ("name", "version", "method", "accepted"),
    [
        (["calc", "calc"], [_VERSION], ["tools/call"], False),
        (["calc"], [_VERSION, _VERSION], ["tools/call"], False),
        (["calc"], [_VERSION], ["tools/call", "tools/call"], False),
        (["calc"], [" " + _VERSION], ["tools/call"], True),
        (["calc"], [_VERSION], [" tools/call\t"], True),
        (["calc"], [_VERSION], ["tools/list"], False),
        (["calc"], ["2025-11-25"], ["tools/call"], False),
        ([], [_VERSION], ["tools/call"], False),
        (["calc"], [], ["tools/call"], False),
    ],
)
def test_repeated_missing_or_differing_headers_get_the_full_comparisons_answer(
    name: list[str], version: list[str], method: list[str], *, accepted: bool
) -> None:
    headers = {
        key: values for key, values in _headers(name, version, method).items() if values
    }
    params = {"name": "calc"}
    fast = _outcome(check_standard, headers, params)
    assert fast == _outcome(_check_standard, headers, params)
    assert (fast == "accepted") is accepted


def test_the_usual_request_is_accepted() -> None:
    headers = _headers(["calc"], [_VERSION], ["tools/call"])
    assert _outcome(check_standard, headers, {"name": "calc"}) == "accepted"
