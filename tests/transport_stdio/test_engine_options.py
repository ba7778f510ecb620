"""What the stdio transport needs of the engine and of conf: no mirrored-header
checks without HTTP headers, and a session store whose sessions never expire.
"""

from __future__ import annotations

import math

from stdio_harness import modern

from wymcp.conf import build_engine, load_settings
from wymcp.core.server import Exchange, Headers, MemorySessionStore
from wymcp_conformance import Calc, XMcpHeader


class Silent:
    opened = False

    async def open(self, headers=None) -> None:
        self.opened = True

    async def send(self, message, *, event_id=None) -> None:
        raise AssertionError("nothing streams here")


def settings():
    return load_settings(
        None,
        TOOLS=(Calc, XMcpHeader),
        STATE_SECRET="engine-options-test-key-not-a-secret-0123456789",
    )


async def test_without_http_headers_the_mirrored_header_checks_do_not_apply():
    engine = build_engine(settings())
    body = modern(
        "tools/call", {"name": "test_x_mcp_header", "arguments": {"region": "eu"}}
    )
    over_http = await engine.post(Exchange("POST", Headers.of(()), body), Silent())
    assert over_http.status == 400
    assert over_http.body["error"]["code"] == -32020
    headerless = Exchange("POST", Headers.of(()), body, mirrored_headers=False)
    over_stdio = await engine.post(headerless, Silent())
    assert over_stdio.status == 200
    assert over_stdio.body["result"]["isError"] is False


async def test_the_ladder_still_checks_meta_and_version_without_headers():
    engine = build_engine(settings())
    body = modern("tools/list")
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = "1999-01-01"
    reply = await engine.post(
        Exchange("POST", Headers.of(()), body, mirrored_headers=False), Silent()
    )
    assert reply.body["error"]["code"] == -32022


def test_build_engine_takes_engine_options_no_setting_names():
    store = MemorySessionStore(idle_timeout=math.inf, clock=lambda: 0.0)
    engine = build_engine(settings(), session_store=store)
    assert engine.options.session_store is store
    assert engine.options.server_name == "wymcp"


def test_the_one_stdio_client_may_hold_every_stream():
    # MAX_STREAMS_PER_CLIENT tells HTTP clients apart; stdio has one client
    from wymcp.transport.stdio._serve import build_stdio_engine

    engine = build_stdio_engine(
        load_settings(None, TOOLS=(Calc,), MAX_STREAMS=300, MAX_STREAMS_PER_CLIENT=5)
    )
    assert engine.options.max_streams == 300
    assert engine.options.max_streams_per_client == 300
