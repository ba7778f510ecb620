"""The gates' Python walks neither hold the loop nor grow faster than the data.

The walks: decimal ``multipleOf`` on many numbers, casts under ``patternProperties``.

Each served case sends a 4 MiB body beside a client pinging (the watchdog is on);
each doubling case times the gate on n and 2n values (docs/security.md, loop time).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from hardening.test_linearity import assert_linear, frozen_heap
from wymcp.core.gates import check
from wymcp.core.schema import Action, Tool

if TYPE_CHECKING:
    from conftest import Serve, Wire
    from loop_watchdog import LoopWatchdog

__all__ = ["frozen_heap"]  # the fixture: a full collection walks the body alone

pytestmark = pytest.mark.usefixtures("frozen_heap")

BODY = 4 * 1024 * 1024
"""The default BODY_LIMIT: the largest body a client may send."""


class Ledger(Tool):
    """Amounts in cents, counts in sevens, counters under a key pattern."""

    name = "ledger"
    description = "Sums amounts, counts and counters."
    actions: ClassVar[dict[str, Action]] = {
        "cents": Action(
            description="Sum amounts in cents",
            properties={
                "amounts": {
                    "type": "array",
                    "items": {"type": "number", "multipleOf": 0.01},
                }
            },
        ),
        "sevens": Action(
            description="Count in sevens",
            properties={
                "counts": {
                    "type": "array",
                    "items": {"type": "integer", "multipleOf": 7},
                }
            },
        ),
        "tags": Action(
            description="Keep counters",
            properties={
                "tags": {
                    "type": "object",
                    "patternProperties": {"^k[0-9]+$": {"type": "integer"}},
                    "additionalProperties": False,
                }
            },
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        """Say how many values arrived (and, for counters, how many are floats)."""
        del ctx
        values = next(iter(data.values()))
        said = {"action": action, "count": len(values)}
        if isinstance(values, dict):
            said["floats"] = sum(1 for v in values.values() if isinstance(v, float))
        return said


def _call_body(wire: Wire, action: str, field: str, raw: bytes) -> bytes:
    """A tools/call body whose data field is the raw JSON bytes given."""
    body = wire.body(
        "tools/call",
        {"name": "ledger", "arguments": {"action": action, "data": {field: "@"}}},
    )
    return json.dumps(body).encode().replace(b'"@"', raw)


def _array(item: bytes) -> bytes:
    """A JSON array of `item` repeated to fill a 4 MiB body."""
    count = (BODY - 400) // (len(item) + 1)
    return b"[" + b",".join([item] * count) + b"]"


def _distinct_cents() -> bytes:
    """Distinct amounts with two decimals (each decided on its own), about 4 MiB."""
    count = (BODY - 400) // 10
    return b"[" + b",".join(b"%d.%02d" % (i, i % 97 + 1) for i in range(count)) + b"]"


async def _answer(wire: Wire, action: str, field: str, raw: bytes) -> dict[str, Any]:
    body = _call_body(wire, action, field, raw)
    headers = wire.headers("tools/call", "ledger")
    answer = await wire.alongside(wire.post(body, headers))
    assert answer.status == 200, answer
    return answer.json()["result"]


@pytest.fixture(autouse=True)
def _longest_stall(loop_watchdog: LoopWatchdog) -> Any:
    """Print the longest stall of each served case (the figure docs/security.md has)."""
    yield
    print(f"longest stall: {loop_watchdog.longest * 1000:.0f} ms")  # noqa: T201 - the measured figure


def _said(result: dict[str, Any]) -> Any:
    assert result["isError"] is False, result
    return json.loads(result["content"][0]["text"])


async def test_an_accepted_array_of_zeros_against_cents(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", _array(b"0")))
    assert said["count"] > 2_000_000


async def test_an_accepted_array_of_one_decimal_against_cents(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", _array(b"1.5")))
    assert said["count"] > 1_000_000


async def test_an_accepted_array_of_distinct_decimals_against_cents(
    serve: Serve,
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", _distinct_cents()))
    assert said["count"] > 400_000


async def test_a_refused_array_against_cents(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = _array(b"0.015")
    result = await _answer(wire, "cents", "amounts", raw)
    refusal = json.loads(result["content"][0]["text"])
    assert result["isError"] is True
    assert refusal["error_count"] == raw.count(b",") + 1
    assert refusal["errors"][0] == {
        "path": "data.amounts[0]",
        "problems": ["value is not a multiple of 0.01"],
    }


async def test_an_accepted_array_of_zeros_against_sevens(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "sevens", "counts", _array(b"0")))
    assert said["count"] > 2_000_000


async def test_a_refused_array_of_ones_against_sevens(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = _array(b"1")
    result = await _answer(wire, "sevens", "counts", raw)
    assert result["isError"] is True
    assert (
        json.loads(result["content"][0]["text"])["error_count"] == raw.count(b",") + 1
    )


def _tags(value: bytes, count: int = 300_000) -> bytes:
    return b"{" + b",".join(b'"k%d":%s' % (i, value) for i in range(count)) + b"}"


async def test_three_hundred_thousand_valid_pattern_keys(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "tags", "tags", _tags(b"1")))
    assert said == {"action": "tags", "count": 300_000, "floats": 0}


async def test_three_hundred_thousand_pattern_keys_to_cast(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "tags", "tags", _tags(b"2.0")))
    assert said == {"action": "tags", "count": 300_000, "floats": 0}  # all cast


# ----- doubling: the same walks grow linearly -----


def _accepts(action: str) -> Any:
    def run(data: Any) -> None:
        assert check(Ledger, action, data).accepted

    return run


def _refuses(action: str) -> Any:
    def run(data: Any) -> None:
        assert not check(Ledger, action, data).accepted

    return run


def test_cents_of_many_distinct_decimals() -> None:
    assert_linear(
        _accepts("cents"),
        lambda n: {"amounts": [i + (i % 97 + 1) / 100 for i in range(n)]},
        256,
    )


def test_cents_of_many_refused_decimals() -> None:
    assert_linear(
        _refuses("cents"),
        lambda n: {"amounts": [i + 0.005 for i in range(n)]},
        256,
    )


def test_sevens_of_many_refused_integers() -> None:
    assert_linear(_refuses("sevens"), lambda n: {"counts": [1] * n}, 256)


def test_pattern_keys_to_cast() -> None:
    assert_linear(
        _accepts("tags"), lambda n: {"tags": {f"k{i}": 2.0 for i in range(n)}}, 256
    )
