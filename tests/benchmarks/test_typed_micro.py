"""The typed-path micro-benchmark runs and compares like with like (no speed check)."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType

import pytest

from wymcp.core.schema import prepare

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def typed_micro() -> ModuleType:
    path = ROOT / "benchmarks" / "typed_micro.py"
    spec = importlib.util.spec_from_file_location("typed_micro", path)
    assert spec is not None
    assert spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["typed_micro"] = module
    spec.loader.exec_module(module)
    return module


def test_both_tools_publish_the_same_schemas(typed_micro: ModuleType) -> None:
    typed, plain = prepare(typed_micro.TypedCalc), prepare(typed_micro.DictCalc)
    assert typed.input_schema == plain.input_schema
    assert typed.output_schema == plain.output_schema
    assert typed.actions["add"].published == plain.actions["add"].published


async def test_the_benchmark_measures_both_paths(typed_micro: ModuleType) -> None:
    figures = await typed_micro.measure(loops=5, alternations=2)
    assert set(figures) == {"dict_us", "typed_us", "typed_extra_us"}
    assert figures["dict_us"] > 0
    assert figures["typed_us"] > 0
