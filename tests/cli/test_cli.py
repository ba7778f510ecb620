"""The wymcp command: --version, -C, the project on sys.path, banner, config, dev."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path

import aiohttp
import pytest

from notes_project import write_notes_project
from wymcp.cli import main
from wymcp.cli._versions import version_lines

ROOT = Path(__file__).resolve().parents[2]
WYMCP = Path(sys.executable).parent / "wymcp"


@pytest.fixture
def readme_project(tmp_path: Path) -> Iterator[Path]:
    """A folder holding a user's myapp/ package: a tool module and settings."""
    package = tmp_path / "project" / "myapp"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    write_notes_project(package)
    yield package.parent
    for name in [m for m in sys.modules if m == "myapp" or m.startswith("myapp.")]:
        del sys.modules[name]


def clean_env(**extra: str) -> dict[str, str]:
    """The environment without PYTHONPATH or a settings module, as a user's shell."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"PYTHONPATH", "WYMCP_SETTINGS_MODULE"}
    }
    return {**env, **extra}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


# ------------------------------------------------------------------ --version


RELEASE = (Path(__file__).resolve().parents[2] / "VERSION").read_text().strip()


def test_version_prints_the_release_then_each_installed_distribution(capsys):
    with pytest.raises(SystemExit) as exited:
        main(["--version"])
    assert exited.value.code == 0
    first, *lines = capsys.readouterr().out.splitlines()
    assert first == f"wymcp {RELEASE}"
    for name in ("wymcp-cli", "wymcp-conf", "wymcp-core-schema"):
        assert f"{name} {RELEASE}" in lines
    assert lines == sorted(lines)


def test_version_names_a_distribution_of_another_release():
    lines = version_lines(
        [
            ("wymcp-cli", "0.2.0"),
            ("wymcp-conf", "0.1.0"),
            ("wymcp-core-server", "0.2.0"),
            ("wymcp-transport-aiohttp", "0.3.0"),
        ]
    )
    # the release is the command's (wymcp-cli), not the HTTP transport's
    assert lines == [
        "wymcp 0.2.0",
        "wymcp-cli 0.2.0",
        "wymcp-conf 0.1.0 (not 0.2.0: install wymcp-conf==0.2.0)",
        "wymcp-core-server 0.2.0",
        (
            "wymcp-transport-aiohttp 0.3.0 (not 0.2.0: install "
            "wymcp-transport-aiohttp==0.2.0)"
        ),
    ]


def test_version_without_the_command_distribution_says_so():
    assert version_lines([]) == ["wymcp: no wymcp distribution is installed"]


def test_version_runs_from_the_installed_script():
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [str(WYMCP), "--version"], capture_output=True, text=True, check=False
    )
    assert done.returncode == 0
    lines = done.stdout.splitlines()
    assert lines[0] == f"wymcp {RELEASE}"
    assert f"wymcp-cli {RELEASE}" in lines


# ------------------------------------------------- the project on sys.path


def test_check_finds_the_readme_project_in_the_current_directory(readme_project):
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [str(WYMCP), "check", "--settings", "myapp.settings"],
        cwd=readme_project,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert "wymcp.E005" not in done.stderr
    assert done.returncode == 0, done.stderr
    assert "0 error(s)" in done.stdout


def test_dash_c_changes_to_the_project_first(readme_project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [
            str(WYMCP),
            "-C",
            str(readme_project),
            "check",
            "--settings",
            "myapp.settings",
        ],
        cwd=elsewhere,
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr


def test_dash_c_to_a_missing_folder_is_said_plainly(tmp_path, capsys):
    assert main(["-C", str(tmp_path / "nope"), "check"]) == 2
    err = capsys.readouterr().err
    assert "cannot change to" in err
    assert "Traceback" not in err


async def read_banner(stream: asyncio.StreamReader) -> list[str]:
    """The lines a server prints up to `stop with Ctrl-C` (bounded wait)."""
    lines: list[str] = []
    while not lines or lines[-1] != "stop with Ctrl-C":
        line = await asyncio.wait_for(stream.readline(), 60)
        if not line:
            raise AssertionError(f"the server ended before its banner: {lines}")
        lines.append(line.decode().strip())
    return lines


async def test_serve_finds_the_readme_project_and_answers(readme_project):
    port = free_port()
    process = await asyncio.create_subprocess_exec(
        str(WYMCP),
        "serve",
        "--settings",
        "myapp.settings",
        "--port",
        str(port),
        cwd=readme_project,
        env=clean_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
    )
    try:
        assert process.stdout is not None
        banner = await read_banner(process.stdout)
        assert banner[0] == f"wymcp serving http://127.0.0.1:{port}/mcp"
        assert "tools: notes, help" in banner
        # a server without resources or prompts lists none of them
        for era in ("2026-07-28", "2025-11-25"):
            listed = await asyncio.create_subprocess_exec(
                str(WYMCP),
                "list",
                f"http://127.0.0.1:{port}/mcp",
                "--protocol",
                era,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.PIPE,
            )
            out, err = await asyncio.wait_for(listed.communicate(), 60)
            assert listed.returncode == 0, err.decode()
            assert "tools (2):" in out.decode()
            assert "resources (0):" in out.decode()
            assert "prompts (0):" in out.decode()
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0


async def test_stdio_finds_the_readme_project(readme_project):
    pytest.importorskip("wymcp.transport.stdio")
    mcp = pytest.importorskip("mcp")
    server = mcp.StdioServerParameters(
        command=str(WYMCP),
        args=["stdio", "--settings", "myapp.settings"],
        cwd=str(readme_project),
        # the SDK passes only a few variables (PATH, HOME, ...) to the server
        env={
            "PATH": os.environ["PATH"],
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},
        },
    )
    async with mcp.Client(server) as client:
        answer = await client.call_tool(
            "notes", {"action": "add", "data": {"text": "hi"}}
        )
    assert json.loads(answer.content[0].text) == {"id": 1}


# ------------------------------------------------------------------ the banner

SERVED = """
from wymcp.core.schema import Action, Tool
from wymcp.core.server import Prompt, Resource

class Echo(Tool):
    name = "echo"
    description = "Echo."
    actions = {
        "say": Action(description="Say it", properties={"text": {"type": "string"}})
    }

    async def run_action(self, action, data, ctx):
        return {"said": data.get("text", "")}

class Readme(Resource):
    uri = "doc://readme"
    name = "readme"

    async def read(self, uri, params, ctx):
        return "hello"

class Page(Resource):
    uri_template = "doc://pages/{n}"
    name = "page"

    async def read(self, uri, params, ctx):
        return params["n"]

class Greet(Prompt):
    name = "greet"
    description = "Greet someone."

    async def render(self, arguments, ctx):
        return "hi"
"""


def test_the_banner_lists_resources_templates_and_prompts(tmp_path):
    from wymcp.conf import build_engine, load_settings
    from wymcp.transport.aiohttp._serve import banner

    (tmp_path / "bannerapp.py").write_text(SERVED)
    (tmp_path / "bannerapp_settings.py").write_text(
        textwrap.dedent(
            """
            TOOLS = ["bannerapp.Echo"]
            RESOURCES = ["bannerapp.Readme", "bannerapp.Page"]
            PROMPTS = ["bannerapp.Greet"]
            """
        )
    )
    sys.path.insert(0, str(tmp_path))
    try:
        settings = load_settings("bannerapp_settings")
        lines = banner(settings, build_engine(settings))
    finally:
        sys.path.remove(str(tmp_path))
        for name in ("bannerapp", "bannerapp_settings"):
            sys.modules.pop(name, None)
    assert [line.strip() for line in lines[2:6]] == [
        "tools: echo, help",
        "resources: doc://readme",
        "resource templates: doc://pages/{n}",
        "prompts: greet",
    ]


def test_a_long_banner_list_is_cut():
    from wymcp.transport.aiohttp._serve import _names

    assert _names([]) == "none"
    names = [f"t{i}" for i in range(25)]
    assert _names(names).endswith("t19, and 5 more")


# ---------------------------------------------------------------- wymcp config


@pytest.mark.parametrize("client", ["claude", "cursor", "vscode"])
def test_config_prints_a_stdio_entry_that_runs(
    client, readme_project, capsys, monkeypatch
):
    monkeypatch.chdir(readme_project)
    monkeypatch.delenv("WYMCP_SETTINGS_MODULE", raising=False)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["config", client, "--settings", "myapp.settings"]) == 0
    captured = capsys.readouterr()
    document = json.loads(captured.out)
    key = "servers" if client == "vscode" else "mcpServers"
    assert list(document) == [key]
    entry = document[key]["myapp"]
    expected = {"command", "args"} | ({"type"} if client == "vscode" else set())
    assert set(entry) == expected
    if client == "vscode":
        assert entry["type"] == "stdio"
    assert Path(entry["command"]).is_absolute()
    assert entry["args"] == [
        "-C",
        str(readme_project),
        "stdio",
        "--settings",
        "myapp.settings",
    ]
    # the same command, with check for stdio, works from any directory
    check_args = [*entry["args"][:2], "check", *entry["args"][3:]]
    done = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [entry["command"], *check_args],
        cwd="/",
        env=clean_env(),
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert "add the entry to" in captured.err


@pytest.mark.parametrize(
    ("client", "entry"),
    [
        (
            "claude",
            {
                "command": "npx",
                "args": ["-y", "mcp-remote@0.15.1", "http://127.0.0.1:8000/mcp"],
            },
        ),
        ("cursor", {"url": "http://127.0.0.1:8000/mcp"}),
        ("vscode", {"type": "http", "url": "http://127.0.0.1:8000/mcp"}),
    ],
)
def test_config_with_a_url(client, entry, capsys, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    url = "http://127.0.0.1:8000/mcp"
    assert main(["config", client, "--url", url, "--name", "tasks"]) == 0
    document = json.loads(capsys.readouterr().out)
    key = "servers" if client == "vscode" else "mcpServers"
    assert document == {key: {"tasks": entry}}


def test_config_refuses_settings_that_cannot_load(tmp_path, capsys, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["config", "cursor", "--settings", "no_such_wymcp_module"]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert "wymcp.E005" in captured.err


def test_config_without_settings_or_url_says_both(capsys, monkeypatch):
    monkeypatch.setattr(sys, "path", list(sys.path))
    monkeypatch.delenv("WYMCP_SETTINGS_MODULE", raising=False)
    assert main(["config", "claude"]) == 1
    err = capsys.readouterr().err
    assert "--settings" in err
    assert "--url" in err


# ------------------------------------------------------------------- wymcp dev

NOTES_V2 = 'return {"id": len(self.notes), "version": 2}'


async def start_dev(project: Path, port: int) -> asyncio.subprocess.Process:
    """`wymcp dev --settings myapp.settings --port PORT` in `project`, piped."""
    return await asyncio.create_subprocess_exec(
        str(WYMCP),
        "dev",
        "--settings",
        "myapp.settings",
        "--port",
        str(port),
        cwd=project,
        env=clean_env(),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )


async def test_dev_restarts_on_a_changed_tool_file(readme_project):
    port = free_port()
    url = f"http://127.0.0.1:{port}/mcp"
    process = await start_dev(readme_project, port)
    try:
        assert process.stdout is not None
        await read_banner(process.stdout)
        assert await add_note(url) == {"id": 1}
        tools = readme_project / "myapp" / "tools.py"
        source = tools.read_text()
        assert 'return {"id": len(self.notes)}' in source
        tools.write_text(source.replace('return {"id": len(self.notes)}', NOTES_V2))
        stamp = tools.stat().st_mtime_ns + 2_000_000_000
        os.utime(tools, ns=(stamp, stamp))
        await read_banner(process.stdout)
        assert await add_note(url) == {"id": 1, "version": 2}
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0
    assert process.stderr is not None
    err = (await process.stderr.read()).decode()
    assert "myapp/tools.py changed; restarting" in err
    assert "Traceback" not in err


async def add_note(url: str) -> object:
    body = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "notes",
            "arguments": {"action": "add", "data": {"text": "hi"}},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": "2026-07-28",
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    }
    headers = {
        "MCP-Protocol-Version": "2026-07-28",
        "Mcp-Method": "tools/call",
        "Mcp-Name": "notes",
        "Accept": "application/json, text/event-stream",
    }
    async with (
        aiohttp.ClientSession() as http,
        http.post(url, json=body, headers=headers) as response,
    ):
        answer = await response.json()
    return json.loads(answer["result"]["content"][0]["text"])


def test_the_dev_watcher_sees_additions_changes_and_removals(tmp_path):
    from wymcp.cli._reload import changed, snapshot

    (tmp_path / "a.py").write_text("")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "b.py").write_text("")
    (tmp_path / ".hidden").mkdir()
    (tmp_path / ".hidden" / "c.py").write_text("")
    (tmp_path / "venv").mkdir()
    (tmp_path / "venv" / "pyvenv.cfg").write_text("")
    (tmp_path / "venv" / "d.py").write_text("")
    (tmp_path / "notes.txt").write_text("")
    before = snapshot(tmp_path)
    assert sorted(Path(p).name for p in before) == ["a.py", "b.py"]
    (tmp_path / "a.py").unlink()
    (tmp_path / "e.py").write_text("")
    os.utime(tmp_path / "pkg" / "b.py", ns=(1, 1))
    after = snapshot(tmp_path)
    assert [Path(p).name for p in changed(before, after)] == ["a.py", "e.py", "b.py"]
    assert len(snapshot(tmp_path, limit=1)) == 1


async def read_until(stream: asyncio.StreamReader, text: str) -> list[str]:
    """The lines of a stream up to the first that holds `text` (bounded wait)."""
    lines: list[str] = []
    while not lines or text not in lines[-1]:
        line = await asyncio.wait_for(stream.readline(), 60)
        if not line:
            raise AssertionError(f"the stream ended before {text!r}: {lines}")
        lines.append(line.decode())
    return lines


async def test_dev_waits_out_a_broken_file_and_serves_once_it_is_fixed(
    readme_project,
):
    port = free_port()
    process = await start_dev(readme_project, port)
    try:
        assert process.stdout is not None
        assert process.stderr is not None
        await read_banner(process.stdout)
        tools = readme_project / "myapp" / "tools.py"
        source = tools.read_text()
        tools.write_text(source + "\ndef broken(:\n")
        stamp = tools.stat().st_mtime_ns + 2_000_000_000
        os.utime(tools, ns=(stamp, stamp))
        stopped = await read_until(process.stderr, "the server stopped")
        assert "myapp.tools" in "".join(stopped)
        tools.write_text(source.replace('return {"id": len(self.notes)}', NOTES_V2))
        os.utime(tools, ns=(stamp + 2_000_000_000, stamp + 2_000_000_000))
        await read_banner(process.stdout)
        assert await add_note(f"http://127.0.0.1:{port}/mcp") == {"id": 1, "version": 2}
    finally:
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0


@pytest.mark.parametrize("client", ["claude", "cursor", "vscode"])
def test_config_passes_environment_variables_to_a_launched_server(
    client, readme_project, capsys, monkeypatch
):
    monkeypatch.chdir(readme_project)
    monkeypatch.setattr(sys, "path", list(sys.path))
    argv = ["config", client, "--settings", "myapp.settings", "--env", "A=1=2"]
    assert main([*argv, "--env", "B="]) == 0
    document = json.loads(capsys.readouterr().out)
    entry = next(iter(next(iter(document.values())).values()))
    assert entry["env"] == {"A": "1=2", "B": ""}


@pytest.mark.parametrize(
    ("extra", "message"),
    [
        (["--settings", "myapp.settings", "--env", "NOPE"], "is not NAME=VALUE"),
        (["--settings", "myapp.settings", "--env", "=1"], "is not NAME=VALUE"),
        (["--url", "http://127.0.0.1:8000/mcp", "--env", "A=1"], "not --url"),
    ],
)
def test_config_refuses_a_bad_env(extra, message, readme_project, capsys, monkeypatch):
    monkeypatch.chdir(readme_project)
    monkeypatch.setattr(sys, "path", list(sys.path))
    assert main(["config", "cursor", *extra]) == 1
    captured = capsys.readouterr()
    assert captured.out == ""
    assert message in captured.err
