"""Each package installed alone from the built wheels, into a clean venv, and used.

Users compose only what they need: the gates in a plain handler, the stdio
transport without any HTTP, the HTTP transport with its extras, the test helpers
in a project of their own. Each environment holds exactly what its packages ask
for (their Requires-Dist, walked) and never a library of a layer it does not use.
The `wymcp` command (`wymcp-cli`) brings stdio; HTTP is its `[http]` extra.
The Redis broker is its own distribution (`wymcp-broker-redis`), which the HTTP
package's `[redis]` extra brings for this release.
"""

from __future__ import annotations

import json
import shutil
import tomllib
from pathlib import Path

from wheel_envs import RELEASE, ROOT, Env

from notes_project import write_notes_project
from redis_server import server_binary, start_server, stop_server

PROJECTS = Path(__file__).parent / "projects"
PACKAGES = sorted(
    tomllib.loads(path.read_text())["project"]["name"]
    for path in ROOT.glob("packages/*/pyproject.toml")
)
HTTP = {"aiohttp", "aiohttp-cors", "yarl", "multidict", "gunicorn"}
BROKER = {"redis", "wymcp-broker-redis"}
MODERN_META = {
    "io.modelcontextprotocol/protocolVersion": "2026-07-28",
    "io.modelcontextprotocol/clientCapabilities": {},
}


def readme_project(where: Path) -> Path:
    """A user's `myapp` (a tool module and settings), written in `where`."""
    (where / "myapp").mkdir()
    write_notes_project(where / "myapp")
    return where


def assert_holds_only_what_is_needed(env: Env, *requirements: str) -> set[str]:
    installed = set(env.versions())
    assert installed == env.needed(requirements)
    return installed


def test_the_gates_alone_check_a_plain_handlers_body(install, tmp_path):
    env = install("wymcp-core-gates")
    installed = assert_holds_only_what_is_needed(env, "wymcp-core-gates")
    wymcp = {name for name in installed if name.startswith("wymcp-")}
    assert wymcp == {"wymcp-core-gates", "wymcp-core-schema"}
    assert not installed & (HTTP | {"msgspec", "cryptography", "redis", "pytest"})
    assert env.versions()["wymcp-core-gates"] == RELEASE

    done = env.run(env.python, PROJECTS / "orders_handler.py", cwd=tmp_path)
    assert done.returncode == 0, done.stderr.decode()
    answers = json.loads(done.stdout)
    status, placed = answers["good"]
    assert status == "201 Created"
    # the gates read 2.0 as the integer 2 and merged the default
    assert placed == {
        "customer": "ada",
        "items": [{"sku": "A1", "qty": 2}],
        "gift": False,
    }
    status, refusal = answers["bad"]
    assert status == "422 Unprocessable Entity"
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown"] == ["itmes"]
    assert refusal["did_you_mean"] == {"itmes": "items"}
    assert "asyncio" not in answers["loaded"]


def test_the_stdio_transport_alone_serves_an_exchange_without_http(install, tmp_path):
    env = install("wymcp-transport-stdio")
    installed = assert_holds_only_what_is_needed(env, "wymcp-transport-stdio")
    wymcp = {name for name in installed if name.startswith("wymcp-")}
    assert wymcp == {
        "wymcp-conf",
        "wymcp-core-gates",
        "wymcp-core-schema",
        "wymcp-core-server",
        "wymcp-transport-stdio",
    }
    assert not installed & (HTTP | BROKER | {"pyjwt", "pytest"})

    project = readme_project(tmp_path)
    requests = [
        (
            "tools/call",
            {"name": "notes", "arguments": {"action": "add", "data": {"text": "hi"}}},
        ),
        (
            "tools/call",
            {"name": "notes", "arguments": {"action": "get", "data": {"id": 1}}},
        ),
        (
            "tools/call",
            {"name": "notes", "arguments": {"action": "add", "data": {"txt": "hi"}}},
        ),
    ]
    lines = [
        json.dumps(
            {
                "jsonrpc": "2.0",
                "id": rid,
                "method": method,
                "params": {**params, "_meta": MODERN_META},
            }
        )
        for rid, (method, params) in enumerate(requests, start=1)
    ]
    done = env.run(
        env.python,
        "-m",
        "wymcp.transport.stdio",
        "--settings",
        "myapp.settings",
        cwd=project,
        stdin=("\n".join(lines) + "\n").encode(),
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    answers = {a["id"]: a["result"] for a in map(json.loads, done.stdout.splitlines())}
    texts = {rid: json.loads(a["content"][0]["text"]) for rid, a in answers.items()}
    assert texts[1] == {"id": 1}
    assert texts[2] == {"text": "hi", "pinned": False}
    assert [answers[rid]["isError"] for rid in (1, 2, 3)] == [False, False, True]
    assert texts[3]["error"] == "unknown_params"
    assert texts[3]["did_you_mean"] == {"data.txt": "data.text"}


def test_the_command_without_its_http_extra_serves_stdio_without_aiohttp(
    install, tmp_path
):
    env = install("wymcp-cli")
    installed = assert_holds_only_what_is_needed(env, "wymcp-cli")
    assert {name for name in installed if name.startswith("wymcp-")} == {
        "wymcp-cli",
        "wymcp-conf",
        "wymcp-core-gates",
        "wymcp-core-schema",
        "wymcp-core-server",
        "wymcp-transport-stdio",
    }
    assert not installed & (HTTP | {"redis", "pyjwt", "pytest"})

    project = readme_project(tmp_path)
    request = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {
            "name": "notes",
            "arguments": {"action": "add", "data": {"text": "hi"}},
            "_meta": MODERN_META,
        },
    }
    done = env.run(
        env.bin("wymcp"),
        "stdio",
        "--settings",
        "myapp.settings",
        cwd=project,
        stdin=(json.dumps(request) + "\n").encode(),
    )
    assert done.returncode == 0, done.stderr.decode()[-2000:]
    [answer] = map(json.loads, done.stdout.splitlines())
    assert json.loads(answer["result"]["content"][0]["text"]) == {"id": 1}
    # the HTTP commands say what to install instead of failing on an import
    served = env.run(
        env.bin("wymcp"), "serve", "--settings", "myapp.settings", cwd=project
    )
    assert served.returncode == 1
    assert b"pip install 'wymcp-cli[http]'" in served.stderr
    assert b"Traceback" not in served.stderr


SECURED = """\
from wymcp.transport.aiohttp import JwtValidator

TOOLS = ["myapp.tools.Notes"]
AUTH = JwtValidator(
    issuer="https://auth.example.com",
    audience="https://mcp.example.com/mcp",
    key="a-shared-hs256-secret-for-this-test-only-0123456789",
    algorithms=["HS256"],
)
AUTH_AUTHORIZATION_SERVERS = ["https://auth.example.com"]
AUTH_RESOURCE = "https://mcp.example.com/mcp"
STATE_SECRET = "install-test-state-secret-not-a-real-one-0123"
BROKER = "redis://127.0.0.1:6379/0"
"""


def test_the_http_transport_with_redis_and_jwt_serves_a_brokered_session(
    install, tmp_path
):
    env = install("wymcp-cli[http]", "wymcp-transport-aiohttp[redis,jwt]")
    installed = assert_holds_only_what_is_needed(
        env, "wymcp-cli[http]", "wymcp-transport-aiohttp[redis,jwt]"
    )
    # `[redis]` is the alias of wymcp-broker-redis for this release
    assert {"aiohttp", "pyjwt", "cryptography"} | BROKER <= installed
    assert not installed & {"pytest", "gunicorn", "wymcp-testing"}
    # every package but the test helpers, each the release; the command says so
    versions = env.versions()
    assert {n: v for n, v in versions.items() if n.startswith("wymcp-")} == {
        name: RELEASE for name in PACKAGES if name != "wymcp-testing"
    }
    project = readme_project(tmp_path)
    done = env.run(env.bin("wymcp"), "--version", cwd=project)
    assert done.returncode == 0, done.stderr.decode()
    lines = done.stdout.decode().splitlines()
    assert lines[0] == f"wymcp {RELEASE}"
    assert lines[1:] == [
        f"{name} {RELEASE}" for name in PACKAGES if name != "wymcp-testing"
    ]
    # installed, not linked to the workspace
    where = env.run(
        env.python, "-c", "import wymcp.conf; print(wymcp.conf.__file__)", cwd=project
    )
    assert where.stdout.decode().startswith(str(env.root))

    # the README's project checks; so does one with AUTH (pyjwt) and BROKER (redis)
    (project / "myapp" / "secured.py").write_text(SECURED)
    for module in ("myapp.settings", "myapp.secured"):
        checked = env.run(env.bin("wymcp"), "check", "--settings", module, cwd=project)
        assert checked.returncode == 0, (module, checked.stderr.decode())
        assert b"E010" not in checked.stderr

    server = start_server(server_binary(), tmp_path)
    try:
        # the user's script sits in their project, beside myapp/
        shutil.copy(PROJECTS / "secured_client.py", project)
        done = env.run(
            env.python,
            project / "secured_client.py",
            "myapp.secured",
            server.url,
            cwd=project,
        )
        assert done.returncode == 0, done.stderr.decode()[-2000:]
        answers = json.loads(done.stdout)
        keys = _keys_in(server.url)
    finally:
        stop_server(server)
    assert answers["refused"] == 401
    assert answers["challenge"].startswith("Bearer ")
    assert answers["noted"] == 202
    called = answers["called"]["result"]
    assert json.loads(called["content"][0]["text"]) == {"id": 1}
    assert keys > 0  # the session lived in Redis


BROKERED = """\
TOOLS = ["myapp.tools.Notes"]
STATE_SECRET = "install-test-state-secret-not-a-real-one-0123"
BROKER = "redis://127.0.0.1:6379/0"
"""


def test_the_http_transport_alone_pulls_no_redis_and_names_the_broker_package(
    install, tmp_path
):
    env = install("wymcp-transport-aiohttp")
    installed = assert_holds_only_what_is_needed(env, "wymcp-transport-aiohttp")
    assert "aiohttp" in installed
    assert not installed & (BROKER | {"pyjwt", "pytest", "wymcp-testing"})

    project = readme_project(tmp_path)
    (project / "myapp" / "brokered.py").write_text(BROKERED)
    build = "from wymcp.transport.aiohttp import create_app; create_app()"
    served = env.run(env.python, "-c", build, cwd=project)
    assert served.returncode == 0, served.stderr.decode()[-2000:]
    # BROKER set without the broker: setup raises E010 naming the package
    done = env.run(
        env.python,
        "-c",
        "import os; os.environ['WYMCP_SETTINGS_MODULE'] = 'myapp.brokered'; " + build,
        cwd=project,
    )
    err = done.stderr.decode()
    assert done.returncode != 0
    assert "ImproperlyConfigured" in err
    assert "wymcp.E010" in err
    assert "pip install wymcp-broker-redis" in err


def test_the_command_without_the_broker_says_e010_for_broker(install, tmp_path):
    env = install("wymcp-cli[http]")
    installed = assert_holds_only_what_is_needed(env, "wymcp-cli[http]")
    assert not installed & BROKER

    project = readme_project(tmp_path)
    (project / "myapp" / "brokered.py").write_text(BROKERED)
    # BROKER set without the broker: E010 says which package, never a traceback
    for command in ("check", "serve"):
        done = env.run(
            env.bin("wymcp"), command, "--settings", "myapp.brokered", cwd=project
        )
        err = done.stdout.decode() + done.stderr.decode()
        assert done.returncode != 0, err
        assert "wymcp.E010" in err
        assert "pip install wymcp-broker-redis" in err
        assert "Traceback" not in err


def _keys_in(url: str) -> int:
    import redis

    client = redis.Redis.from_url(url)
    try:
        return int(client.dbsize())
    finally:
        client.close()


def test_the_test_helpers_run_a_users_project_under_pytest(install, tmp_path):
    env = install("wymcp-testing")
    installed = assert_holds_only_what_is_needed(env, "wymcp-testing")
    # the HTTP transport under test, not the command nor stdio
    assert {name for name in installed if name.startswith("wymcp-")} == set(
        PACKAGES
    ) - {"wymcp-cli", "wymcp-transport-stdio", "wymcp-broker-redis"}
    assert {"pytest", "pytest-asyncio", "aiohttp"} <= installed
    assert not installed & (BROKER | {"pyjwt", "gunicorn"})

    project = tmp_path / "shop"
    shutil.copytree(ROOT / "tests" / "testing" / "sample_project", project)
    done = env.run(
        env.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", cwd=project
    )
    out = done.stdout.decode()
    assert done.returncode == 0, out + done.stderr.decode()
    assert "10 passed" in out
    # the plugin came in through its entry point, from the env, not the workspace
    plugins = (
        env.run(
            env.python,
            "-c",
            "import importlib.metadata as m, wymcp.testing;"
            "print([e.value for e in m.entry_points(group='pytest11')]);"
            "print(wymcp.testing.__file__)",
            cwd=project,
        )
        .stdout.decode()
        .splitlines()
    )
    assert "wymcp.testing._plugin" in plugins[0]
    assert plugins[1].startswith(str(env.root))
