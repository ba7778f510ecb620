"""`Admission.admit_anonymous`: its lookups for the usual POST decide as every check.

The first request with a Host goes through every check and leaves the verdict
in the policy's memo; later ones are admitted on lookups. Whatever differs
from the usual POST must still get the very answer the full checks give.
"""

from __future__ import annotations

from typing import Any

import pytest
from aiohttp.test_utils import make_mocked_request
from multidict import CIMultiDict

from wymcp.conf import Settings
from wymcp.transport.aiohttp._admission import Admission, Refused

HOST = "127.0.0.1:8000"
USUAL = [("Host", HOST), ("Content-Type", "application/json")]


def _request(
    pairs: list[tuple[str, str]], *, method: str = "POST", target: str = "/mcp"
) -> Any:
    return make_mocked_request(method, target, headers=CIMultiDict(pairs))


def _outcome(admission: Admission, request: Any) -> tuple[int, bytes] | None:
    """None when admitted; else the refusal's status and body."""
    try:
        admission.admit_anonymous(request, request.headers)
    except Refused as refused:
        return refused.response.status, bytes(refused.response.body)
    return None


def _warmed(**overrides: Any) -> Admission:
    admission = Admission(Settings().evolve(BODY_LIMIT=1000, **overrides))
    assert _outcome(admission, _request(USUAL)) is None  # the memo now knows HOST
    assert admission._hosts_allowed == {HOST: True}
    return admission


@pytest.mark.parametrize(
    ("pairs", "method", "target", "status"),
    [
        (USUAL, "POST", "http://evil.example/mcp", 403),
        (USUAL, "POST", f"http://{HOST}/mcp", None),
        ([*USUAL, ("Host", HOST)], "POST", "/mcp", 403),
        ([("Host", "evil.example"), USUAL[1]], "POST", "/mcp", 403),
        (USUAL[1:], "POST", "/mcp", 403),
        ([*USUAL, ("Origin", "http://evil.example")], "POST", "/mcp", 403),
        ([*USUAL, ("Origin", "http://127.0.0.1:9")], "POST", "/mcp", None),
        (
            [*USUAL, ("Origin", "http://127.0.0.1:9"), ("Origin", "http://[::1]")],
            "POST",
            "/mcp",
            403,
        ),
        ([("Host", HOST), ("Content-Type", "text/plain")], "POST", "/mcp", 415),
        (
            [("Host", HOST), ("Content-Type", "application/json; charset=utf-8")],
            "POST",
            "/mcp",
            None,
        ),
        (
            [*USUAL, ("Content-Type", "application/json")],
            "POST",
            "/mcp",
            415,
        ),
        ([("Host", HOST)], "POST", "/mcp", 415),
        ([*USUAL, ("Content-Encoding", "gzip")], "POST", "/mcp", 415),
        ([*USUAL, ("Content-Length", "1001")], "POST", "/mcp", 413),
        ([*USUAL, ("Content-Length", "1000")], "POST", "/mcp", None),
        (USUAL, "PUT", "/mcp", 405),
        ([("Host", HOST)], "GET", "/mcp", None),
        # names in any case are the same names; repeated in another case, twice
        ([("host", HOST), ("CONTENT-TYPE", "application/json")], "POST", "/mcp", None),
        ([*USUAL, ("HOST", HOST)], "POST", "/mcp", 403),
        ([*USUAL, ("origin", "http://evil.example")], "POST", "/mcp", 403),
        (
            [
                *USUAL,
                ("origin", "http://127.0.0.1:9"),
                ("ORIGIN", "http://127.0.0.1:9"),
            ],
            "POST",
            "/mcp",
            403,
        ),
        ([*USUAL, ("content-type", "application/json")], "POST", "/mcp", 415),
        ([*USUAL, ("CONTENT-ENCODING", "gzip")], "POST", "/mcp", 415),
        ([*USUAL, ("content-length", "1001")], "POST", "/mcp", 413),
        ([*USUAL, ("transfer-encoding", "gzip, chunked")], "POST", "/mcp", 501),
        ([*USUAL, ("Transfer-Encoding", "chunked")], "POST", "/mcp", None),
        ([("Host", "evil.example")], "DELETE", "/mcp", 403),
    ],
)
def test_after_the_memo_knows_the_host_every_check_still_decides(
    pairs: list[tuple[str, str]], method: str, target: str, status: int | None
) -> None:
    request = _request(pairs, method=method, target=target)
    fast = _outcome(_warmed(), request)
    # the same request, checked by a fresh policy that remembers nothing
    full = _outcome(Admission(Settings().evolve(BODY_LIMIT=1000)), request)
    assert fast == full
    assert (None if fast is None else fast[0]) == status


def test_a_host_refused_once_is_refused_again_from_the_memo() -> None:
    admission = _warmed()
    evil = _request([("Host", "evil.example"), USUAL[1]])
    first = _outcome(admission, evil)
    assert admission._hosts_allowed["evil.example"] is False
    assert _outcome(admission, evil) == first
    assert first is not None
    assert first[0] == 403


def test_any_host_and_any_origin_are_admitted_on_lookups_too() -> None:
    admission = Admission(Settings().evolve(ALLOWED_HOSTS=["*"], ALLOWED_ORIGINS=["*"]))
    request = _request(
        [("Host", "a.example"), ("Origin", "https://b.example"), *USUAL[1:]]
    )
    assert _outcome(admission, request) is None
    assert admission._hosts_allowed == {}  # decided without the memo
    two = _request([("Host", "a.example"), ("Host", "c.example"), *USUAL[1:]])
    assert _outcome(admission, two) is not None
