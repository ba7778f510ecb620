"""`LOOP`: its values, the loop factory it names, and E014 without uvloop."""

from __future__ import annotations

import asyncio
import importlib.util
import sys

import pytest

from wymcp.conf import ImproperlyConfigured, load_settings, loop_factory, run_checks


def test_the_default_is_the_standard_library_loop() -> None:
    settings = load_settings(None)
    assert settings.LOOP == "asyncio"
    loop = loop_factory(settings)()
    try:
        assert type(loop).__module__.startswith("asyncio.")
    finally:
        loop.close()


def test_uvloop_makes_a_uvloop_loop() -> None:
    loop = loop_factory(load_settings(None, LOOP="uvloop"))()
    try:
        assert type(loop).__module__ == "uvloop"
    finally:
        loop.close()


def test_another_name_is_refused_naming_both_values() -> None:
    with pytest.raises(ImproperlyConfigured) as raised:
        load_settings(None, LOOP="tokio")
    (problem,) = raised.value.problems
    assert problem.id == "wymcp.E004"
    assert "LOOP" in str(problem)
    assert '"asyncio" or "uvloop"' in str(problem)


def test_uvloop_without_the_package_is_a_check_error(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "uvloop" else real(name, *a),
    )
    settings = load_settings(None, LOOP="uvloop")
    (problem,) = [p for p in run_checks(settings) if p.id == "wymcp.E014"]
    assert problem.is_error
    assert "[uvloop]" in problem.hint
    assert not [p for p in run_checks(load_settings(None)) if p.id == "wymcp.E014"]


def test_the_factory_without_the_package_names_the_extra(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import raises
    with pytest.raises(ModuleNotFoundError, match=r"\[uvloop\]"):
        loop_factory(load_settings(None, LOOP="uvloop"))
    assert loop_factory(load_settings(None)) is asyncio.new_event_loop
