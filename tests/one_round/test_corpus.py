"""The mistake corpus: every injected fault named at once, the call fixed in one round.

A scripted fixer reads only the refusal (and the call it sent) and repairs the call;
the share fixed per kind is the table in `docs/refusals.md`, which this test keeps
true (`WYMCP_WRITE_REFUSAL_TABLE=1` rewrites it).
"""

from __future__ import annotations

import collections
import os
from pathlib import Path

import pytest

from mistake_corpus import KINDS, Mistake, corpus, spec_of
from refusal_fixer import first_refusal, fix, names_fault

DOC = Path(__file__).resolve().parents[2] / "docs" / "refusals.md"
START = "<!-- one-round table: start -->"
END = "<!-- one-round table: end -->"


def _outcome(mistake: Mistake) -> tuple[bool, bool, bool]:
    """Whether round one names every fault, and the call is fixed in one or two."""
    spec = spec_of(mistake.tool)
    refusal = first_refusal(spec, mistake.arguments)
    assert refusal is not None, f"the corpus call was accepted: {mistake}"
    named = all(names_fault(refusal, fault) for fault in mistake.faults)
    once = fix(mistake.arguments, refusal)
    second = first_refusal(spec, once)
    if second is None:
        return named, True, True
    return named, False, first_refusal(spec, fix(once, second)) is None


@pytest.fixture(scope="module")
def results() -> dict[str, list[tuple[bool, bool, bool]]]:
    found: dict[str, list[tuple[bool, bool, bool]]] = collections.defaultdict(list)
    for mistake in corpus():
        found[mistake.kind].append(_outcome(mistake))
    return found


def table(results: dict[str, list[tuple[bool, bool, bool]]]) -> str:
    """The per-kind table, as docs/refusals.md carries it."""
    rows = [
        "| kind of mistake | calls | every fault named in round one | fixed in one round | fixed within two |",  # noqa: E501 - a table row as printed
        "|---|---|---|---|---|",
    ]
    every = [outcome for kind in KINDS for outcome in results[kind]]
    for kind, outcomes in [*((k, results[k]) for k in KINDS), ("all", every)]:
        n = len(outcomes)
        shares = [sum(o[i] for o in outcomes) for i in range(3)]
        cells = " | ".join(f"{s}/{n} ({100 * s / n:.0f}%)" for s in shares)
        name = "**all**" if kind == "all" else f"`{kind}`"
        rows.append(f"| {name} | {n} | {cells} |")
    return "\n".join(rows)


def test_the_corpus_is_large_and_varied() -> None:
    calls = corpus()
    assert len(calls) >= 300
    kinds = collections.Counter(call.kind for call in calls)
    assert len(kinds) >= 12
    assert min(kinds.values()) >= 20
    tools = {call.tool.__name__ for call in calls}
    assert tools == {"Todos", "Projects", "Orders"}
    assert corpus() == calls, "the corpus is seeded: the same on every run"


def test_round_one_names_every_injected_fault(results) -> None:
    outcomes = [o for kind in KINDS for o in results[kind]]
    named = sum(o[0] for o in outcomes) / len(outcomes)
    assert named >= 0.98, table(results)


def test_the_fixer_repairs_most_calls_in_one_round(results) -> None:
    outcomes = [o for kind in KINDS for o in results[kind]]
    once = sum(o[1] for o in outcomes) / len(outcomes)
    assert once >= 0.90, table(results)
    assert all(o[2] for o in outcomes), table(results)


def test_the_docs_table_is_the_measured_one(results) -> None:
    text = DOC.read_text(encoding="utf-8")
    head, rest = text.split(START, 1)
    _, tail = rest.split(END, 1)
    measured = f"{START}\n{table(results)}\n{END}"
    if os.environ.get("WYMCP_WRITE_REFUSAL_TABLE") == "1":
        DOC.write_text(head + measured + tail, encoding="utf-8")
    assert f"{START}{rest.split(END, 1)[0]}{END}" == measured
