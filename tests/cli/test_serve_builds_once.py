"""`wymcp serve` and `GunicornWorker` build their engine once; `check -v` origins."""

from __future__ import annotations

import argparse
import io
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from wymcp.cli import _main
from wymcp.transport.aiohttp import _serve

TOOL = """
from wymcp.core.schema import Action, Tool

MADE = []


class Counted(Tool):
    name = "counted"
    description = "Counts how often it is made."
    actions = {"go": Action(description="Go", properties={})}

    def __init__(self):
        MADE.append(self)

    async def run_action(self, action, data, ctx):
        return data
"""


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[str]:
    """A settings module serving one tool class that counts its instances."""
    (tmp_path / "counted_tool.py").write_text(textwrap.dedent(TOOL))
    (tmp_path / "counted_settings.py").write_text(
        'TOOLS = ["counted_tool.Counted"]\nSTATE_SECRET = "s" * 32\n'
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    for name in list(__import__("os").environ):
        if name.startswith("WYMCP_"):
            monkeypatch.delenv(name)
    yield "counted_settings"
    for name in ("counted_tool", "counted_settings"):
        sys.modules.pop(name, None)


def test_serve_builds_the_engine_once(project, monkeypatch):
    served: list[object] = []

    async def serve_until_stopped(app, settings, banner, out):
        served.append(app)  # returns None: everything ended within SHUTDOWN_GRACE

    monkeypatch.setattr(_serve, "_serve_until_stopped", serve_until_stopped)
    args = argparse.Namespace(settings=project, host=None, port=None)
    out, err = io.StringIO(), io.StringIO()
    assert _main.serve(args, out, err) == 0, err.getvalue()
    assert len(served) == 1
    assert len(sys.modules["counted_tool"].MADE) == 1


def test_serve_with_an_unservable_tool_builds_it_once(project, monkeypatch, caplog):
    monkeypatch.setattr(_serve, "_serve_until_stopped", None)  # never reached
    tool = sys.modules.get("counted_tool") or __import__("counted_tool")
    broken = {"go": tool.Action(description="Go", properties={"x": {"type": "nope"}})}
    monkeypatch.setattr(tool.Counted, "actions", broken)
    args = argparse.Namespace(settings=project, host=None, port=None)
    out, err = io.StringIO(), io.StringIO()
    assert _main.serve(args, out, err) == 1
    assert len(tool.MADE) == 1
    assert "fix the errors above" in err.getvalue()
    assert any("wymcp.E006" in record.getMessage() for record in caplog.records)


def test_check_verbose_lists_each_value_and_its_origin(project, monkeypatch):
    monkeypatch.setenv("WYMCP_PORT", "9000")
    out, err = io.StringIO(), io.StringIO()
    assert _main.check(project, out, err, verbose=True) == 0, err.getvalue()
    lines = out.getvalue().splitlines()
    assert "PORT = 9000  [environment WYMCP_PORT]" in lines
    assert "STATE_SECRET = (hidden)  [module]" in lines
    assert "HOST = '127.0.0.1'  [default]" in lines
    assert lines[-1] == "wymcp check: 0 error(s), 0 warning(s)."
    plain = io.StringIO()
    assert _main.check(project, plain, err) == 0
    told = plain.getvalue().splitlines()
    # the published sizes (tools/list, each tool and action), then the verdict
    assert told[0].startswith("tools/list (2026-07-28): ")
    assert told[-1] == "wymcp check: 0 error(s), 0 warning(s)."
    assert not any(" = " in line for line in told)  # values only with verbose


def test_checks_after_a_build_do_not_build_again(project):
    # GunicornWorker checks the settings of an application it already built
    from wymcp.conf import load_settings, run_checks

    settings = load_settings(project)
    made = (sys.modules.get("counted_tool") or __import__("counted_tool")).MADE
    assert run_checks(settings, built=True) == []
    assert made == []
    assert run_checks(settings) == []
    assert len(made) == 1  # the plain check builds one to test the declarations
