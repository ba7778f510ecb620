"""Whether a client message reaches a question or call held elsewhere.

`answered_or_cancelled` says what a message answers ("a") or cancels ("c");
`Session.holds` whether this worker's copy of the session holds it. A broker
relays the rest to the worker that does.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from wymcp.core.server import Session, answered_or_cancelled, is_asked_id
from wymcp.core.server._jsonrpc import asked_id

ASKED = "srv-AbCdEfGhIjK"  # the shape `asked_id` makes
CANCEL = {"jsonrpc": "2.0", "method": "notifications/cancelled"}


def answer(rid: object) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": rid, "result": {}}


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (answer(ASKED), ("a", ASKED)),
        ({"jsonrpc": "2.0", "id": ASKED, "error": {"code": 1}}, ("a", ASKED)),
        (answer("srv-else"), None),  # not an id this server makes
        (answer("srv-AbCdEfGhIjK-more"), None),
        (answer(3), None),
        (CANCEL, None),
        ({**CANCEL, "params": {"requestId": 7}}, ("c", 7)),
        ({**CANCEL, "params": {"requestId": "r-1"}}, ("c", "r-1")),
        ({**CANCEL, "params": {"requestId": "x" * 200}}, ("c", "x" * 200)),
        ({**CANCEL, "params": {"requestId": "x" * 201}}, None),
        ({**CANCEL, "params": {"requestId": True}}, None),
        ({**CANCEL, "params": {"requestId": 1.5}}, None),
        ({**CANCEL, "params": "not an object"}, None),
        ({"jsonrpc": "2.0", "method": "notifications/initialized"}, None),
        ({"jsonrpc": "2.0", "id": 1, "method": "tools/call"}, None),
        (["not", "a", "message"], None),
        ("text", None),
    ],
)
def test_only_answers_to_asked_ids_and_cancels_may_be_held_elsewhere(body, expected):
    assert answered_or_cancelled(body) == expected


def test_the_ids_questions_are_asked_with_have_the_answered_shape():
    assert all(is_asked_id(asked_id()) for _ in range(200))
    assert answered_or_cancelled(answer(asked_id())) is not None
    assert not is_asked_id("srv-" + "a" * 12)
    assert not is_asked_id(7)


async def test_a_session_holds_its_pending_questions_and_calls_in_flight():
    session = Session(id="S" * 43, protocol_version="2025-11-25")
    asked = answered_or_cancelled(answer(ASKED))
    cancel = answered_or_cancelled({**CANCEL, "params": {"requestId": 7}})
    assert asked is not None
    assert cancel is not None
    assert not session.holds(*asked)
    assert not session.holds(*cancel)
    loop = asyncio.get_running_loop()
    session.pending[ASKED] = loop.create_future()
    session.in_flight[7] = loop.create_task(asyncio.sleep(0))
    assert session.holds(*asked)
    assert session.holds(*cancel)
    # a call's id is not a question's, nor the other way round
    assert not session.holds("a", 7)
    assert not session.holds("c", ASKED)
    await session.in_flight[7]
