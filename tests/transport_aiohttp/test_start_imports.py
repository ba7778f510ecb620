"""What a server loads to start and answer a call: no module it does not need.

`cryptography` waits for the first sealed state, `cattrs` for the first typed
action, `importlib.metadata` for `wymcp --version` (each costs milliseconds of
every start).
"""

from __future__ import annotations

import json
import subprocess
import sys

_SERVE_AND_CALL = """
import asyncio, json, sys
from aiohttp import web
from wymcp.conf import Settings, build_engine
from wymcp.core.schema import Action, Tool
from wymcp.core.server import MODERN, Exchange, Headers
from wymcp.transport.aiohttp import _serve
from wymcp.transport.aiohttp._setup import mount


class Calc(Tool):
    name = "calc"
    description = "Add."
    actions = {"add": Action(description="Add", properties={"a": {"type": "number"}})}

    async def run_action(self, action, data, ctx):
        return data["a"] + 1


class Sink:
    opened = False

    async def open(self, headers=None):
        pass

    async def send(self, message, *, event_id=None):
        pass


async def main():
    settings = Settings(TOOLS=(Calc,), STATE_SECRET="s" * 32)
    engine = build_engine(settings)
    mount(web.Application(), settings, engine)
    meta = {
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {},
    }
    params = {"name": "calc", "arguments": {"action": "add", "data": {"a": 1}}}
    body = {"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {**params, "_meta": meta}}
    headers = Headers.of(
        [("MCP-Protocol-Version", MODERN), ("Mcp-Method", "tools/call"),
         ("Mcp-Name", "calc")]
    )
    reply = await engine.post(Exchange("POST", headers, body), Sink())
    assert reply.body["result"]["content"][0]["text"] == "2", reply.body


asyncio.run(main())
print(json.dumps(sorted(sys.modules)))
"""


def test_serving_a_call_loads_no_cryptography_cattrs_or_metadata() -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter, a fixed program
        [sys.executable, "-c", _SERVE_AND_CALL],
        capture_output=True,
        text=True,
        check=False,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    loaded = set(json.loads(done.stdout))
    assert "wymcp.transport.aiohttp._serve" in loaded  # the test loaded it all
    tops = {name.split(".")[0] for name in loaded}
    assert "cryptography" not in tops
    assert "cattrs" not in tops
    assert "importlib.metadata" not in loaded
