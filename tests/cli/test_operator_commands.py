"""`wymcp list` and `wymcp call` against the served demo, at both eras."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from wymcp.cli import main

WYMCP = Path(sys.executable).parent / "wymcp"
ERAS = ["2026-07-28", "2025-11-25"]
RELEASE = (Path(__file__).resolve().parents[2] / "VERSION").read_text().strip()


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The tasks demo served by `wymcp serve` on a free port, with its own database."""
    folder = tmp_path_factory.mktemp("demo")
    port = free_port()
    env = {k: v for k, v in os.environ.items() if k != "WYMCP_SETTINGS_MODULE"}
    process = subprocess.Popen(  # noqa: S603 - our own script, fixed arguments
        [
            str(WYMCP),
            "serve",
            "--settings",
            "wymcp_tasks.settings",
            "--port",
            str(port),
        ],
        cwd=folder,
        env={**env, "TASKS_DEMO_DB": str(folder / "tasks.sqlite3")},
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        for line in process.stdout:  # ends when the server does
            if line.strip() == "stop with Ctrl-C":
                break
        assert process.poll() is None, "the demo did not start"
        yield f"http://127.0.0.1:{port}/mcp"
    finally:
        process.terminate()
        process.wait(60)
        if process.stdout is not None:
            process.stdout.close()


@pytest.mark.parametrize("era", ERAS)
def test_list_names_tools_actions_resources_templates_and_prompts(demo, era, capsys):
    assert main(["list", demo, "--protocol", era]) == 0
    out = capsys.readouterr().out
    assert "tools (3):" in out
    assert (
        "    actions: complete, create, delete, export, get, list, search, update"
        in out
    )
    assert "resources (0):" in out
    assert "resource templates (1):\n  task://{id}" in out
    assert "prompts (1):\n  plan(days?, project?)" in out


def test_list_json_is_the_raw_listing(demo, capsys):
    assert main(["list", demo, "--json"]) == 0
    listing = json.loads(capsys.readouterr().out)
    assert [tool["name"] for tool in listing["tools"]] == ["tasks", "projects", "help"]
    assert listing["resourceTemplates"][0]["uriTemplate"] == "task://{id}"


@pytest.mark.parametrize("era", ERAS)
def test_call_prints_the_structured_result(demo, era, capsys):
    data = json.dumps({"title": f"Call at {era}"})
    code = main(["call", demo, "tasks", "create", "--data", data, "--protocol", era])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert json.loads(captured.out)["task"]["title"] == f"Call at {era}"


@pytest.mark.parametrize("era", ERAS)
def test_call_mirrors_an_annotated_argument_in_its_header(demo, era, capsys):
    # projects marks data.project with x-mcp-header: at 2026-07-28 a call
    # without Mcp-Param-Project would be a -32020 error
    data = json.dumps({"project": f"garden-{era}"})
    code = main(["call", demo, "projects", "create", "--data", data, "--protocol", era])
    captured = capsys.readouterr()
    assert code == 0, captured.err
    assert f"garden-{era}" in captured.out


@pytest.mark.parametrize("era", ERAS)
def test_a_refusal_is_printed_readably_and_exits_1(demo, era, capsys):
    data = json.dumps({"txt": "hi"})
    code = main(["call", demo, "tasks", "create", "--data", data, "--protocol", era])
    captured = capsys.readouterr()
    assert code == 1
    assert captured.out == ""
    lines = captured.err.splitlines()
    assert lines[0].startswith("refused (unknown_params): Unknown parameter(s)")
    assert "  unknown: data.txt" in lines
    assert '  see: help {tool: "tasks", action: "create"}' in lines
    assert "input_schema" not in captured.err


@pytest.mark.parametrize("era", ERAS)
def test_a_refusal_prints_the_key_it_guesses_was_meant(demo, era, capsys):
    data = json.dumps({"titel": "hi"})
    code = main(["call", demo, "tasks", "create", "--data", data, "--protocol", era])
    assert code == 1
    lines = capsys.readouterr().err.splitlines()
    assert "  unknown: data.titel" in lines
    assert "  did you mean: data.titel -> data.title" in lines


def test_invalid_values_print_each_path_and_problem(demo, capsys):
    data = json.dumps({"title": "", "due": "soon"})
    assert main(["call", demo, "tasks", "create", "--data", data]) == 1
    err = capsys.readouterr().err
    assert err.startswith("refused (invalid_values): ")
    assert "  data.due: value does not respect the 'date' format" in err
    assert "  data.title: " in err


def test_an_unknown_action_lists_the_valid_ones(demo, capsys):
    assert main(["call", demo, "projects", "rename"]) == 1
    err = capsys.readouterr().err
    assert "refused (unknown_action)" in err
    assert "  valid actions: archive, create, list" in err


def test_json_prints_the_raw_refusal_and_still_exits_1(demo, capsys):
    data = json.dumps({"txt": "hi"})
    assert main(["call", demo, "tasks", "create", "--data", data, "--json"]) == 1
    result = json.loads(capsys.readouterr().out)
    assert result["isError"] is True
    assert json.loads(result["content"][0]["text"])["unknown"] == ["data.txt"]


@pytest.mark.parametrize("era", ERAS)
def test_a_tool_error_prints_its_message(demo, era, capsys):
    data = json.dumps({"id": 99999})
    assert main(["call", demo, "tasks", "get", "--data", data, "--protocol", era]) == 1
    err = capsys.readouterr().err
    assert err.startswith("tool error: ")
    assert "No task has that id." in err


def test_a_plain_tool_takes_its_arguments_as_data(demo, capsys):
    data = json.dumps({"tool": "tasks", "action": "create"})
    assert main(["call", demo, "help", "--data", data]) == 0
    assert "title" in capsys.readouterr().out


@pytest.mark.parametrize("era", ERAS)
def test_an_unknown_tool_is_a_jsonrpc_error_and_exits_1(demo, era, capsys):
    assert main(["call", demo, "nope", "x", "--protocol", era]) == 1
    err = capsys.readouterr().err
    assert err.startswith("wymcp call: JSON-RPC error -32602")


def test_bad_data_is_said_plainly(demo, capsys):
    assert main(["call", demo, "tasks", "create", "--data", "{oops"]) == 1
    assert "--data is not JSON" in capsys.readouterr().err
    assert main(["call", demo, "tasks", "create", "--data", "[1]"]) == 1
    assert "--data must be a JSON object" in capsys.readouterr().err


def test_a_server_that_is_not_there_is_said_plainly(capsys):
    url = f"http://127.0.0.1:{free_port()}/mcp"
    assert main(["list", url]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"wymcp list: cannot reach {url}")
    assert "Traceback" not in err


def test_a_header_must_be_name_colon_value(demo, capsys):
    assert main(["list", demo, "--header", "nonsense"]) == 1
    assert "is not 'Name: value'" in capsys.readouterr().err


def test_a_url_that_is_not_mcp_is_said_plainly(demo, capsys):
    assert main(["list", demo.removesuffix("/mcp") + "/elsewhere"]) == 1
    err = capsys.readouterr().err
    assert "HTTP 404 without a JSON-RPC answer" in err


def test_what_a_server_says_cannot_drive_the_terminal(capsys):
    from wymcp.cli._operator_commands import print_failure

    payload = {
        "error": "invalid_values",
        "message": "bad\x1b[2J",
        "errors": [{"path": "data.\x1b]0;title\x07", "problems": ["p\x9b"]}],
        "help": 'help {tool: "t"}',
    }
    text = json.dumps(payload)
    print_failure(
        {"isError": True, "content": [{"type": "text", "text": text}]}, sys.stderr
    )
    print_failure(
        {"isError": True, "content": [{"type": "text", "text": "x\x1b[1m"}]}, sys.stderr
    )
    err = capsys.readouterr().err
    assert not any(char in err for char in "\x1b\x07\x9b")
    assert "refused (invalid_values): bad\ufffd[2J" in err
    assert "tool error: x\ufffd[1m" in err


@pytest.mark.parametrize(
    "url", ["notaurl", "http://[::1", "ftp://x/mcp", "", "x" * 500]
)
def test_a_url_that_is_no_http_url_is_said_plainly(url, capsys):
    assert main(["list", url]) == 1
    err = capsys.readouterr().err
    assert "is not an http:// or https:// URL" in err
    assert len(err) < 300


async def test_the_operator_client_says_it_is_this_release(serve_app):
    from aiohttp import web

    from wymcp.cli._operator_client import OperatorClient, OperatorError

    seen: list[dict] = []

    async def endpoint(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append(body["params"])
        error = {"code": -32601, "message": "not here"}
        return web.json_response({"jsonrpc": "2.0", "id": body["id"], "error": error})

    app = web.Application()
    app.router.add_post("/mcp", endpoint)
    url = await serve_app(app)
    with pytest.raises(OperatorError, match="initialize failed"):
        async with OperatorClient(url, protocol="2025-11-25"):
            pass
    async with OperatorClient(url) as client:
        await client.request("tools/list")
    legacy, modern = seen
    expected = {"name": "wymcp-cli", "version": RELEASE}
    assert legacy["clientInfo"] == expected
    assert modern["_meta"]["io.modelcontextprotocol/clientInfo"] == expected
