"""The pytest plugin: a user's project runs under plain pytest in both asyncio modes.

The sample project is copied out of the repository and run in a subprocess,
as its author would run it; so are a project that configures nothing and one
that overrides the `wymcp_settings` fixture. In this process, the plugin is
loaded through its entry point like in any project.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from wymcp.testing import Client, assert_succeeded

SAMPLE = Path(__file__).parent / "sample_project"


def start_pytest(project: Path, *args: str) -> subprocess.Popen[str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"WYMCP_SETTINGS_MODULE", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"}
    }
    return subprocess.Popen(  # noqa: S603 - our own interpreter, fixed arguments
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", *args],
        cwd=project,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def run_pytest(project: Path, *args: str) -> tuple[int, str]:
    process = start_pytest(project, *args)
    out, err = process.communicate()
    return process.returncode, out + err


def test_the_sample_project_passes_under_plain_pytest_in_both_modes(tmp_path):
    runs = {}
    for mode in ("auto", "strict"):
        project = tmp_path / mode / "shop"
        shutil.copytree(SAMPLE, project)
        runs[mode] = start_pytest(project, "-o", f"asyncio_mode={mode}")
    for mode, process in runs.items():
        out, err = process.communicate()
        assert process.returncode == 0, (mode, out + err)
        assert "10 passed" in out, mode


def test_a_project_that_configures_nothing_still_starts(tmp_path):
    (tmp_path / "test_plain.py").write_text(
        "def test_one():\n    assert 1 + 1 == 2\n", encoding="utf-8"
    )
    code, output = run_pytest(tmp_path, "--strict-markers")
    assert code == 0, output
    assert "1 passed" in output
    assert "wymcp" not in output


def test_a_failed_assertion_names_what_the_answer_was(tmp_path):
    shutil.copytree(SAMPLE / "shop", tmp_path / "shop")
    (tmp_path / "conftest.py").write_text(
        textwrap.dedent(
            """
            import pytest
            from wymcp.conf import Settings
            from shop.tools import Stock

            @pytest.fixture
            def wymcp_settings():
                return Settings().evolve(TOOLS=[Stock])
            """
        ),
        encoding="utf-8",
    )
    (tmp_path / "test_wrong.py").write_text(
        textwrap.dedent(
            """
            from wymcp.testing import assert_refused

            async def test_expects_the_wrong_path(wymcp_client):
                answer = await wymcp_client.call("stock", "lookup", {"sku": ""})
                assert_refused(answer, "invalid_values", path="data.name")
            """
        ),
        encoding="utf-8",
    )
    code, output = run_pytest(tmp_path, "-o", "asyncio_mode=auto")
    assert code == 1, output
    assert "expected the refusal to name 'data.name'" in output, output
    assert "['data.sku']" in output, output


@pytest.fixture
def wymcp_settings(settings):
    """Override the plugin's fixture: serve this package's test tools."""
    return settings


async def test_the_fixture_serves_the_overridden_settings(wymcp_client):
    assert isinstance(wymcp_client, Client)
    assert wymcp_client.protocol_version == "2026-07-28"
    answer = await wymcp_client.call("weather", arguments={"region": "west"})
    assert assert_succeeded(answer) == "west: sunny for 1 day(s)"


@pytest.mark.wymcp(protocol_version="2025-06-18", log_level="info")
async def test_the_marker_chooses_the_revision_and_log_level(wymcp_client):
    assert wymcp_client.session_id is not None
    answer = await wymcp_client.call(
        "orders", "place", {"customer": "c", "items": [{"sku": "a", "qty": 1}]}
    )
    assert [log["level"] for log in answer.logs] == ["info"]


def test_the_documented_example_is_the_sample_project():
    docs = (Path(__file__).parents[2] / "docs" / "testing.md").read_text("utf-8")
    for name in ("pytest.ini", "shop/settings.py", "shop/tools.py"):
        assert (SAMPLE / name).read_text("utf-8") in docs, name
    assert (SAMPLE / "tests" / "test_stock.py").read_text("utf-8") in docs


@pytest.mark.wymcp(protocol_version="2025-11-25", log_level="debug")
class TestMarkersOnAClass:
    async def test_the_class_marker_applies(self, wymcp_client):
        assert wymcp_client.protocol_version == "2025-11-25"
        assert wymcp_client.log_level == "debug"

    @pytest.mark.wymcp(protocol_version="2025-03-26")
    async def test_the_closest_marker_wins(self, wymcp_client):
        assert wymcp_client.protocol_version == "2025-03-26"
        assert wymcp_client.log_level == "debug"
