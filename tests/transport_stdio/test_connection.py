"""The connection's bookkeeping: in-flight ids, the leading id of an oversized line."""

from __future__ import annotations

import asyncio
import json

import pytest
from stdio_harness import modern

from wymcp.conf import load_settings
from wymcp.transport.stdio import build_stdio_engine
from wymcp.transport.stdio._connection import Connection, leading_id
from wymcp.transport.stdio._line_writer import LineWriter
from wymcp_conformance import Calc


class Collected:
    """An Output that keeps what is written."""

    full = False

    def __init__(self) -> None:
        self.data = bytearray()

    def write(self, data: bytes) -> None:
        self.data += data

    async def drain(self) -> None:
        return None

    async def aclose(self) -> None:
        return None


def connection() -> tuple[Connection, Collected]:
    settings = load_settings(
        None, TOOLS=(Calc,), STATE_SECRET="connection-test-key-not-a-secret-0123456789"
    )
    output = Collected()
    made = Connection(
        build_stdio_engine(settings),
        LineWriter(output),
        body_limit=1024,
        depth_limit=100,
        shutdown_grace=1.0,
    )
    return made, output


async def test_a_call_cancelled_before_it_started_frees_its_id():
    made, output = connection()
    body = modern(
        "tools/call", {"name": "calc", "arguments": {"action": "add", "data": {}}}, 1
    )
    made._spawn(body)
    made._cancel({"requestId": 1})
    await asyncio.sleep(0.05)
    assert made._in_flight == {}
    assert output.data == b""


@pytest.mark.parametrize(
    ("prefix", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":17,"method":"tools/call"', 17),
        (b'  { "id" : "abc" , "jsonrpc":"2.0"', "abc"),
        (b'{"jsonrpc": "2.0", "id": -5}', -5),
        (b'{"method":"x","id":1,', None),
        (b'{"id":99999999999999999999,', None),
        (b'{"id":"' + b"x" * 300 + b'",', None),
        (b'{"id":"\xff",', None),
        (b"[1,2,3]", None),
    ],
)
def test_the_leading_id_of_an_oversized_line(prefix, expected):
    assert leading_id(prefix) == expected


class Chunks:
    """A ChunkSource of `data` in 64 KiB pieces, then the end."""

    def __init__(self, data: bytes) -> None:
        self._pieces = [data[i : i + 65536] for i in range(0, len(data), 65536)]

    async def read(self) -> bytes:
        await asyncio.sleep(0)
        return self._pieces.pop(0) if self._pieces else b""


@pytest.mark.parametrize(
    "item",
    [
        b"{}",  # one full garbage collection walks the ~1.4 million lists of the
        # two below in one step (docs/security.md): a looser bound, 1 s
        pytest.param(b"[]", marks=pytest.mark.loop_stall_bound(1.0)),
        pytest.param(b"[{}]", marks=pytest.mark.loop_stall_bound(1.0)),
    ],
)
async def test_a_line_of_many_tiny_values_does_not_hold_the_loop(item, loop_watchdog):
    # 4 MiB (the default BODY_LIMIT) of the shapes with the most objects per
    # byte: over 64 KiB a line is decoded in a worker thread
    settings = load_settings(
        None, TOOLS=(Calc,), STATE_SECRET="connection-test-key-not-a-secret-0123456789"
    )
    output = Collected()
    made = Connection(
        build_stdio_engine(settings),
        LineWriter(output),
        body_limit=4 * 1024 * 1024,
        depth_limit=100,
        shutdown_grace=1.0,
    )
    head = json.dumps(modern("tools/list", {}, 7)).encode()[:-2]  # open params
    items = (item + b",") * ((4 * 1024 * 1024 - 300) // (len(item) + 1))
    line = head + b',"x":[' + items + item + b"]}}\n"
    await made.read(Chunks(line))
    await made.shutdown()
    answer = json.loads(output.data.splitlines()[0])
    assert answer["id"] == 7
    assert answer["result"]["tools"]
    print(f"longest stall: {loop_watchdog.longest * 1000:.0f} ms")  # noqa: T201 - the measured figure
