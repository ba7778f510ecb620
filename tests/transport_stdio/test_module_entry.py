"""`python -m wymcp.transport.stdio`: the same server, without the HTTP transport."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from stdio_harness import FIXTURE, child_env, modern


def test_the_module_serves_like_the_command():
    request = json.dumps(modern("tools/list", rid=1)) + "\n"
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "wymcp.transport.stdio", "--settings", FIXTURE],
        input=request.encode(),
        capture_output=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["result"]["tools"][-1]["name"] == "help"
    assert b"aiohttp" not in done.stderr


def test_the_module_never_imports_aiohttp():
    code = (
        "import sys\n"
        "import wymcp.transport.stdio.__main__ as entry\n"
        "status = entry.main(['--settings', 'stdio_small_settings'])\n"
        "print('aiohttp' in sys.modules, status, file=sys.stderr)\n"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stderr.strip().endswith(b"False 0")
    assert done.stdout == b""


def test_the_wymcp_stdio_command_answers_without_loading_aiohttp():
    # The `wymcp` command (wymcp-cli) loads each transport with its subcommand:
    # `stdio`, what desktop clients launch, never imports the HTTP transport.
    code = (
        "import sys\n"
        "from wymcp.cli import main\n"
        "status = main(['stdio', '--settings', 'stdio_small_settings'])\n"
        "loaded = sorted(m for m in sys.modules if 'aiohttp' in m)\n"
        "print('LOADED', status, *loaded, file=sys.stderr)\n"
    )
    request = json.dumps(modern("tools/list", rid=1)) + "\n"
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code],
        input=request.encode(),
        capture_output=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["result"]["tools"][-1]["name"] == "help"
    last = done.stderr.decode().strip().splitlines()[-1]
    assert last == "LOADED 0", last  # not one module named *aiohttp*


def test_without_a_settings_module_run_says_how_to_name_one(monkeypatch):
    import io

    from wymcp.transport.stdio import run

    monkeypatch.delenv("WYMCP_SETTINGS_MODULE", raising=False)
    err = io.StringIO()
    assert run(None, err=err) == 1
    assert "--settings myproject.settings" in err.getvalue()


def test_a_settings_error_stops_run_before_it_serves(tmp_path, monkeypatch):
    import io

    from wymcp.transport.stdio import run

    (tmp_path / "broken_stdio_settings.py").write_text(
        "TOOLS = ['no_such_module.Tool']\n"
    )
    monkeypatch.syspath_prepend(str(tmp_path))
    err = io.StringIO()
    assert run("broken_stdio_settings", err=err) == 1
    assert "no_such_module" in err.getvalue()


def test_without_stderr_the_server_still_serves_json_only():
    request = json.dumps(modern("tools/call", {"name": "printer"}, 1)) + "\n"
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [
            sys.executable,
            "-c",
            (
                "import os, sys\n"
                "os.close(2)\n"
                "from wymcp.transport.stdio.__main__ import main\n"
                f"sys.exit(main(['--settings', '{FIXTURE}']))\n"
            ),
        ],
        input=request.encode(),
        stdout=subprocess.PIPE,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 0
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["result"]["content"][0]["text"] == "printed"


def test_started_without_stderr_the_server_still_serves_json_only():
    request = json.dumps(modern("tools/call", {"name": "printer"}, 1)) + "\n"
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed arguments
        [sys.executable, "-m", "wymcp.transport.stdio", "--settings", FIXTURE],
        input=request.encode(),
        stdout=subprocess.PIPE,
        env=child_env(),
        timeout=120,
        check=False,
        preexec_fn=lambda: os.close(2),
    )
    assert done.returncode == 0
    [answer] = [json.loads(line) for line in done.stdout.splitlines()]
    assert answer["result"]["content"][0]["text"] == "printed"


def test_stdio_does_not_warn_about_state_secret_but_tells_the_rest(tmp_path):
    # W002 (STATE_SECRET unset) cannot matter for one process with one client
    (tmp_path / "no_secret_stdio.py").write_text("SERVER_NAME = 'alone'\n")
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "wymcp.transport.stdio",
            "--settings",
            "no_secret_stdio",
        ],
        input=b"",
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert b"wymcp.W005" in done.stderr  # TOOLS is empty: still told
    assert b"wymcp.W002" not in done.stderr


def test_wymcp_stdio_runs_no_http_check_that_wymcp_check_reports():
    # W012 (MAX_STREAMS not below MAX_CONNECTIONS) is the HTTP transport's:
    # `wymcp check` reports it, `wymcp stdio` (one client, no connections) not.
    from pathlib import Path

    wymcp = str(Path(sys.executable).with_name("wymcp"))
    env = {**child_env(), "WYMCP_MAX_STREAMS": "1000", "WYMCP_MAX_CONNECTIONS": "1000"}
    settings = ["--settings", "stdio_small_settings"]
    checked = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [wymcp, "check", *settings],
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert checked.returncode == 0, checked.stderr[-2000:]
    assert b"wymcp.W012 (warning)" in checked.stdout
    served = subprocess.run(  # noqa: S603 - our own script, fixed arguments
        [wymcp, "stdio", *settings],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=env,
        timeout=120,
        check=False,
    )
    assert served.returncode == 0, served.stderr[-2000:]
    assert b"wymcp stdio: serving" in served.stderr
    assert b"W012" not in served.stderr
