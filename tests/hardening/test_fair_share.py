"""One client may not monopolise the large-call path (issue 29, attack 8 MEDIUM 3).

A hostile client (from 127.0.0.2) sends large calls whose data takes long in
the off-loop lane (`HOSTILE_WALK` seconds of a typed read, refused at its end)
one after another, while a valid client (127.0.0.1) sends large valid calls.
Before, the hostile body held BODY_MEMORY_BUDGET (the valid call got 503) and
its queued jobs ran first come first served (the valid call waited for all of
them). Now the valid call is answered, after about one hostile item at most;
pings alongside stay answered and the loop watchdog (autouse) is on.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import zlib
from typing import TYPE_CHECKING, Any

import attrs
import pytest

from hardening.conftest import ANSWER_WAIT, Answer, Wire
from wymcp.core.schema import Context, Tool, ToolError, action

if TYPE_CHECKING:
    from collections.abc import Iterator

    from hardening.conftest import Serve

HOSTILE_WALK = 2.0
"""Seconds one hostile call holds the lane (the attack measured 11-12 CPU-s)."""
WAIT_BOUND = HOSTILE_WALK + 1.5
"""Seconds a valid large call may wait: one hostile item, room for a busy machine."""
VALUES = 5000
"""Values of each call's data: past the 4,096 the gates and readers take on the loop."""
HOSTILE = "127.0.0.2"
WALKING = threading.Event()
"""Set by a hostile call's read as it starts (in the lane's thread)."""
MEASURED = threading.Event()
"""Set once a test has measured the valid calls: the hostile reads then end (the
calls still queued need not hold the lane their 2 s each for nobody)."""


def read_slowly(instance: object, attribute: object, value: list[int]) -> None:
    """The hostile data's read: long in the lane (the tool then refuses it)."""
    del instance, attribute, value
    WALKING.set()
    MEASURED.wait(HOSTILE_WALK)  # blocks the lane's thread as a walk would


@attrs.frozen
class Slow:
    v: list[int] = attrs.field(validator=read_slowly)


class Walk(Tool):
    name = "walk"
    description = "Take data whose reading takes long."

    @action(description="Read the values slowly")
    async def read(self, data: Slow, ctx: Context) -> None:
        del data, ctx
        message = "refused after a long walk"
        raise ToolError(message)


@attrs.frozen
class Values:
    v: list[int]


class Total(Tool):
    name = "total"
    description = "Add many integers."

    @action(description="Add the values")
    async def add(self, data: Values, ctx: Context) -> dict[str, int]:
        del ctx
        return {"total": sum(data.v)}  # read in the lane, as the hostile data


@pytest.fixture(autouse=True)
def _fresh_signal() -> Iterator[None]:
    WALKING.clear()
    MEASURED.clear()
    yield
    WALKING.clear()
    MEASURED.clear()


def call_bytes(wire: Wire, name: str, act: str, data: Any) -> bytes:
    params = {"name": name, "arguments": {"action": act, "data": data}}
    body = json.dumps(wire.body("tools/call", params)).encode()
    return wire.request_bytes(body, wire.headers("tools/call", name))


async def send_from(wire: Wire, source: str, data: bytes) -> Answer:
    """Send `data` on a new connection from the address `source`."""
    return await wire.send(data, source=source)


async def hostile_loop(wire: Wire, data: bytes, stop: asyncio.Event) -> list[int]:
    """Send `data` from HOSTILE one call after another until `stop`."""
    statuses = []
    while not stop.is_set():
        answer = await send_from(wire, HOSTILE, data)
        statuses.append(answer.status)
        if answer.status == 200:  # the walk ran, and was refused
            result = answer.json()["result"]
            assert result["isError"] is True, result
    return statuses


async def walking() -> None:
    """Return once a hostile call's read runs in the lane."""
    assert await asyncio.to_thread(WALKING.wait, ANSWER_WAIT)


async def valid_large_call(wire: Wire, data: bytes) -> float:
    """Send the valid large call; assert it was answered; its wait."""
    started = time.monotonic()
    answer = await wire.send(data)
    took = time.monotonic() - started
    assert answer.status == 200, answer  # not 503: the budget is shared
    result = answer.json()["result"]
    assert result["isError"] is False, result
    assert json.loads(result["content"][0]["text"]) == {"total": VALUES}
    return took


async def test_a_body_holding_the_budget_does_not_shut_out_another_client(
    serve: Serve,
) -> None:
    # the budget fits one hostile body, not also the valid one: today's main
    # answered the valid call 503 for as long as hostile bodies came
    wire = await serve(TOOLS=[Walk, Total], BODY_TIMEOUT=4 * HOSTILE_WALK)
    hostile = call_bytes(wire, "walk", "read", {"v": [0] * VALUES})
    valid = call_bytes(wire, "total", "add", {"v": [1] * VALUES})
    budget = len(hostile) + len(valid) // 2
    wire = await serve(
        TOOLS=[Walk, Total],
        BODY_MEMORY_BUDGET=budget,
        BODY_TIMEOUT=4 * HOSTILE_WALK,
    )
    stop = asyncio.Event()
    attack = asyncio.ensure_future(hostile_loop(wire, hostile, stop))
    try:
        await walking()  # the hostile body holds the budget, its read runs
        waits = [await wire.alongside(valid_large_call(wire, valid)) for _ in range(2)]
    finally:
        stop.set()
        MEASURED.set()
        statuses = await attack
    print(f"valid calls waited {[round(w, 2) for w in waits]} s; hostile {statuses}")  # noqa: T201 - the figure
    assert max(waits) <= WAIT_BOUND
    assert 200 in statuses  # the hostile client was served too, in its turn


async def test_one_client_s_queued_jobs_do_not_run_ahead_of_another_s(
    serve: Serve,
) -> None:
    # three hostile calls wait in the lane; first come first served, the
    # valid call waited for all three (about 3 x HOSTILE_WALK)
    wire = await serve(TOOLS=[Walk, Total], BODY_TIMEOUT=4 * HOSTILE_WALK)
    hostile = call_bytes(wire, "walk", "read", {"v": [0] * VALUES})
    valid = call_bytes(wire, "total", "add", {"v": [1] * VALUES})
    stop = asyncio.Event()
    attacks = [
        asyncio.ensure_future(hostile_loop(wire, hostile, stop)) for _ in range(3)
    ]
    try:
        await walking()
        await asyncio.sleep(0.2)  # the other hostile calls wait in the lane
        waits = [await wire.alongside(valid_large_call(wire, valid)) for _ in range(2)]
    finally:
        stop.set()
        MEASURED.set()
        statuses = await asyncio.gather(*attacks)
    print(f"valid calls waited {[round(w, 2) for w in waits]} s; hostile {statuses}")  # noqa: T201 - the figure
    assert max(waits) <= WAIT_BOUND
    assert all(status == 200 for each in statuses for status in each)


async def test_a_body_waiting_its_turn_is_not_timed_out_as_a_slow_body(
    serve: Serve,
) -> None:
    # BODY_TIMEOUT counts the client's sending, not the wait for its turn:
    # part of the body comes, then the rest while it waits; the wait takes
    # it past BODY_TIMEOUT from its first byte, and it is still served (not 408)
    timeout = 1.4
    wire = await serve(TOOLS=[Walk, Total], BODY_TIMEOUT=timeout)
    hostile = call_bytes(wire, "walk", "read", {"v": [0] * VALUES})
    valid = call_bytes(wire, "total", "add", {"v": [1] * VALUES})
    wire = await serve(
        TOOLS=[Walk, Total],
        BODY_MEMORY_BUDGET=len(hostile) + len(valid) // 2,
        BODY_TIMEOUT=timeout,
    )
    attack = asyncio.ensure_future(send_from(wire, HOSTILE, hostile))
    await walking()
    head = valid.index(b"\r\n\r\n") + 4
    reader, writer = await wire.connect()
    try:
        writer.write(valid[: head + 1024])  # not counted yet: no wait
        await writer.drain()
        await asyncio.sleep(1.0)
        writer.write(valid[head + 1024 :])  # counted: waits for the hostile walk
        await writer.drain()
        answer = await wire.read(reader)
    finally:
        writer.close()
        await writer.wait_closed()
    assert answer.status == 200, answer
    assert answer.json()["result"]["isError"] is False
    assert (await attack).status == 200


def padded_call(wire: Wire, size: int) -> bytes:
    """A valid `total` call whose body is `size` bytes (JSON padded with spaces)."""
    params = {"name": "total", "arguments": {"action": "add", "data": {"v": [1]}}}
    body = json.dumps(wire.body("tools/call", params)).encode()
    body += b" " * (size - len(body))
    return wire.request_bytes(body, wire.headers("tools/call", "total"))


def head_end(data: bytes) -> int:
    return data.index(b"\r\n\r\n") + 4


async def served_at_once(wire: Wire, data: bytes) -> float:
    """Send a valid padded call from 127.0.0.1; assert it was answered 200; its wait."""
    started = time.monotonic()
    answer = await wire.send(data)
    took = time.monotonic() - started
    assert answer.status == 200, answer  # not 503: it waited its turn
    result = answer.json()["result"]
    assert json.loads(result["content"][0]["text"]) == {"total": 1}
    return took


async def test_a_part_sent_body_does_not_shut_out_another_client_s_large_call(
    serve: Serve,
) -> None:
    # attack 9 MEDIUM 1: a body let in at once held only what had arrived, so
    # another client's body beside it was let in too and refused (503) part
    # way, for as long as the first one trickled. Now a body holds its
    # Content-Length when let in, and the other one waits its turn.
    timeout = 2.0
    wire = await serve(
        TOOLS=[Total], BODY_MEMORY_BUDGET=1_000_000, BODY_TIMEOUT=timeout
    )
    hostile = padded_call(wire, 900_000)
    reader, writer = await asyncio.open_connection(
        "127.0.0.1", wire.port, local_addr=(HOSTILE, 0)
    )
    try:
        writer.write(hostile[: head_end(hostile) + 500_000])  # then nothing more
        await writer.drain()
        await asyncio.sleep(0.3)  # the server has read it
        took = await wire.alongside(served_at_once(wire, padded_call(wire, 600_000)))
        assert (await wire.read(reader)).status == 408
    finally:
        writer.close()
        await writer.wait_closed()
    print(f"the valid call waited {took:.2f} s")  # noqa: T201 - the figure
    assert took <= timeout + 1.5  # the hostile body's BODY_TIMEOUT, then its turn


async def test_large_bodies_from_many_clients_at_once_each_wait_their_turn(
    serve: Serve,
) -> None:
    # attack 9 MEDIUM 1: twelve 3 MiB bodies at once, 11 answered 503 in 50 ms
    wire = await serve(TOOLS=[Total], BODY_MEMORY_BUDGET=2_000_000, BODY_TIMEOUT=10.0)
    data = padded_call(wire, 700_000)
    sources = [f"127.0.0.{3 + i}" for i in range(6)]
    answers = await wire.alongside(
        asyncio.gather(*(send_from(wire, source, data) for source in sources))
    )
    assert [answer.status for answer in answers] == [200] * len(sources)


async def test_a_body_whose_client_left_gives_back_its_bytes_and_its_turn(
    serve: Serve,
) -> None:
    # attack 9 MEDIUM 2: a holder and a waiter whose clients closed their
    # sockets mid-body; the budget is free again at once, not after BODY_TIMEOUT
    wire = await serve(TOOLS=[Total], BODY_MEMORY_BUDGET=1_000_000, BODY_TIMEOUT=20.0)
    big = padded_call(wire, 900_000)
    holder = await asyncio.open_connection(
        "127.0.0.1", wire.port, local_addr=(HOSTILE, 0)
    )
    waiter = await asyncio.open_connection(
        "127.0.0.1", wire.port, local_addr=("127.0.0.3", 0)
    )
    for part, (_, writer) in ((500_000, holder), (64 * 1024, waiter)):
        writer.write(big[: head_end(big) + part])
        await writer.drain()
        await asyncio.sleep(0.3)  # read: the first holds the budget, the next waits
    for _, writer in (waiter, holder):  # leave, the sockets closed for real
        writer.close()
        await writer.wait_closed()
    took = await wire.alongside(served_at_once(wire, big))
    print(f"the valid call waited {took:.2f} s")  # noqa: T201 - the figure
    assert took <= 2.0  # not the 20 s of BODY_TIMEOUT


async def test_chunked_bodies_from_many_clients_at_once_each_wait_their_turn(
    serve: Serve,
) -> None:
    # of unknown size, a body held what had arrived and grew: the bodies let
    # in beside it were answered 503 part way. Now it holds the most it may
    # be (BODY_LIMIT) till read, then its size, and the others wait their turn.
    wire = await serve(TOOLS=[Total], BODY_MEMORY_BUDGET=2_000_000, BODY_TIMEOUT=10.0)
    call = padded_call(wire, 700_000)
    body = call[head_end(call) :]
    pieces = [body[at : at + 64 * 1024] for at in range(0, len(body), 64 * 1024)]
    framed = b"".join(b"%x\r\n%b\r\n" % (len(piece), piece) for piece in pieces)
    headers = {**wire.headers("tools/call", "total"), "Transfer-Encoding": "chunked"}
    data = wire.request_bytes(framed + b"0\r\n\r\n", headers, length=False)
    sources = [f"127.0.0.{3 + i}" for i in range(4)]
    answers = await wire.alongside(
        asyncio.gather(*(send_from(wire, source, data) for source in sources))
    )
    assert [answer.status for answer in answers] == [200] * len(sources)


async def test_compressed_bodies_from_many_clients_at_once_each_wait_their_turn(
    serve: Serve,
) -> None:
    # attack 9 MEDIUM 1 (deflate): a whole compressed body waited holding its
    # inflated bytes, which counted against what waiting bodies may have
    # read, so all but one or two were answered 503 at once. Now it waits
    # holding its compressed bytes, and is inflated again once let in.
    wire = await serve(
        TOOLS=[Total],
        BODY_MEMORY_BUDGET=1_000_000,
        BODY_TIMEOUT=10.0,
        ACCEPT_CONTENT_ENCODING=("deflate",),
    )
    call = padded_call(wire, 700_000)
    body = zlib.compress(call[head_end(call) :])
    headers = {**wire.headers("tools/call", "total"), "Content-Encoding": "deflate"}
    data = wire.request_bytes(body, headers)
    sources = [f"127.0.0.{3 + i}" for i in range(6)]
    answers = await wire.alongside(
        asyncio.gather(*(send_from(wire, source, data) for source in sources))
    )
    assert [answer.status for answer in answers] == [200] * len(sources)


async def trickle(writer: asyncio.StreamWriter, rest: bytes) -> None:
    """Send `rest` a byte at a time, 5 a second, until the server closes."""
    for at in range(len(rest)):
        await asyncio.sleep(0.2)
        if writer.is_closing():
            return
        writer.write(rest[at : at + 1])
        try:
            await writer.drain()
        except ConnectionError:  # the server answered 408 and closed: done
            return


async def trickling_loop(wire: Wire, source: str, stop: asyncio.Event) -> list[int]:
    """From `source`, bodies that send 64 KiB then trickle, till `stop`; statuses."""
    statuses = []
    data = padded_call(wire, 900_000)
    start = head_end(data) + 64 * 1024
    while not stop.is_set():
        reader, writer = await asyncio.open_connection(
            "127.0.0.1", wire.port, local_addr=(source, 0)
        )
        writer.write(data[:start])
        sending = asyncio.ensure_future(trickle(writer, data[start:]))
        try:
            statuses.append((await wire.read(reader)).status)
        finally:
            sending.cancel()
            writer.close()
            await writer.wait_closed()
    return statuses


async def test_trickling_clients_taking_turns_do_not_keep_a_large_call_out(
    serve: Serve,
) -> None:
    # attack 10 MEDIUM 3: two addresses trickle bodies till their 408, one
    # holding the budget while the other waits ahead of the valid call, and
    # each comes back as soon as answered. The valid body waited at most
    # BODY_TIMEOUT and ran out one turn before its own (503, every time).
    # Now it waits BODY_TIMEOUT per body ahead of it when it came, and one
    # more: the one holding, the one waiting, then its turn (200).
    timeout = 1.5
    wire = await serve(
        TOOLS=[Total], BODY_MEMORY_BUDGET=1_000_000, BODY_TIMEOUT=timeout
    )
    stop = asyncio.Event()
    attackers = [asyncio.ensure_future(trickling_loop(wire, HOSTILE, stop))]
    await asyncio.sleep(0.3)  # it holds the budget; the next one waits past its 408
    attackers.append(asyncio.ensure_future(trickling_loop(wire, "127.0.0.3", stop)))
    await asyncio.sleep(0.3)  # ahead of the valid call: its turn comes first
    try:
        took = await wire.alongside(served_at_once(wire, padded_call(wire, 600_000)))
    finally:
        stop.set()
        statuses = await asyncio.gather(*attackers)
    print(f"the valid call waited {took:.2f} s; the trickling ones: {statuses}")  # noqa: T201 - the figure
    assert {*statuses[0], *statuses[1]} <= {408, 503}, statuses  # never let through
    assert 408 in statuses[0] + statuses[1], statuses  # they trickled till timed out
    assert took <= 3 * timeout + 1.0  # the holder's time, the waiter's, its turn
