"""The gates' Python walks neither hold the loop nor grow faster than the data.

The walks: decimal ``multipleOf`` on many numbers, casts under ``patternProperties``.

Each served case sends a 4 MiB body beside a client pinging (the watchdog is on);
each doubling case times the gate on n and 2n values (docs/security.md, loop time).
"""

from __future__ import annotations

import json
import sys
import tracemalloc
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

import pytest

from hardening.test_linearity import assert_linear, frozen_heap
from wymcp.core.gates import _check, _slices, _value_gate, check, check_fast
from wymcp.core.gates._check import FAST_VALUES
from wymcp.core.gates._engine_reads import values_in
from wymcp.core.gates._error_cost import ERRORS_WEIGHT, errors_fit, errors_per_place
from wymcp.core.gates._problem_texts import UNNAMED
from wymcp.core.gates._slices import SLICE, cost
from wymcp.core.gates._value_gate import WALK_FLOOR, WALK_WORK
from wymcp.core.schema import Action, Tool, prepare, spend_work, work_budget

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))

from gates_walks import (  # one place for the tool and the bodies
    BODY,
    Ledger,
    array,
    distinct,
    distinct_cents,
    distinct_e280,
    distinct_e300,
    distinct_refused_batches,
    nested,
    tags,
    tags_filled,
    wide_sevens,
)

if TYPE_CHECKING:
    from conftest import Serve, Wire
    from loop_watchdog import LoopWatchdog

__all__ = ["frozen_heap"]  # the fixture: a full collection walks the body alone

pytestmark = pytest.mark.usefixtures("frozen_heap")


def _call_body(wire: Wire, action: str, field: str, raw: bytes, **extra: Any) -> bytes:
    """A tools/call body whose data field is the raw JSON bytes given."""
    body = wire.body(
        "tools/call",
        {
            "name": "ledger",
            "arguments": {"action": action, "data": {**extra, field: "@"}},
        },
    )
    return json.dumps(body).encode().replace(b'"@"', raw)


async def _answer(
    wire: Wire, action: str, field: str, raw: bytes, **extra: Any
) -> dict[str, Any]:
    body = _call_body(wire, action, field, raw, **extra)
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
    said = _said(await _answer(wire, "cents", "amounts", array(b"0")))
    assert said["count"] > 2_000_000


async def test_4_mib_of_distinct_objects_under_unique_items(serve: Serve) -> None:
    # check_fast made one engine call over the whole array on the loop (67-135 ms,
    # 466 ms served under load); now the thread decides, in runs, in C.
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = distinct(lambda i: b'{"a":%d}' % i)
    said = _said(await _answer(wire, "rows", "rows", raw))
    assert said["count"] > 300_000
    twice = raw[:-1] + b',{"a":7}]'
    refused = json.loads(
        (await _answer(wire, "rows", "rows", twice))["content"][0]["text"]
    )
    assert refused["errors"] == [
        {"path": "data.rows", "problems": ["value must contain unique items"]}
    ]


async def test_an_accepted_array_of_one_decimal_against_cents(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", array(b"1.5")))
    assert said["count"] > 1_000_000


async def test_an_accepted_array_of_distinct_decimals_against_cents(
    serve: Serve,
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", distinct_cents()))
    assert said["count"] > 400_000


async def test_a_refused_array_against_cents(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = array(b"0.015")
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
    said = _said(await _answer(wire, "sevens", "counts", array(b"0")))
    assert said["count"] > 2_000_000


async def test_a_refused_array_of_ones_against_sevens(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = array(b"1")
    result = await _answer(wire, "sevens", "counts", raw)
    assert result["isError"] is True
    assert (
        json.loads(result["content"][0]["text"])["error_count"] == raw.count(b",") + 1
    )


async def test_three_hundred_thousand_valid_pattern_keys(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "tags", "tags", tags(b"1")))
    assert said == {"action": "tags", "count": 300_000, "floats": 0}


async def test_three_hundred_thousand_pattern_keys_to_cast(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "tags", "tags", tags(b"2.0")))
    assert said == {"action": "tags", "count": 300_000, "floats": 0}  # all cast


# ----- whole floats: the engine's own multipleOf, counted before it runs -----


async def test_an_accepted_array_of_large_whole_floats_against_sevens(
    serve: Serve,
) -> None:
    # The engine paid up to a microsecond for each 7e280, uncounted and in one
    # call: 4 MiB of them held the loop ~1 s; whole floats are now decided in Python.
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "sevens", "counts", array(b"7e280")))
    assert said["count"] > 600_000


async def test_an_accepted_array_of_large_whole_floats_against_cents(
    serve: Serve,
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", array(b"1e280")))
    assert said["count"] > 600_000


async def test_distinct_large_whole_floats_against_cents(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "cents", "amounts", distinct_e280()))
    assert said["count"] > 350_000


async def test_distinct_large_whole_floats_against_integers(serve: Serve) -> None:
    # Under a plain `type: integer` each distinct whole float past 2**53 is a
    # decimal conversion to a big int, one FAST_WORK unit: 100-140 ms on the loop
    # (283 ms loaded) before the thread takes over; docs/security.md said 8 ms.
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = distinct_e300()
    said = _said(await _answer(wire, "wholes", "wholes", raw))
    assert said["count"] == raw.count(b",") + 1


async def test_a_typo_key_beside_large_whole_floats(serve: Serve) -> None:
    # A key the root refuses is found before the engine reads the values beside it.
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = array(b"7e280")[: BODY - 1000]
    raw = raw[: raw.rfind(b",")] + b"]"
    result = await _answer(wire, "sevens", "counts", raw, countz=1)
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error"] == "unknown_params", refusal
    assert refusal["unknown"] == ["data.countz"]


# ----- refused containers and pattern keys: linear, and cheap where equal -----


async def test_an_accepted_deep_tree_of_sevens(serve: Serve) -> None:
    # The engine pass under a recursive anyOf was not counted by FAST_WORK, and
    # the cast asked the engine about each subtree at each of the 90 levels: about
    # 1 s on the loop and 20 CPU-s per 4 MiB call. Now the call goes to the thread,
    # whose cast sees there is no float to cast. (1 MiB; 4 MiB, asked of the
    # engine in runs: test_a_4_mib_deep_tree_of_sevens_is_asked_in_runs.)
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = nested(90, lambda i: b"%d" % (7 * i), BODY // 4)
    said = _said(await _answer(wire, "tree", "tree", raw))
    assert said["count"] == raw.count(b",") + 1


async def test_an_accepted_array_of_wide_multiples_of_seven(serve: Serve) -> None:
    # The engine converts each int past 2**64 at a cost growing with its digits:
    # 4 MiB of 4,299-digit ints held the loop 411-505 ms, uncounted; now they go
    # to the thread. (1 MiB; 4 MiB, asked of the engine in runs:
    # test_4_mib_of_wide_multiples_of_seven_are_asked_in_runs.)
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = wide_sevens(4299, BODY // 4)
    said = _said(await _answer(wire, "sevens", "counts", raw))
    assert said["count"] == raw.count(b",") + 1


# ----- the engine's pass in the worker thread, 4 MiB: asked in runs -----

ENGINE_RUNS = pytest.mark.loop_stall_bound(0.3)
"""One engine call over these 4 MiB held the interpreter 450-710 ms in the worker
thread (so every other client's loop; served: 353-536 ms); asked in runs of at
most `SLICE` units, the thread lets the loop run between them, and what is left is
mostly the body's decoding (79-234 ms on a loaded shared machine)."""


@pytest.fixture(scope="module")
def tree_body() -> bytes:
    """4 MiB of ``7N`` 90 lists deep (built before the watchdog measures)."""
    return nested(90, lambda i: b"%d" % (7 * i))


@pytest.fixture(scope="module")
def wide_body() -> bytes:
    """4 MiB of 4,299-digit multiples of 7 (their digits take the test ~0.2 s)."""
    return wide_sevens(4299)


@ENGINE_RUNS
async def test_a_4_mib_deep_tree_of_sevens_is_asked_in_runs(
    serve: Serve, tree_body: bytes
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "tree", "tree", tree_body))
    assert said["count"] == tree_body.count(b",") + 1


@ENGINE_RUNS
async def test_a_refused_4_mib_deep_tree_is_asked_in_runs(
    serve: Serve, tree_body: bytes
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    leaf = b"[" * 89 + b"%d" % (7 * 20_000)
    raw = tree_body.replace(leaf + b"]", leaf[:-1] + b"1]", 1)  # 140001: not 7N
    result = await _answer(wire, "tree", "tree", raw)
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["errors"][0]["path"] == "data.tree[20000]"
    assert refusal["error_count"] == 90  # every level walked: each array, the leaf
    assert "counting stopped early" not in refusal["message"]


@ENGINE_RUNS
async def test_4_mib_of_wide_multiples_of_seven_are_asked_in_runs(
    serve: Serve, wide_body: bytes
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    said = _said(await _answer(wire, "sevens", "counts", wide_body))
    assert said["count"] == wide_body.count(b",") + 1


@ENGINE_RUNS
async def test_refused_4_mib_of_wide_sevens_are_asked_in_runs(
    serve: Serve, wide_body: bytes
) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    last = int(wide_body[-2:-1])
    raw = wide_body[:-2] + b"%d]" % ((last + 1) % 10)  # the last one is not 7N
    result = await _answer(wire, "sevens", "counts", raw)
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error_count"] == 1
    assert refusal["errors"][0]["path"] == f"data.counts[{raw.count(b',')}]"


async def test_a_refused_array_of_equal_batches(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = array(b"[0.015]")
    result = await _answer(wire, "batches", "batches", raw)
    refusal = json.loads(result["content"][0]["text"])
    assert result["isError"] is True
    assert refusal["error_count"] == raw.count(b",") + 1
    assert refusal["errors"][0] == {
        "path": "data.batches[0][0]",
        "problems": ["value is not a multiple of 0.01"],
    }


async def test_a_refused_array_of_distinct_batches(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = distinct_refused_batches()
    result = await _answer(wire, "batches", "batches", raw)
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error_count"] == raw.count(b",") + 1


async def test_a_refused_object_of_many_pattern_keys(serve: Serve) -> None:
    # Sorting 300,000 refused keys held the interpreter (so every client's loop)
    # for about half a second; a heap of them cost ~14 x the body in memory. Past
    # 4,096 keys the first ten refused as sent are kept (listed in path order).
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = tags_filled(b"1.5")
    result = await _answer(wire, "tags", "tags", raw)
    assert result["isError"] is True
    refusal = json.loads(result["content"][0]["text"])
    assert refusal["error_count"] == raw.count(b",") + 1
    assert [e["path"] for e in refusal["errors"][:3]] == [
        "data.tags.k0",
        "data.tags.k1",
        "data.tags.k2",
    ]


async def test_pattern_keys_of_arrays_to_cast(serve: Serve) -> None:
    wire = await serve(TOOLS=[Ledger], BODY_LIMIT=BODY)
    raw = tags_filled(b"[2.0,3.0,4.0]", b"j")
    said = _said(await _answer(wire, "tags", "tags", raw))
    assert said == {"action": "tags", "count": raw.count(b",") // 3 + 1, "floats": 0}


def test_equal_refused_batches_are_decided_once_per_chunk() -> None:
    # Each refused batch was walked on its own: three Python decisions per batch
    # (120,000 here), past this budget; equal ones are now counted from the first.
    data = {"batches": [[0.015]] * 40_000}
    with work_budget(2_000):
        verdict = check(Ledger, "batches", data)
        spend_work(0)  # raises OverBudgetError if the check spent past the budget
    assert verdict.refusal is not None
    assert verdict.refusal["error_count"] == 40_000


def test_check_fast_counts_whole_floats_before_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The engine decided a whole float under multipleOf itself, uncounted; now
    # Python does: past FAST_WORK of them check_fast leaves the call to the thread
    # (FAST_WORK made smaller: data past SLICE units goes to the thread first).
    monkeypatch.setattr(_check, "FAST_WORK", 1_000)
    data = {"amounts": [1e280] * 2_000}
    assert check_fast(Ledger, "cents", data) is None
    assert check(Ledger, "cents", data).accepted
    few = {"amounts": [1e280] * 100}
    fast = check_fast(Ledger, "cents", few)
    assert fast is not None
    assert fast.accepted
    assert fast.data == check(Ledger, "cents", few).data


def test_check_fast_leaves_a_large_tree_under_anyof_to_the_thread() -> None:
    # Under a recursive anyOf the engine pass and the cast read each value more
    # than once: past FAST_VALUES values check_fast answers None before the engine.
    large = {"tree": [[[7 * i]] for i in range(FAST_VALUES)]}
    assert check_fast(Ledger, "tree", large) is None
    assert check(Ledger, "tree", large).accepted
    small = {"tree": [[[7 * i], 7.0] for i in range(100)]}
    fast = check_fast(Ledger, "tree", small)
    assert fast is not None
    assert fast.accepted
    assert fast.data == check(Ledger, "tree", small).data
    assert fast.data["tree"][0][1].__class__ is int


def test_check_fast_counts_wide_ints_before_the_engine(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each int past 2**64 under multipleOf spends a unit per 64 bits: past
    # FAST_WORK of them check_fast leaves the call to the thread (made smaller:
    # five such ints are within SLICE units, 4,000 digits ~207 units of work each).
    monkeypatch.setattr(_check, "FAST_WORK", 1_000)
    wide = 7 * 10**4000
    data = {"counts": [wide + 7 * i for i in range(5)]}
    assert cost(data, 1 << 62) <= SLICE
    assert check_fast(Ledger, "sevens", data) is None
    assert check(Ledger, "sevens", data).accepted
    few = {"counts": [wide, 2**70 * 7, 14]}
    fast = check_fast(Ledger, "sevens", few)
    assert fast is not None
    assert fast.accepted


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


def test_sevens_of_many_large_whole_floats() -> None:
    assert_linear(
        _accepts("sevens"),
        lambda n: {"counts": [float(f"{7 * (i + 1)}e280") for i in range(n)]},
        256,
    )


def test_many_refused_batches() -> None:
    assert_linear(
        _refuses("batches"),
        lambda n: {"batches": [[i + 0.015] for i in range(n)]},
        256,
    )


def test_many_refused_pattern_keys() -> None:
    assert_linear(
        _refuses("tags"), lambda n: {"tags": {f"k{i}": 1.5 for i in range(n)}}, 256
    )


def test_pattern_keys_of_arrays_to_cast_grow_linearly() -> None:
    assert_linear(
        _accepts("tags"),
        lambda n: {"tags": {f"j{i}": [2.0, 3.0, 4.0] for i in range(n)}},
        256,
    )


def _deep_tree(depth: int, leaf: float, leaves: int = 2000) -> dict[str, Any]:
    """``leaves`` leaves ``leaf * i``, each ``depth`` lists deep (the body grows)."""
    items: list[Any] = []
    for i in range(leaves):
        item: Any = leaf * i
        for _ in range(depth):
            item = [item]
        items.append(item)
    return {"tree": items}


def test_accepted_deep_trees_grow_linearly_in_depth() -> None:
    # The cast asked the engine about each subtree at each level: quadratic in depth.
    assert_linear(_accepts("tree"), lambda n: _deep_tree(n, 7), 8)


def _chain(depth: int, n: int) -> dict[str, Any]:
    """One chain of ``depth`` lists holding ``n`` multiples of 7 at its end."""
    item: Any = [7 * i for i in range(n)]
    for _ in range(depth - 1):
        item = [item]
    return {"tree": item}


def test_engine_passes_asked_in_runs_grow_linearly() -> None:
    # Data past SLICE units is asked in runs, each level of a large value split
    # again: the counting that cuts the runs stays linear, whatever the shape.
    assert_linear(
        _accepts("sevens"),
        lambda n: {"counts": [7 * (10**300 + i) for i in range(n)]},
        2048,
    )
    assert_linear(_accepts("tree"), lambda n: _deep_tree(90, 7, n), 400)
    assert_linear(_accepts("tree"), lambda n: _chain(60, n), 40_000)


class _Reading:
    """A validator that counts the values each call hands the engine."""

    def __init__(self, validator: Any, read: list[int]) -> None:
        self.validator = validator
        self.read = read

    def is_valid(self, value: object) -> bool:
        self.read[0] += values_in(value, 1 << 62)
        return bool(self.validator.is_valid(value))

    def iter_errors(self, value: object) -> Any:
        self.read[0] += values_in(value, 1 << 62)
        return self.validator.iter_errors(value)


def _engine_reads(monkeypatch: pytest.MonkeyPatch, action: str, data: Any) -> int:
    """The values the engine calls of `check` read, in all (nodes patched back)."""
    read = [0]
    stack = [prepare(Ledger).actions[action].root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for name in ("validator", "children_valid"):
            if getattr(node, name) is not None:
                monkeypatch.setattr(node, name, _Reading(getattr(node, name), read))
        stack.extend(node.links())
    refusal = check(Ledger, action, data).refusal
    monkeypatch.undo()
    assert refusal is not None
    return read[0]


_SHAPE = frozenset({"type", "minItems", "maxItems", "minProperties", "maxProperties"})
"""Assertions the engine decides on a container without reading its children."""


class _Largest:
    """A validator that keeps the units of the largest value one call handed it."""

    def __init__(self, validator: Any, largest: list[int]) -> None:
        self.validator = validator
        self.largest = largest

    def is_valid(self, value: object) -> bool:
        self.largest[0] = max(self.largest[0], cost(value, 1 << 62))
        return bool(self.validator.is_valid(value))

    def iter_errors(self, value: object) -> Any:
        self.largest[0] = max(self.largest[0], cost(value, 1 << 62))
        return self.validator.iter_errors(value)


def _largest_call(
    monkeypatch: pytest.MonkeyPatch, action: str, data: Any, gate: Any = check
) -> int:
    """The most units one engine call of `gate` read (node validators patched)."""
    largest = [0]
    stack = [prepare(Ledger).actions[action].root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        for name in ("validator", "children_valid", "items_valid"):
            if getattr(node, name) is not None:
                monkeypatch.setattr(node, name, _Largest(getattr(node, name), largest))
        checks = tuple(
            (k, v if k in _SHAPE else _Largest(v, largest)) for k, v in node.assertions
        )
        monkeypatch.setattr(node, "assertions", checks)
        stack.extend(node.links())
    gate(Ledger, action, data)
    monkeypatch.undo()
    return largest[0]


@pytest.mark.parametrize(
    ("action", "make"),
    [
        ("tree", lambda: _deep_tree(90, 7, 2_000)),
        ("tree", lambda: _deep_tree(90, 7.5, 2_000)),  # refused
        ("tree", lambda: _chain(95, 1_000_000)),
        ("sevens", lambda: {"counts": [7 * (10**4297 + i) for i in range(400)]}),
        ("sevens", lambda: {"counts": [7 * (10**4297 + i) + 1 for i in range(400)]}),
        ("tags", lambda: {"tags": {f"k{i}": i for i in range(300_000)}}),
        ("batches", lambda: {"batches": [[0.01 * i, 0.015] for i in range(60_000)]}),
    ],
)
def test_no_engine_call_of_check_reads_more_than_a_slice(
    monkeypatch: pytest.MonkeyPatch, action: str, make: Any
) -> None:
    # One engine call read all of a 4 MiB body, holding the interpreter 450-710 ms
    # in the worker thread; now each reads a run of at most SLICE units (+1: the
    # run's own list), at every depth JSON_DEPTH_LIMIT allows. Any data past SLICE
    # shows it: the trees' 2,000 leaves (182,002 units) and the 60,000 batches
    # (180,002) were each read in one call.
    data = make()
    assert cost(data, 1 << 62) > 10 * SLICE
    assert _largest_call(monkeypatch, action, data) <= SLICE + 1


@pytest.mark.parametrize(
    ("action", "make"),
    [
        ("rows", lambda n: {"rows": [{"a": i} for i in range(n)]}),
        ("sevens", lambda n: {"counts": [7 * i for i in range(n)]}),
        ("cents", lambda n: {"amounts": [0] * n}),
        ("batches", lambda n: {"batches": [[i, 0] for i in range(n)]}),
    ],
)
def test_no_engine_call_of_check_fast_reads_more_than_a_slice(
    monkeypatch: pytest.MonkeyPatch, action: str, make: Any
) -> None:
    # check_fast, on the event loop, asked the engine about the whole value in
    # one call: uniqueItems over 4 MiB of objects held the loop 67-135 ms (466 ms
    # served under load). Past SLICE units it now answers None first: the
    # thread asks in runs. What it still decides reads at most SLICE units.
    data = make(200_000)
    assert cost(data, 1 << 62) > 10 * SLICE
    assert _largest_call(monkeypatch, action, data, check_fast) <= SLICE
    assert check_fast(Ledger, action, data) is None
    assert check(Ledger, action, data).accepted
    small = make(SLICE // 4)
    fast = check_fast(Ledger, action, small)
    assert fast is not None
    assert fast.accepted
    assert 0 < _largest_call(monkeypatch, action, small, check_fast) <= SLICE


def test_a_refused_deep_tree_reads_a_bounded_multiple_of_its_values(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # The walk asked the engine about each subtree at each level under the
    # recursive anyOf: the values read grew with depth (~100 CPU-s for 4 MiB 90
    # deep). Now they are at most WALK_WORK per value of the data (past a floor),
    # whatever the depth. Unbudgeted, the walk reads 23, 79 and 213 values per
    # value of these trees (over the bound's 18 + the floor's 1 per value).
    for depth in (8, 32, 90):
        data = _deep_tree(depth, 7.5, 100_000 // depth)
        values = values_in(data, 1 << 62)
        bound = WALK_FLOOR + (WALK_WORK + 2) * values  # + the root's passes
        assert _engine_reads(monkeypatch, "tree", data) <= bound, depth


def test_the_walk_sizes_each_value_it_asks_about_once_per_position(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Each engine call of the walk sized its value twice in Python (the split's
    # units, the read budget's values), and a position asks about the same value
    # for each branch, assertion and its children: ~8 passes over each subtree per
    # position, 90% of a refused deep tree's CPU (4 MiB 90 deep: 25 CPU-s, now
    # 6.3). The walk remembers the sizes it counted: about one pass per position.
    sized, visits = [0], [0]
    cost, visit = _slices.cost, _value_gate._visit

    def counted_cost(value: object, cap: int) -> int:
        sized[0] += 1
        return cost(value, cap)

    def counted_visit(*args: Any) -> None:
        visits[0] += 1
        visit(*args)

    monkeypatch.setattr(_slices, "cost", counted_cost)
    monkeypatch.setattr(_value_gate, "_visit", counted_visit)
    refusal = check(Ledger, "tree", _deep_tree(60, 7.5, 200)).refusal
    assert refusal is not None
    assert refusal["error_count"] > 10 * 60
    assert sized[0] <= 2 * visits[0], (sized[0], visits[0])


def test_a_refusal_past_its_read_budget_says_its_count_is_partial(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # Past WALK_WORK values read per value of the data, the walk stops: the first
    # paths it found are kept and the message says the count stopped early.
    data = _deep_tree(60, 7.5)
    refusal = check(Ledger, "tree", data).refusal
    assert refusal is not None
    assert "counting stopped early" in refusal["message"]
    assert refusal["errors"][0]["path"] == "data.tree[1]"  # 0.0 is a multiple of 7
    assert 10 <= refusal["error_count"] < 2000 * 60
    small = {"tree": _deep_tree(20, 7.5)["tree"][:50]}
    within = check(Ledger, "tree", small).refusal
    assert within is not None
    assert "counting stopped early" not in within["message"]
    monkeypatch.setattr(_value_gate, "WALK_FLOOR", 10**12)
    assert check(Ledger, "tree", small).refusal == within


def _closed_items(description: str, items: object) -> Action:
    """An action of one array `t` of `items`, closed by `unevaluatedItems`."""
    return Action(
        description=description,
        properties={"t": {"type": "array", "items": items, "unevaluatedItems": False}},
    )


class _Nested(Tool):
    """Recursive schemas a refused deep value is walked through."""

    name = "nested"
    description = "Lists of lists."
    actions: ClassVar[dict[str, Action]] = {
        "tree": Action(  # the recursive anyOf of Ledger's tree
            description="Sevens in lists of lists",
            properties={
                "t": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"$ref": "#/properties/t"},
                            {"type": "integer", "multipleOf": 7},
                        ]
                    },
                }
            },
        ),
        "pairs": Action(  # no combinator: every level refuses on its own
            description="Lists of at least two lists",
            properties={
                "t": {
                    "type": "array",
                    "minItems": 2,
                    "items": {"$ref": "#/properties/t"},
                }
            },
        ),
        "closed": Action(  # the tree again, every level closed by unevaluatedItems
            description="Sevens in closed lists of lists",
            properties={
                "t": {
                    "type": "array",
                    "items": {
                        "anyOf": [
                            {"$ref": "#/properties/t"},
                            {"type": "integer", "multipleOf": 7},
                        ]
                    },
                    "unevaluatedItems": False,
                }
            },
        ),
        "branches": Action(  # attack 9: one place, 40 errors quoting the value
            description="A name, then nothing, in an array of at least 2 to 41 items",
            properties={
                "t": {
                    "type": "array",
                    "prefixItems": [{"type": "string"}],
                    "unevaluatedItems": False,
                    "allOf": [{"minItems": 2 + i} for i in range(40)],
                }
            },
        ),
        "patterns": Action(  # attack 10: 200 patterns, all matching every key
            description="Letters under any key",
            properties={
                "t": {
                    "type": "object",
                    "patternProperties": {
                        "^" + "(?:)" * i: {"maxLength": 1} for i in range(200)
                    },
                    "unevaluatedProperties": False,
                }
            },
        ),
        "required": _closed_items(  # attack 12: an error per missing name
            "Records of 300 fields",
            {"required": [f"field{i}" for i in range(300)]},
        ),
        "depends": _closed_items(  # attack 12: an error per name `a` requires
            "Records where a needs 300 fields",
            {"dependentRequired": {"a": [f"field{i}" for i in range(300)]}},
        ),
        "enum": _closed_items(  # attack 12: each error quotes 1,000 names
            "Names from a list of 1,000",
            {"enum": [f"name-{i:04}" for i in range(1000)]},
        ),
        "negated": _closed_items(  # attack 13: each `not` error quotes its subschema
            "Anything but a record of 2,000 fields",
            {
                "not": {
                    "type": "object",
                    "properties": {
                        f"field{i:04}": {"type": "string"} for i in range(2000)
                    },
                }
            },
        ),
        "names": Action(  # attack 14: an error per key per branch, each a copy
            description="An object whose keys are all empty",
            properties={
                "t": {
                    "type": "object",
                    "propertyNames": {"allOf": [{"maxLength": 0}] * 16},
                    "unevaluatedProperties": False,
                }
            },
        ),
        "depnames": Action(  # attack 15: propertyNames inside `dependencies`
            description="Keys that set off checks on every key",
            properties={
                "t": {
                    "type": "object",
                    "dependencies": {
                        f"{i:02}": {
                            "propertyNames": {
                                "maxLength": 0,
                                "minLength": 9,
                                "type": "number",
                            }
                        }
                        for i in range(4)
                    },
                    "unevaluatedProperties": False,
                }
            },
        ),
        "longkey": Action(  # attack 15: every error below a key holds its path
            description="Lists of names under any key",
            properties={
                "t": {
                    "allOf": [{}],
                    "patternProperties": {
                        "": {"items": {"type": "string", "maximum": 0}}
                    },
                    "unevaluatedProperties": False,
                }
            },
        ),
        "longname": Action(  # attack 18: each error's paths repeat the $defs name
            description="Records of 128 fields, by a long name",
            properties={
                "t": {
                    "type": "array",
                    "items": {"$ref": "#/properties/t/$defs/" + "n" * 16_000},
                    "unevaluatedItems": False,
                    "$defs": {
                        "n" * 16_000: {"required": [f"field{i}" for i in range(128)]}
                    },
                }
            },
        ),
        "longid": _closed_items(  # attack 19: each error's location holds the $id
            "Records of 128 fields, in a resource with a long $id",
            {
                "$id": "https://example.com/" + "n" * 16_000,
                "type": "object",
                "required": [f"field{i}" for i in range(128)],
            },
        ),
        "strings": Action(  # a position the walk cannot split, one level
            description="A count, then names",
            properties={
                "t": {
                    "type": "array",
                    "prefixItems": [{"type": "integer"}],
                    "items": {"type": "string"},
                    "unevaluatedItems": False,
                }
            },
        ),
    }

    async def run_action(self, action: str, data: dict[str, Any], ctx: Any) -> object:
        del action, ctx
        return data


_DEEP = 90
MIB = 1 << 20


def _string_leaf(size: int) -> list[Any]:
    """One string of `size` characters 90 arrays deep."""
    value: list[Any] = ["q" * size]
    for _ in range(_DEEP - 1):
        value = [value]
    return value


def _ladder(size: int) -> list[Any]:
    """90 levels, each a string beside the next level (the strings: `size` in all)."""
    value: list[Any] = ["q" * (size // _DEEP)]
    for _ in range(_DEEP - 1):
        value = ["q" * (size // _DEEP), value]
    return value


def _refusal_peak(action: str, data: dict[str, Any]) -> tuple[int, dict[str, Any]]:
    """The peak of Python memory `check` allocates for a refusal, and the refusal."""
    spec = prepare(_Nested)
    tracemalloc.start()
    try:
        refusal = check(spec, action, data).refusal
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert refusal is not None
    return peak, refusal


@pytest.mark.parametrize(
    ("action", "make", "count"),
    [
        ("tree", _string_leaf, _DEEP),  # each array below the top, the string
        ("tree", _ladder, 2 * _DEEP - 1),  # each string, each array below the top
        ("pairs", _string_leaf, _DEEP + 1),  # each array (one item), the string
    ],
)
def test_a_refused_deep_string_costs_a_bounded_multiple_of_its_bytes(
    action: str, make: Any, count: int
) -> None:
    # Past 32 levels the walk asked the engine for its errors, each a copy of the
    # value it refuses and a message quoting it, every level's errors holding the
    # levels below: one wrong string 90 deep under the recursive anyOf cost ~490 x
    # its bytes (1 MiB: 491 MiB; 4 MiB: 1.96 GiB), the minItems chain ~255 x. Now
    # every level is walked: at most 3 x the string, the same for twice the string.
    peaks = []
    for size in (MIB, 2 * MIB):
        peak, refusal = _refusal_peak(action, {"t": make(size)})
        assert peak < 3 * size, (size, peak / size)
        assert refusal["error_count"] == count
        assert "counting stopped early" not in refusal["message"]
        assert "qqqq" not in json.dumps(refusal)  # quotes no sent value
        peaks.append(peak)
    assert peaks[1] < 2.5 * peaks[0]  # twice the string: about twice the peak


def _shallow_leaf(size: int) -> list[Any]:
    """One string of `size` characters 20 arrays deep (90 weigh past the limit)."""
    value: list[Any] = ["q" * size]
    for _ in range(19):
        value = [value]
    return value


def _controls(size: int) -> list[Any]:
    """One string of `size` bytes of `\\u0001` escapes (6 bytes each in JSON)."""
    return ["\x01" * (size // 6)]


def _pairs(size: int) -> dict[str, Any]:
    """Keys of two letters, about `size` bytes in all (each value refused 200 times)."""
    return {f"k{i}": "ab" for i in range(max(size // 12, 1))}


def _ones(size: int) -> list[Any]:
    """`size` bytes of `1,` (each item after the first refused)."""
    return [1] * (size // 2)


def _numbered(size: int) -> dict[str, Any]:
    """Keys `00`, `01`, ... of `1`, about `size` bytes (four set off checks)."""
    return {f"{i:02}": 1 for i in range(max(size // 8, 1))}


def _emoji_key(size: int) -> dict[str, Any]:
    """One key of `size // 4` emoji (4 bytes each) over 253 refused items."""
    return {"\U0001f600" * max(size // 4, 1): [1] * 253}


def _empties(size: int) -> list[Any]:
    """`size` bytes of `{},` (each item lacks every required name)."""
    return [{}] * (size // 3)


def _with_a(size: int) -> list[Any]:
    """`size` bytes of `{"a":1},` (each item lacks every name `a` requires)."""
    return [{"a": 1}] * (size // 8)


@pytest.mark.parametrize(
    ("action", "make", "factor", "first", "base"),
    [
        # walked as `items`: only the node's own keywords evaluate its items
        (
            "closed",
            _string_leaf,
            3,
            ("data.t[0]", "value matches no schema of anyOf"),
            MIB,
        ),
        ("strings", _ones, 3, ("data.t[1]", "value is not of type string"), MIB // 4),
        ("required", _empties, 6, ("data.t[0]", "field0"), MIB // 8),
        ("depends", _with_a, 6, ("data.t[0]", "field0"), MIB // 8),
        ("enum", _ones, 3, ("data.t[0]", "value must be one of"), MIB // 4),
        # past 4,096 keys no heap of them (it cost ~14 x the body: 1 MiB, 87,381 keys)
        (
            "patterns",
            _pairs,
            3,
            ("data.t.k0", "value length must be at most 1"),
            MIB // 4,
        ),
        # `allOf` may evaluate items: only the engine could name them
        ("branches", _controls, 3, ("data.t", UNNAMED), MIB),
    ],
)
def test_a_large_value_the_walk_cannot_split_costs_a_bounded_multiple_of_its_bytes(
    action: str, make: Any, factor: int, first: tuple[str, str], base: int
) -> None:
    # `base`: each walked item of `required` and `depends` reads 300 names
    # (~0.5 MiB fixed); a quarter MiB of `strings`, `enum` (~0.35 MiB whatever
    # the size: 1.4 x) and `patterns` (21,845 keys: 0.8 x) is still walked and
    # named where the code before attack 12 said only `data.t`, and the heap of
    # every key (before 2b36222) cost 13.6 x a quarter MiB as it did 1 MiB.
    # Under unevaluatedItems the engine's errors were asked for whatever the value:
    # the closed tree with one string 90 deep cost ~720 x its bytes, a megabyte of
    # `1,` ~320 x and 11.7 CPU-s (one error object per item). The engine is now
    # asked only about a value whose errors weigh at most ERRORS_WEIGHT and that
    # holds at most VALUES_ASKED values; a larger one is walked like any other.
    peaks = []
    for size in (base, 2 * base):
        peak, refusal = _refusal_peak(action, {"t": make(size)})
        assert peak < factor * size, (size, peak / size)
        path, problem = first
        assert refusal["errors"][0]["path"] == path
        assert any(problem in text for text in refusal["errors"][0]["problems"])
        assert "qqqq" not in json.dumps(refusal)
        if problem == UNNAMED:
            assert "counting stopped early" in refusal["message"]
        peaks.append(peak)
    assert peaks[1] < 2.5 * peaks[0] + base


@pytest.mark.parametrize(
    ("action", "make", "first"),
    [
        ("closed", _shallow_leaf, "value matches no schema of anyOf"),
        ("strings", _ones, "value is not of type string"),
        ("required", _empties, "field0"),
        ("depends", _with_a, "field0"),
        ("enum", _ones, "value must be one of"),
        ("negated", _empties, "must not match"),
        ("names", _pairs, "propertyNames does not allow"),
        ("longname", _empties, "field0"),
        ("longid", _empties, "field0"),
        ("depnames", _numbered, "data.t"),
        ("longkey", _emoji_key, "value is not of type string"),
        ("branches", _controls, "at least"),
        ("patterns", _pairs, "at most 1"),
    ],
)
def test_a_value_the_walk_cannot_split_is_explained_within_its_error_weight(
    action: str, make: Any, first: str
) -> None:
    # Just within ERRORS_WEIGHT the engine is asked, and its errors stay within
    # 16 x that weight (8 MiB): measured 5.3-7.7 MiB for six shapes at the limit.
    root = prepare(_Nested).actions[action].root
    copies = errors_per_place(root.properties["t"])
    size = 1
    while errors_fit({"t": make(size * 2)}["t"], copies=copies):
        size *= 2
    peak, refusal = _refusal_peak(action, {"t": make(size)})
    assert peak < 16 * ERRORS_WEIGHT, peak / ERRORS_WEIGHT
    assert first in json.dumps(refusal["errors"])
    assert UNNAMED not in json.dumps(refusal)
