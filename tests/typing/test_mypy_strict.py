"""mypy --strict over typed tools: a handler's type errors are reported."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

FIXTURES = Path(__file__).resolve().parent / "fixtures"


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for the three runs: wymcp is analysed once, not three
    times; each run still checks (and reports) its fixture file."""
    return tmp_path_factory.mktemp("mypy-cache")


def _mypy(name: str, cache: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - a fixed command over a fixture file
        [
            sys.executable,
            "-m",
            "mypy",
            "--strict",
            "--cache-dir",
            str(cache),
            "--follow-imports",
            "silent",
            str(FIXTURES / name),
        ],
        capture_output=True,
        text=True,
        check=False,
    )


def test_a_sound_typed_tool_passes_mypy_strict(cache: Path):
    run = _mypy("clean_tool.py", cache)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "Success: no issues found" in run.stdout


def test_mypy_strict_reports_the_type_errors_in_a_handler(cache: Path):
    run = _mypy("broken_tool.py", cache)
    assert run.returncode == 1, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 2, run.stdout
    assert 'Unsupported operand types for + ("int" and "str")' in run.stdout
    assert 'Argument 1 to "report_progress" of "Context"' in run.stdout
    assert all("broken_tool.py:26" in e or "broken_tool.py:27" in e for e in errors)


def test_ctx_state_is_typed_by_context_s_parameter(cache: Path):
    run = _mypy("state_tool.py", cache)
    assert run.returncode == 1, run.stdout + run.stderr
    errors = [line for line in run.stdout.splitlines() if ": error:" in line]
    assert len(errors) == 1, run.stdout
    assert errors[0].endswith(
        'state_tool.py:25: error: "AppState" has no attribute "greting";'
        ' maybe "greeting"?  [attr-defined]'
    ), run.stdout
