"""`wymcp stats` against a hostile or merely large metrics server (issue 27).

The whole body is read within `--timeout`, only the two counters it prints are
parsed (linearly, bounded lines and labels), and server bytes never reach the
terminal raw.
"""

from __future__ import annotations

import asyncio
import time
import tracemalloc
from collections.abc import AsyncIterator, Awaitable, Callable

import pytest

from ops_tools import Jobs
from wymcp.cli import main
from wymcp.cli._stats_command import StatsError, refusals
from wymcp.transport.aiohttp import create_app

Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]

HEAD = "# TYPE wymcp_tool_calls_total counter\n"
RHEAD = "# TYPE wymcp_tool_refusals_total counter\n"


def _body(tools: int) -> bytes:
    """`tools` tools with 1000 calls each and tool i refused i times."""
    calls = "".join(
        f'wymcp_tool_calls_total{{tool="t{i}",action="a",outcome="ok"}} 1000.0\n'
        for i in range(tools)
    )
    refused = "".join(
        f'wymcp_tool_refusals_total{{tool="t{i}",action="a",gate="invalid_values"}}'
        f" {i}.0\n"
        for i in range(tools)
    )
    return (HEAD + calls + RHEAD + refused).encode()


def _head(length: int) -> bytes:
    return (
        "HTTP/1.1 200 OK\r\nContent-Type: text/plain; version=0.0.4\r\n"
        f"Content-Length: {length}\r\n\r\n"
    ).encode()


@pytest.fixture
async def raw_server() -> AsyncIterator[Callable[[Handler], Awaitable[str]]]:
    """`await raw_server(handler)`: a metrics URL answered by `handler`."""
    servers: list[asyncio.Server] = []

    async def start(handler: Handler) -> str:
        async def serve(
            reader: asyncio.StreamReader, writer: asyncio.StreamWriter
        ) -> None:
            await reader.readuntil(b"\r\n\r\n")
            try:
                await handler(reader, writer)
            except ConnectionError:
                pass
            finally:
                writer.close()

        server = await asyncio.start_server(serve, "127.0.0.1", 0)
        servers.append(server)
        port = server.sockets[0].getsockname()[1]
        return f"http://127.0.0.1:{port}/metrics"

    yield start
    for server in servers:
        server.close()


async def _stats(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    status = await asyncio.to_thread(main, ["stats", *args])
    printed = capsys.readouterr()
    return status, printed.out + printed.err


async def test_a_body_sent_in_pieces_is_read_whole(raw_server, capsys):
    body = _body(50)
    cut = body.index(b"\n", len(body) // 2) + 1

    async def two_pieces(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(len(body)) + body[:cut])
        await writer.drain()
        await asyncio.sleep(0.3)
        writer.write(body[cut:])
        await writer.drain()

    status, printed = await _stats(capsys, await raw_server(two_pieces), "--top", "1")
    assert status == 0, printed
    assert printed.splitlines()[0] == (
        "tools/call: 50000, refused by a gate or middleware: 1225"
    )


async def test_a_large_body_is_read_whole(raw_server, capsys):
    body = _body(4000)  # about 600 KiB: past what aiohttp buffers at once
    assert len(body) > 512 * 1024

    async def in_chunks(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(len(body)))
        for at in range(0, len(body), 16384):
            writer.write(body[at : at + 16384])
            await writer.drain()

    status, printed = await _stats(capsys, await raw_server(in_chunks), "--top", "1")
    assert status == 0, printed
    lines = printed.splitlines()
    assert lines[0] == "tools/call: 4000000, refused by a gate or middleware: 7998000"
    assert lines[2].split()[-3:] == ["t3999", "a", "invalid_values"]


async def test_a_trickling_server_is_an_error_not_zero(raw_server, capsys):
    async def trickle(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(10**6))
        for _ in range(100):
            writer.write(b"#")
            await writer.drain()
            await asyncio.sleep(0.1)

    status, printed = await _stats(capsys, await raw_server(trickle), "--timeout", "1")
    assert status == 1
    assert "no whole answer within 1 s" in printed
    assert "tools/call" not in printed


async def test_parse_errors_escape_the_servers_bytes(raw_server, capsys):
    body = (
        RHEAD + 'wymcp_tool_refusals_total{tool="t"} 1\x1b]0;pwned\x07\x00\n'
    ).encode()

    async def hostile(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(len(body)) + body)
        await writer.drain()

    status, printed = await _stats(capsys, await raw_server(hostile))
    assert status == 1
    assert "not Prometheus text (line 2" in printed
    assert "\\x1b]0;pwned\\x07\\x00" in printed
    assert not {"\x1b", "\x07", "\x00"} & set(printed)


def test_many_labels_on_one_line_are_refused_at_the_bound():
    line = "wymcp_tool_calls_total{" + ",".join(f'l{i}="v"' for i in range(2_000))
    with pytest.raises(StatsError, match="more than 16 labels"):
        refusals(line + "} 1\n")
    with pytest.raises(StatsError, match="longer than 65536 characters"):
        refusals("wymcp_tool_refusals_total " + "1" * 70_000 + "\n")


def test_other_lines_are_not_parsed_and_escapes_are_read():
    hostile = "x{" + ",".join(f'l{i}="v"' for i in range(50_000)) + "} 1\n"
    text = (
        hostile
        + 'wymcp_tool_calls_total{tool="a\\"b",action="x\\\\y\\n", outcome="ok"} 3\n'
        + 'wymcp_tool_refusals_total{tool="a\\"b",action="x\\\\y\\n",gate="g",} 2 17\n'
        + "wymcp_tool_calls_total_created 1.7e9\n"
    )
    calls, rows = refusals(text)
    assert calls == {('a"b', "x\\y\n"): 3.0}
    assert rows == [(2.0, 'a"b', "x\\y\n", "g")]


def _parse_peak(text: str) -> int:
    tracemalloc.start()
    try:
        refusals(text)
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


@pytest.mark.parametrize("line", ["ab\n", "\n"])
def test_the_parse_holds_no_more_than_the_text(line: str):
    # splitting the text into lines took ~26x the body: 1.66 GB for 63 MiB of
    # `ab` lines (attack 6); the scan now jumps between the counters' lines
    small, large = line * (4 << 20), line * (8 << 20)
    peaks = [_parse_peak(small), _parse_peak(large)]
    assert peaks[1] < len(small) // 8  # no copy of the text, let alone 26
    assert peaks[1] < 2 * peaks[0] + 64 * 1024


def test_the_parse_is_part_of_the_deadline():
    # parsing 63 MiB took 9.2 CPU-s after --timeout had been met (attack 6)
    text = HEAD + 'wymcp_tool_calls_total{tool="t",action="a"} 1\n' * 5_000
    assert refusals(text, deadline=time.monotonic() + 3600)[0] == {("t", "a"): 5000.0}
    with pytest.raises(StatsError, match="not parsed within --timeout"):
        refusals(text, deadline=time.monotonic() - 1)


@pytest.mark.parametrize(
    "value",
    # `1e400` printed `inf` and `nan%`, `+1` and `1.5` were read (issue 27 LOW 8)
    [
        *("NaN", "nan", "+Inf", "-Inf", "-7", "-1", "1_000", "0x10", "1e", "1e400"),
        *("+1", "1.5", "1e-400", "12e-1", "1e999999999"),
    ],
)
def test_a_value_that_is_not_a_count_is_refused(value: str):
    with pytest.raises(StatsError, match="is not a count"):
        refusals(f'wymcp_tool_refusals_total{{tool="t",action="a",gate="g"}} {value}\n')


async def test_a_value_that_is_not_a_count_exits_1_with_no_traceback(
    raw_server, capsys
):
    body = b'wymcp_tool_calls_total{tool="t",action="a"} 1e400\n'

    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(len(body)) + body)
        await writer.drain()

    status, printed = await _stats(capsys, await raw_server(answer))
    assert status == 1
    assert printed == (
        "wymcp stats: the answer is not Prometheus text"
        " (line 1: the value 1e400 is not a count)\n"
    )


@pytest.mark.parametrize(
    ("written", "count"),
    [("1234567.0", 1234567), ("1.234567e+06", 1234567), ("120e-1", 12), ("0", 0)],
)
def test_a_whole_count_written_as_a_float_is_read_exactly(written: str, count: int):
    text = (
        f'wymcp_tool_calls_total{{tool="t",action="a"}} {written}\n'
        f'wymcp_tool_refusals_total{{tool="t",action="a",gate="g"}} {written}\n'
    )
    calls, rows = refusals(text)
    assert calls == {("t", "a"): count}
    assert all(type(value) is int for value in calls.values())
    assert rows == ([(count, "t", "a", "g")] if count else [])


async def test_a_count_past_a_million_is_printed_whole(raw_server, capsys):
    # prometheus_client writes counters as floats; `:g` printed 1.23457e+06
    body = (
        b'wymcp_tool_calls_total{tool="t",action="a"} 2469134.0\n'
        b'wymcp_tool_refusals_total{tool="t",action="a",gate="g"} 1.234567e+06\n'
    )

    async def answer(_: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        writer.write(_head(len(body)) + body)
        await writer.drain()

    status, printed = await _stats(capsys, await raw_server(answer))
    assert status == 0, printed
    lines = printed.splitlines()
    assert lines[0] == "tools/call: 2469134, refused by a gate or middleware: 1234567"
    assert lines[2].split() == ["1234567", "50.0%", "t", "a", "g"]


def test_a_series_given_twice_is_summed_and_the_first_line_is_read():
    series = 'wymcp_tool_refusals_total{tool="t",action="a",gate="g"} '
    text = (
        f'{series}2\n{series}3.5e1\nwymcp_tool_calls_total{{tool="t",action="a"}} 100'
    )
    calls, rows = refusals(text)
    assert rows == [(37, "t", "a", "g")]
    assert calls == {("t", "a"): 100}


async def test_the_token_comes_from_the_environment(serve_app, capsys, monkeypatch):
    token = "e" * 40
    url = await serve_app(create_app(TOOLS=[Jobs], METRICS=True, METRICS_TOKEN=token))
    metrics = url.removesuffix("/mcp") + "/metrics"
    monkeypatch.setenv("WYMCP_METRICS_TOKEN", token)
    status, printed = await _stats(capsys, metrics)
    assert status == 0, printed
    assert printed.startswith("tools/call: 0")
