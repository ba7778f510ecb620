"""docs/clients.md's checks run as printed and print what the page says they print.

The HTTP checks (the demo's banner, `wymcp list`/`call`, the SDK in both modes)
run here against the demo served on a free port; the Inspector's need npx.
"""

from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "clients.md"
WYMCP = Path(sys.executable).parent / "wymcp"


def block_after(heading: str) -> str:
    """The first ```bash block after `heading`."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(f"\n{heading}\n")
    match = re.compile(r"```bash\n(.*?)```", re.DOTALL).search(text, start)
    assert match is not None
    return match.group(1)


def expected_lines(block: str) -> list[str]:
    """The `# ...` lines of a block that show output (not the ones that explain)."""
    return [
        line.removeprefix("# ")
        for line in block.splitlines()
        if line.startswith("# ") and not line.startswith(("# set ", "# in "))
    ]


def shows(output: str, expected: str) -> bool:
    lines = [line.rstrip() for line in output.splitlines()]
    if expected.endswith(" ..."):
        return any(line.startswith(expected.removesuffix(" ...")) for line in lines)
    return expected.rstrip() in lines


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def environment() -> dict[str, str]:
    return {k: v for k, v in os.environ.items() if k != "WYMCP_SETTINGS_MODULE"}


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[int, str]]:
    """The demo served as the page says, on a free port: (port, its banner)."""
    folder = tmp_path_factory.mktemp("clients-doc")
    port = free_port()
    command = block_after("Serve the demo in a second terminal for the HTTP sections:")
    first = command.splitlines()[0]
    assert first == ".venv/bin/wymcp serve --settings wymcp_tasks.settings"
    process = subprocess.Popen(  # noqa: S603 - our own script, fixed arguments
        [str(WYMCP), *first.split()[1:], "--port", str(port)],
        cwd=folder,
        env={**environment(), "TASKS_DEMO_DB": str(folder / "tasks.sqlite3")},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    banner: list[str] = []
    try:
        assert process.stdout is not None
        for line in process.stdout:
            banner.append(line)
            if line.strip() == "stop with Ctrl-C":
                break
        yield port, "".join(banner)
    finally:
        process.terminate()
        process.wait(60)
        if process.stdout is not None:
            process.stdout.close()


def run_block(block: str, port: int) -> str:
    script = block.replace("127.0.0.1:8000", f"127.0.0.1:{port}")
    done = subprocess.run(  # noqa: S603 - the page's own commands
        ["/bin/bash", "-c", script],
        cwd=ROOT,
        env=environment(),
        capture_output=True,
        text=True,
        check=False,
    )
    return done.stdout + done.stderr


def test_the_banner_is_the_one_shown(served):
    port, banner = served
    block = block_after("Serve the demo in a second terminal for the HTTP sections:")
    for line in expected_lines(block):
        assert shows(banner, line.replace(":8000", f":{port}")), (line, banner)


def test_wymcp_list_and_call_print_what_the_page_shows(served):
    port, _ = served
    block = block_after("## wymcp itself: `wymcp list` and `wymcp call`")
    output = run_block(block, port)
    assert "tools (3):" in output
    assert '"title": "Renew the passport"' in output
    for line in expected_lines(block):
        assert shows(output, line), (line, output)


def test_the_sdk_check_prints_the_tools_in_both_modes(served):
    port, _ = served
    block = block_after("## The official Python SDK, over HTTP")
    output = run_block(block, port)
    expected = expected_lines(block)
    assert expected == [
        "auto ['tasks', 'projects', 'help']",
        "legacy ['tasks', 'projects', 'help']",
    ]
    for line in expected:
        assert shows(output, line), output
