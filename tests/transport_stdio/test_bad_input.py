"""Bad input on stdin, and the end of it: always a JSON-RPC answer or a clean
exit, nothing but JSON-RPC on stdout, and the server keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys

from stdio_harness import FIXTURE, SMALL, WYMCP, child_env, modern


def calc(rid: int) -> dict:
    return modern(
        "tools/call",
        {"name": "calc", "arguments": {"action": "add", "data": {"a": 1, "b": 2}}},
        rid,
    )


async def still_serving(raw, rid: int = 99) -> None:
    await raw.send(calc(rid))
    answer = await raw.receive()
    assert answer["id"] == rid
    assert answer["result"]["structuredContent"] == {"result": 3}


async def test_malformed_json_is_a_parse_error_with_a_null_id(raw):
    for garbage in (b"{not json", b"\xff\xfe\x00", b'{"a": NaN}', b'{"a":1,"a":2}'):
        await raw.send_bytes(garbage + b"\n")
        answer = await raw.receive()
        assert answer["id"] is None
        assert answer["error"]["code"] == -32700
        assert "not json" not in answer["error"]["message"]
    await still_serving(raw)


async def test_a_deep_nesting_is_refused_before_parsing(raw):
    await raw.send_bytes(b"[" * 100_000 + b"]" * 100_000 + b"\n")
    answer = await raw.receive()
    assert answer["error"]["code"] == -32700
    assert "nests deeper" in answer["error"]["message"]
    await still_serving(raw)


async def test_a_batch_or_a_bare_value_is_an_invalid_request(raw):
    for body in ([calc(1), calc(2)], 42, "tools/list"):
        await raw.send(body)
        answer = await raw.receive()
        assert answer["error"]["code"] == -32600
        assert answer.get("id") is None
    await still_serving(raw)


async def test_an_oversized_line_is_skipped_with_an_error_naming_its_id(small):
    big = modern("tools/call", {"name": "calc", "arguments": {"pad": "x" * 50_000}}, 7)
    await small.send_bytes(json.dumps(big).encode() + b"\n")
    answer = await small.receive()
    assert answer["id"] == 7
    assert answer["error"]["code"] == -32600
    assert "BODY_LIMIT (2048 bytes)" in answer["error"]["message"]
    assert len(json.dumps(answer)) < 400
    await still_serving(small)


async def test_an_oversized_line_without_a_leading_id_gets_a_null_id(small):
    await small.send_bytes(b'{"params": {"pad": "' + b"y" * 10_000 + b'"}}\n')
    answer = await small.receive()
    assert answer["id"] is None
    assert answer["error"]["code"] == -32600
    await still_serving(small)


async def test_a_closed_stdin_exits_zero_with_only_json_on_stdout(raw):
    await raw.send(modern("tools/list", rid=1))
    assert (await raw.receive())["id"] == 1
    status, rest, err = await raw.finish()
    assert status == 0
    assert rest == b""
    assert b"Traceback" not in err


async def test_a_call_in_flight_finishes_before_the_exit(raw):
    await raw.send(
        modern("tools/call", {"name": "slow", "arguments": {"seconds": 0.3}}, 5)
    )
    status, rest, _ = await raw.finish()
    assert status == 0
    answers = [json.loads(line) for line in rest.splitlines()]
    assert answers[-1]["id"] == 5
    assert answers[-1]["result"]["content"][0]["text"] == "done after 0.3"


async def test_a_call_past_shutdown_grace_is_cancelled_and_the_exit_is_clean(small):
    await small.send(
        modern("tools/call", {"name": "slow", "arguments": {"seconds": 600}}, 5)
    )
    await asyncio.sleep(0.2)
    status, rest, err = await small.finish()
    assert status == 0
    assert rest == b""
    assert b"still running after SHUTDOWN_GRACE" in err
    assert b"Traceback" not in err


async def test_call_timeout_stops_a_slow_call(small):
    await small.send(
        modern("tools/call", {"name": "slow", "arguments": {"seconds": 600}}, 3)
    )
    answer = await small.receive()
    assert answer["id"] == 3
    assert answer["result"]["isError"] is True
    assert json.loads(answer["result"]["content"][0]["text"])["errorType"] == (
        "call_timeout"
    )


async def test_a_print_from_a_tool_goes_to_stderr(raw):
    await raw.send(modern("tools/call", {"name": "printer"}, 4))
    answer = await raw.receive()
    assert answer["result"]["content"][0]["text"] == "printed"
    status, rest, err = await raw.finish()
    assert status == 0
    assert rest == b""
    assert b"a stray line from a tool" in err


async def test_requests_run_concurrently(raw):
    for rid in (1, 2):
        await raw.send(
            modern("tools/call", {"name": "slow", "arguments": {"seconds": 1}}, rid)
        )
    await raw.send(calc(3))
    order = [(await raw.receive())["id"] for _ in range(3)]
    assert order[0] == 3
    assert sorted(order[1:]) == [1, 2]


async def test_notifications_cancelled_stops_a_call_without_an_answer(raw):
    await raw.send(
        modern("tools/call", {"name": "slow", "arguments": {"seconds": 600}}, 8)
    )
    await raw.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 8, "reason": "changed my mind"},
        }
    )
    await still_serving(raw, 9)
    status, rest, _ = await raw.finish()
    assert status == 0
    assert rest == b""  # no answer for 8, even at the end


async def test_a_cancel_at_2025_stops_the_call_too(raw):
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 0,
            "method": "initialize",
            "params": {"protocolVersion": "2025-11-25", "capabilities": {}},
        }
    )
    assert (await raw.receive())["result"]["protocolVersion"] == "2025-11-25"
    await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await raw.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "tools/call",
            "params": {"name": "slow", "arguments": {"seconds": 600}},
        }
    )
    await raw.send(
        {
            "jsonrpc": "2.0",
            "method": "notifications/cancelled",
            "params": {"requestId": 1},
        }
    )
    status, rest, _ = await raw.finish()
    assert status == 0
    assert [json.loads(line).get("id") for line in rest.splitlines()] == []


async def test_a_second_request_with_an_id_in_flight_is_refused(raw):
    slow = modern("tools/call", {"name": "slow", "arguments": {"seconds": 0.5}}, 6)
    await raw.send(slow)
    await raw.send(slow)
    first = await raw.receive()
    assert first["id"] == 6
    assert first["error"]["code"] == -32600
    assert "still in flight" in first["error"]["message"]
    second = await raw.receive()
    assert second["result"]["content"][0]["text"] == "done after 0.5"


async def test_a_refused_notification_gets_no_answer(raw):
    await raw.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    await raw.send({"jsonrpc": "2.0", "id": "x", "result": {}})
    await still_serving(raw)


async def test_a_raising_tool_leaves_no_traceback_on_stdout(raw):
    await raw.send(modern("tools/call", {"name": "crash"}, 2))
    answer = await raw.receive()
    assert answer["result"]["isError"] is True
    assert "Traceback" not in json.dumps(answer)


async def test_sigterm_ends_the_server_cleanly(raw):
    await still_serving(raw)
    raw.process.send_signal(signal.SIGTERM)
    assert await asyncio.wait_for(raw.process.wait(), 60) == 0


def test_regular_files_and_dev_null_serve_too(tmp_path):
    requests = tmp_path / "in.jsonl"
    requests.write_text(
        json.dumps(modern("tools/list", rid=1)) + "\n" + json.dumps(calc(2)) + "\n"
    )
    answers = tmp_path / "out.jsonl"
    with requests.open("rb") as stdin, answers.open("wb") as stdout:
        done = subprocess.run(  # noqa: S603 - the venv's own command
            [WYMCP, "stdio", "--settings", FIXTURE],
            stdin=stdin,
            stdout=stdout,
            stderr=subprocess.PIPE,
            env=child_env(),
            timeout=120,
            check=False,
        )
    assert done.returncode == 0, done.stderr[-2000:]
    ids = [json.loads(line)["id"] for line in answers.read_text().splitlines()]
    assert sorted(ids) == [1, 2]
    empty = subprocess.run(  # noqa: S603 - the venv's own command
        [WYMCP, "stdio", "--settings", SMALL],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert empty.returncode == 0
    assert empty.stdout == b""


def test_a_missing_settings_module_exits_one_without_touching_stdout():
    done = subprocess.run(  # noqa: S603 - the venv's own command
        [WYMCP, "stdio", "--settings", "no_such_settings_module"],
        stdin=subprocess.DEVNULL,
        capture_output=True,
        env=child_env(),
        timeout=120,
        check=False,
    )
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"cannot be used" in done.stderr
    assert sys.executable  # the venv's interpreter runs the command


async def test_a_request_before_initialize_without_meta_is_told_what_to_do(raw):
    await raw.send({"jsonrpc": "2.0", "id": 1, "method": "tools/list"})
    answer = await raw.receive()
    assert answer["id"] == 1
    assert answer["error"]["code"] == -32600
    assert "Send initialize first" in answer["error"]["message"]
    assert "header" not in answer["error"]["message"]
    await raw.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
    assert (await raw.receive())["result"] == {}
    await still_serving(raw)
