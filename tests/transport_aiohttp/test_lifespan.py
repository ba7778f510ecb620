"""LIFESPAN: entered when the app starts, left when it stops; its value is ctx.state."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any, ClassVar

import aiohttp
import pytest
from aiohttp import web

from modern_post import modern_post
from wymcp.conf import ImproperlyConfigured, Settings
from wymcp.core.schema import (
    Context,
    Prompt,
    PromptArgument,
    Resource,
    Tool,
    action,
)
from wymcp.transport.aiohttp import create_app, setup

EVENTS: list[str] = []


class Shared:
    """What the lifespan yields: one object every call sees."""

    def __init__(self, label: str) -> None:
        self.label = label
        self.calls = 0


@contextlib.asynccontextmanager
async def lifespan(settings: Settings) -> AsyncIterator[Shared]:
    EVENTS.append(f"enter {settings.SERVER_NAME}")
    try:
        yield Shared("managed")
    finally:
        EVENTS.append("leave")


async def generator_lifespan(settings: Settings) -> AsyncIterator[Shared]:
    del settings
    EVENTS.append("enter generator")
    try:
        yield Shared("generator")
    finally:
        EVENTS.append("leave generator")


def not_a_manager(settings: Settings) -> object:
    del settings
    return 42


class Counter(Tool):
    name = "counter"
    description = "Count calls in the shared state."

    @action(description="Count one more call", properties={})
    async def bump(self, data: dict[str, Any], ctx: Context) -> object:
        del data
        state = ctx.state
        state.calls += 1
        return {"label": state.label, "calls": state.calls}


class Label(Resource):
    name = "label"
    uri = "state://label"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        del uri, params
        return str(ctx.state.label)


class Greeting(Prompt):
    name = "greeting"
    arguments: ClassVar = (PromptArgument(name="who"),)

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        return f"{ctx.state.label} greets {arguments.get('who', 'you')}"


async def _result(client: Any, method: str, params: dict[str, Any]) -> Any:
    data, headers = modern_post(method, params)
    response = await client.post("/mcp", data=data, headers=headers)
    assert response.status == 200, await response.text()
    return (await response.json())["result"]


def _settings(factory: object) -> Settings:
    return Settings().evolve(
        TOOLS=[Counter],
        RESOURCES=[Label],
        PROMPTS=[Greeting],
        LIFESPAN=factory,
        SERVER_NAME="lifespan-test",
    )


async def test_every_tool_resource_and_prompt_sees_what_lifespan_yielded(
    aiohttp_client,
):
    EVENTS.clear()
    client = await aiohttp_client(create_app(_settings(lifespan)))
    assert EVENTS == ["enter lifespan-test"]
    bump = {"name": "counter", "arguments": {"action": "bump"}}
    first = await _result(client, "tools/call", bump)
    second = await _result(client, "tools/call", bump)
    assert json.loads(first["content"][0]["text"]) == {"label": "managed", "calls": 1}
    assert json.loads(second["content"][0]["text"]) == {"label": "managed", "calls": 2}
    read = await _result(client, "resources/read", {"uri": "state://label"})
    assert read["contents"][0]["text"] == "managed"
    got = await _result(client, "prompts/get", {"name": "greeting"})
    assert got["messages"][0]["content"]["text"] == "managed greets you"
    assert EVENTS == ["enter lifespan-test"]
    await client.close()
    assert EVENTS == ["enter lifespan-test", "leave"]


async def test_a_plain_async_generator_works_and_setup_app_enters_it(aiohttp_client):
    EVENTS.clear()
    app = web.Application()
    setup(app, _settings(generator_lifespan))
    client = await aiohttp_client(app)
    bump = {"name": "counter", "arguments": {"action": "bump"}}
    result = await _result(client, "tools/call", bump)
    assert json.loads(result["content"][0]["text"])["label"] == "generator"
    await client.close()
    assert EVENTS == ["enter generator", "leave generator"]


async def test_a_dotted_path_names_the_factory(aiohttp_client):
    EVENTS.clear()
    settings = _settings(f"{__name__}.lifespan")
    assert settings.LIFESPAN is lifespan
    client = await aiohttp_client(create_app(settings))
    await client.close()
    assert EVENTS == ["enter lifespan-test", "leave"]


async def test_a_factory_returning_no_manager_stops_the_start():
    runner = web.AppRunner(create_app(_settings(not_a_manager)))
    try:
        with pytest.raises(TypeError, match="LIFESPAN must return an async context"):
            await runner.setup()
    finally:
        await runner.cleanup()


def test_without_lifespan_the_app_adds_no_cleanup_context():
    app = create_app(TOOLS=[Counter])
    assert len(app.cleanup_ctx) == 0


@pytest.mark.parametrize(
    ("value", "problem_id"),
    [(42, "wymcp.E001"), ("no_such_module_xyz.lifespan", "wymcp.E003")],
)
def test_lifespan_must_be_a_callable_or_an_importable_path(value, problem_id):
    with pytest.raises(ImproperlyConfigured) as raised:
        Settings().evolve(LIFESPAN=value)
    (problem,) = raised.value.problems
    assert problem.id == problem_id
    assert "LIFESPAN" in problem.message


_SERVED = """
import contextlib
import os
from pathlib import Path

from wymcp.core.schema import Tool, action


@contextlib.asynccontextmanager
async def lifespan(settings):
    marks = Path(os.environ["LIFESPAN_MARKS"])
    marks.write_text(marks.read_text() + f"enter {os.getpid()}\\n")
    try:
        yield {"pid": os.getpid()}
    finally:
        marks.write_text(marks.read_text() + f"leave {os.getpid()}\\n")


class Who(Tool):
    name = "who"
    description = "Say which worker answers."

    @action(description="Answer the worker's state", properties={})
    async def ask(self, data, ctx):
        return dict(ctx.state)
"""


async def test_wymcp_serve_enters_at_start_and_leaves_at_sigterm(
    tmp_path: Path,
) -> None:
    (tmp_path / "served_lifespan.py").write_text(_SERVED, encoding="utf-8")
    (tmp_path / "served_settings.py").write_text(
        'TOOLS = ["served_lifespan.Who"]\nLIFESPAN = "served_lifespan.lifespan"\n',
        encoding="utf-8",
    )
    marks = tmp_path / "marks.txt"
    marks.write_text("")
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    process = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        "from wymcp.cli import main; raise SystemExit(main())",
        "serve",
        "--settings",
        "served_settings",
        "--port",
        str(port),
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
        env={
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path]),
            "LIFESPAN_MARKS": str(marks),
        },
    )
    try:
        assert process.stdout is not None
        banner = (await process.stdout.readline()).decode()
        assert banner.startswith("wymcp serving")
        assert marks.read_text() == f"enter {process.pid}\n"
        body, headers = modern_post(
            "tools/call", {"name": "who", "arguments": {"action": "ask"}}
        )
        async with (
            aiohttp.ClientSession() as http,
            http.post(f"http://127.0.0.1:{port}/mcp", data=body, headers=headers) as r,
        ):
            answer = await r.json()
        assert json.loads(answer["result"]["content"][0]["text"]) == {
            "pid": process.pid
        }
        process.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(process.wait(), 60) == 0
        assert marks.read_text() == f"enter {process.pid}\nleave {process.pid}\n"
    finally:
        if process.returncode is None:
            process.kill()
            await process.wait()
