"""Asking the client: input_required rounds at 2026, requests on the call's
stream at 2025, and the capability checks of both.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Mapping
from typing import Any, ClassVar

import pytest

from wymcp.core.schema import Tool
from wymcp.core.server import (
    ClientRequestError,
    Exchange,
    Headers,
    InputRequest,
    Prompt,
    Resource,
    ToolContext,
)
from wymcp.core.server._asking import MAX_QUESTIONS, session_asker
from wymcp.core.server._revision import LEGACY, revision
from wymcp.core.server._session import Session

NAME_SCHEMA = {
    "type": "object",
    "properties": {"name": {"type": "string"}},
    "required": ["name"],
}


class Greet(Tool):
    name = "greet"
    description = "Asks for a name."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        answer = await ctx.elicit("Your name?", NAME_SCHEMA, key="user_name")
        return f"Hello, {answer['content']['name']}!"


class Everything(Tool):
    name = "everything"
    description = "Asks three things at once, with state."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        answers = await ctx.ask(
            {
                "e": InputRequest.elicitation("Confirm?", NAME_SCHEMA),
                "s": InputRequest.sampling("Capital of France?", max_tokens=10),
                "r": InputRequest.roots(),
            },
            state={"round": 1},
        )
        return f"state={ctx.request_state} keys={sorted(answers)}"


class Rounds(Tool):
    name = "rounds"
    description = "Two rounds driven by state."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        if ctx.request_state is None:
            await ctx.elicit("Step 1", NAME_SCHEMA, key="step1", state={"step": 1})
        if ctx.request_state == {"step": 1}:
            await ctx.elicit("Step 2", NAME_SCHEMA, key="step2", state={"step": 2})
        return "state-ok"


class Sampler(Tool):
    name = "sampler"
    description = "Needs sampling."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        result = await ctx.sample("Say hi")
        return result["content"]["text"]


class Polite(Tool):
    name = "polite"
    description = "Falls back when the client cannot be asked."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        try:
            roots = await ctx.list_roots()
        except ClientRequestError as error:
            return f"no roots: {error.reason}"
        return f"roots: {len(roots['roots'])}"


class TwoQuestions(Tool):
    name = "two_questions"
    description = "Asks twice in a row under the default key."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        first = await ctx.elicit("First name?", NAME_SCHEMA)
        second = await ctx.elicit("Last name?", NAME_SCHEMA)
        return f"{first['content']['name']} {second['content']['name']}"


class SampleThenRoots(Tool):
    name = "sample_then_roots"
    description = "Samples, then lists the roots."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        said = await ctx.sample("Say hi")
        roots = await ctx.list_roots()
        return f"{said['content']['text']} / {len(roots['roots'])} roots"


class Pair(Tool):
    name = "pair"
    description = "Asks two things at once."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        answers = await ctx.ask(
            {
                "x": InputRequest.elicitation("x?", NAME_SCHEMA),
                "y": InputRequest.elicitation("y?", NAME_SCHEMA),
            }
        )
        return "+".join(answers[k]["content"]["name"] for k in ("x", "y"))


class Endless(Tool):
    name = "endless"
    description = "Asks until the engine stops it."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {"count": {"type": "integer"}},
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        count = arguments.get("count", 100)
        for index in range(count):
            await ctx.elicit(f"Question {index}?", NAME_SCHEMA)
        return f"{count} answered"


class Bulky(Tool):
    name = "bulky"
    description = "Carries more state than a requestState may hold."

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        await ctx.elicit("Go?", NAME_SCHEMA, state="x" * 70_000)
        return "never"


class Ask(Prompt):
    name = "ask"

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        answer = await ctx.elicit("Context?", NAME_SCHEMA, key="user_context")
        return f"context {answer['content']['name']}"


class Secret(Resource):
    name = "secret"
    uri = "test://secret"

    async def read(self, uri: str, params: Mapping[str, str], ctx: Any) -> object:
        answer = await ctx.elicit("Password?", NAME_SCHEMA, key="pw")
        return answer["content"]["name"]


@pytest.fixture
def wire(make_wire):
    return make_wire(
        Greet,
        Everything,
        Rounds,
        Sampler,
        Polite,
        TwoQuestions,
        SampleThenRoots,
        Pair,
        Endless,
        Bulky,
        prompts=(Ask,),
        resources=(Secret,),
        state_secret="test-secret",
    )


CAPS = {"elicitation": {}, "sampling": {}, "roots": {}}


def meta(wire, caps: dict[str, Any] | None = None) -> dict[str, Any]:
    return wire.meta(
        **{"io.modelcontextprotocol/clientCapabilities": CAPS if caps is None else caps}
    )


async def test_a_first_round_answers_input_required(wire):
    reply, _ = await wire.modern("tools/call", {"name": "greet"}, meta=meta(wire))
    result = reply.body["result"]
    assert result["resultType"] == "input_required"
    request = result["inputRequests"]["user_name"]
    assert request["method"] == "elicitation/create"
    assert request["params"]["requestedSchema"] == NAME_SCHEMA
    assert "requestState" not in result
    assert "content" not in result


async def test_the_retry_with_responses_completes(wire):
    params = {
        "name": "greet",
        "inputResponses": {
            "user_name": {"action": "accept", "content": {"name": "Ada"}},
            "extra": {"ignored": True},
        },
    }
    reply, _ = await wire.modern("tools/call", params, rid=2, meta=meta(wire))
    result = reply.body["result"]
    assert result["resultType"] == "complete"
    assert result["content"][0]["text"] == "Hello, Ada!"


@pytest.mark.parametrize("responses", [{}, {"user_name": 5}, {"other": {}}])
async def test_missing_or_malformed_responses_ask_again(wire, responses):
    params = {"name": "greet", "inputResponses": responses}
    reply, _ = await wire.modern("tools/call", params, meta=meta(wire))
    assert reply.body["result"]["resultType"] == "input_required"


async def test_input_responses_must_be_an_object(wire):
    params = {"name": "greet", "inputResponses": [1]}
    reply, _ = await wire.modern("tools/call", params, meta=meta(wire))
    assert reply.body["error"]["code"] == -32602


async def test_an_undeclared_capability_is_400_missing_capability(wire):
    reply, _ = await wire.modern("tools/call", {"name": "sampler"}, meta=meta(wire, {}))
    assert reply.status == 400
    error = reply.body["error"]
    assert error["code"] == -32021
    assert error["data"]["requiredCapabilities"] == {"sampling": {}}


async def test_several_requests_and_sealed_state(wire):
    reply, _ = await wire.modern("tools/call", {"name": "everything"}, meta=meta(wire))
    result = reply.body["result"]
    assert sorted(result["inputRequests"]) == ["e", "r", "s"]
    assert "params" not in result["inputRequests"]["r"]
    state = result["requestState"]
    responses = {
        "e": {"action": "accept", "content": {"name": "x"}},
        "s": {
            "role": "assistant",
            "content": {"type": "text", "text": "Paris"},
            "model": "m",
        },
        "r": {"roots": []},
    }
    params = {"name": "everything", "inputResponses": responses, "requestState": state}
    reply, _ = await wire.modern("tools/call", params, rid=2, meta=meta(wire))
    text = reply.body["result"]["content"][0]["text"]
    assert text == "state={'round': 1} keys=['e', 'r', 's']"


async def test_multi_round_state(wire):
    first, _ = await wire.modern("tools/call", {"name": "rounds"}, meta=meta(wire))
    one = first.body["result"]
    assert list(one["inputRequests"]) == ["step1"]
    answer = {"action": "accept", "content": {"name": "a"}}
    second, _ = await wire.modern(
        "tools/call",
        {
            "name": "rounds",
            "inputResponses": {"step1": answer},
            "requestState": one["requestState"],
        },
        rid=2,
        meta=meta(wire),
    )
    two = second.body["result"]
    assert list(two["inputRequests"]) == ["step2"]
    third, _ = await wire.modern(
        "tools/call",
        {
            "name": "rounds",
            "inputResponses": {"step2": answer},
            "requestState": two["requestState"],
        },
        rid=3,
        meta=meta(wire),
    )
    assert third.body["result"]["content"][0]["text"] == "state-ok"


async def test_tampered_or_foreign_state_is_invalid_params(wire):
    first, _ = await wire.modern("tools/call", {"name": "rounds"}, meta=meta(wire))
    state = first.body["result"]["requestState"]
    middle = len(state) // 2
    tampered = state[:middle] + ("AA" if state[middle:][:2] != "AA" else "BB")
    tampered += state[middle + 2 :]
    for bad, name in ((tampered, "rounds"), (state, "everything"), ("junk", "rounds")):
        reply, _ = await wire.modern(
            "tools/call", {"name": name, "requestState": bad}, meta=meta(wire)
        )
        assert reply.status == 400
        assert reply.body["error"]["code"] == -32602


async def test_expired_state_is_invalid_params(make_wire):
    now = [1000.0]
    wire = make_wire(Rounds, wall_clock=lambda: now[0], state_ttl=60.0)
    first, _ = await wire.modern("tools/call", {"name": "rounds"}, meta=meta(wire))
    now[0] += 120
    reply, _ = await wire.modern(
        "tools/call",
        {"name": "rounds", "requestState": first.body["result"]["requestState"]},
        meta=meta(wire),
    )
    assert reply.body["error"]["code"] == -32602


async def test_state_is_bound_to_the_principal(wire):
    body, headers = wire.request("tools/call", {"name": "rounds"}, meta=meta(wire))
    first, _ = await wire.post(body, headers, principal="alice")
    state = first.body["result"]["requestState"]
    body, headers = wire.request(
        "tools/call", {"name": "rounds", "requestState": state}, meta=meta(wire)
    )
    reply, _ = await wire.post(body, headers, principal="mallory")
    assert reply.body["error"]["code"] == -32602
    reply, _ = await wire.post(body, headers, principal="alice")
    assert reply.body["result"]["resultType"] == "input_required"


async def test_state_is_bound_to_the_method_and_name_it_was_sealed_for(wire):
    """A tool's requestState opens for that tool only, not another tool or a prompt."""
    first, _ = await wire.modern("tools/call", {"name": "rounds"}, meta=meta(wire))
    state = first.body["result"]["requestState"]
    for method, params in (
        ("tools/call", {"name": "endless"}),
        ("prompts/get", {"name": "ask"}),
    ):
        reply, _ = await wire.modern(
            method, {**params, "requestState": state}, meta=meta(wire)
        )
        assert reply.body["error"]["code"] == -32602, method
        assert "Invalid requestState" in reply.body["error"]["data"]["reason"]
    reply, _ = await wire.modern(
        "tools/call", {"name": "rounds", "requestState": state}, meta=meta(wire)
    )
    assert reply.body["result"]["resultType"] == "input_required"


async def test_prompts_and_reads_may_ask_too(wire):
    reply, _ = await wire.modern("prompts/get", {"name": "ask"}, meta=meta(wire))
    assert list(reply.body["result"]["inputRequests"]) == ["user_context"]
    reply, _ = await wire.modern(
        "resources/read", {"uri": "test://secret"}, meta=meta(wire)
    )
    result = reply.body["result"]
    assert result["resultType"] == "input_required"
    assert "ttlMs" not in result
    answer = {"action": "accept", "content": {"name": "pw1"}}
    reply, _ = await wire.modern(
        "resources/read",
        {"uri": "test://secret", "inputResponses": {"pw": answer}},
        meta=meta(wire),
    )
    assert reply.body["result"]["contents"][0]["text"] == "pw1"


async def test_list_methods_never_answer_input_required(wire):
    reply, _ = await wire.modern("tools/list", meta=meta(wire))
    assert reply.body["result"]["resultType"] == "complete"


def name_answer(name: str) -> dict[str, Any]:
    return {"action": "accept", "content": {"name": name}}


async def retry(wire, tool: str, result: dict[str, Any], responses, rid: int):
    """Answer an input_required result: the next round's result."""
    params: dict[str, Any] = {"name": tool, "inputResponses": responses}
    if "requestState" in result:
        params["requestState"] = result["requestState"]
    reply, _ = await wire.modern("tools/call", params, rid=rid, meta=meta(wire))
    return reply.body["result"]


async def test_two_questions_in_a_row_carry_the_first_answer(wire):
    first, _ = await wire.modern(
        "tools/call", {"name": "two_questions"}, meta=meta(wire)
    )
    one = first.body["result"]
    assert one["inputRequests"]["elicitation"]["params"]["message"] == "First name?"
    two = await retry(
        wire, "two_questions", one, {"elicitation": name_answer("Ada")}, 2
    )
    assert two["resultType"] == "input_required"
    assert two["inputRequests"]["elicitation"]["params"]["message"] == "Last name?"
    assert "requestState" in two
    three = await retry(
        wire, "two_questions", two, {"elicitation": name_answer("Lovelace")}, 3
    )
    assert three["resultType"] == "complete"
    assert three["content"][0]["text"] == "Ada Lovelace"


async def test_sampling_then_roots_in_two_rounds(wire):
    first, _ = await wire.modern(
        "tools/call", {"name": "sample_then_roots"}, meta=meta(wire)
    )
    one = first.body["result"]
    assert list(one["inputRequests"]) == ["sampling"]
    said = {
        "role": "assistant",
        "content": {"type": "text", "text": "hi"},
        "model": "m",
    }
    two = await retry(wire, "sample_then_roots", one, {"sampling": said}, 2)
    assert list(two["inputRequests"]) == ["roots"]
    roots = {"roots": [{"uri": "file:///a"}, {"uri": "file:///b"}]}
    three = await retry(wire, "sample_then_roots", two, {"roots": roots}, 3)
    assert three["content"][0]["text"] == "hi / 2 roots"


async def test_a_retry_without_the_state_asks_the_second_question_again(wire):
    """The earlier answer lives only in the sealed state: dropping it re-asks."""
    first, _ = await wire.modern(
        "tools/call", {"name": "two_questions"}, meta=meta(wire)
    )
    two = await retry(
        wire,
        "two_questions",
        first.body["result"],
        {"elicitation": name_answer("A")},
        2,
    )
    stateless = {key: value for key, value in two.items() if key != "requestState"}
    again = await retry(
        wire, "two_questions", stateless, {"elicitation": name_answer("B")}, 3
    )
    assert again["resultType"] == "input_required"


async def test_a_partial_answer_is_kept_for_the_next_round(wire):
    first, _ = await wire.modern("tools/call", {"name": "pair"}, meta=meta(wire))
    one = first.body["result"]
    assert sorted(one["inputRequests"]) == ["x", "y"]
    two = await retry(wire, "pair", one, {"x": name_answer("1")}, 2)
    assert list(two["inputRequests"]) == ["y"]
    three = await retry(wire, "pair", two, {"y": name_answer("2")}, 3)
    assert three["content"][0]["text"] == "1+2"


async def test_ten_rounds_are_answered_then_the_call_is_an_error(wire):
    result, _ = await wire.modern(
        "tools/call", {"name": "endless", "arguments": {"count": 10}}, meta=meta(wire)
    )
    current = result.body["result"]
    rounds = 0
    while current["resultType"] == "input_required":
        rounds += 1
        params: dict[str, Any] = {
            "name": "endless",
            "arguments": {"count": 10},
            "inputResponses": {"elicitation": name_answer(str(rounds))},
        }
        if "requestState" in current:
            params["requestState"] = current["requestState"]
        reply, _ = await wire.modern(
            "tools/call", params, rid=rounds + 1, meta=meta(wire)
        )
        current = reply.body["result"]
    assert rounds == 10
    assert current["content"][0]["text"] == "10 answered"

    current = (await wire.modern("tools/call", {"name": "endless"}, meta=meta(wire)))[
        0
    ].body["result"]
    rounds = 0
    while current["resultType"] == "input_required":
        rounds += 1
        current = await retry(
            wire, "endless", current, {"elicitation": name_answer("n")}, rounds + 1
        )
    assert rounds == 10
    assert current["isError"] is True
    payload = json.loads(current["content"][0]["text"])
    assert "more than 10 rounds" in payload["message"]


async def test_state_over_the_cap_is_an_error_not_a_token(wire):
    reply, _ = await wire.modern("tools/call", {"name": "bulky"}, meta=meta(wire))
    result = reply.body["result"]
    assert result["isError"] is True
    assert "requestState" not in result
    assert "65536 characters" in json.loads(result["content"][0]["text"])["message"]


async def test_recorded_answers_are_bound_to_the_call_s_arguments(wire):
    params = {"name": "endless", "arguments": {"count": 3}}
    first, _ = await wire.modern("tools/call", params, meta=meta(wire))
    two = await retry_with(wire, params, first.body["result"], name_answer("a"), 2)
    assert "requestState" in two
    other = {"name": "endless", "arguments": {"count": 4}}
    moved = await retry_with(wire, other, two, name_answer("b"), 3, raw=True)
    assert moved["error"]["code"] == -32602
    same = {"name": "endless", "arguments": {"count": 3}}
    kept = await retry_with(wire, same, two, name_answer("b"), 4)
    assert kept["resultType"] == "input_required"


async def retry_with(wire, params, result, answer, rid, *, raw=False):
    sent = {**params, "inputResponses": {"elicitation": answer}}
    if "requestState" in result:
        sent["requestState"] = result["requestState"]
    reply, _ = await wire.modern("tools/call", sent, rid=rid, meta=meta(wire))
    return reply.body if raw else reply.body["result"]


async def test_recorded_answers_cannot_be_forged(wire):
    first, _ = await wire.modern(
        "tools/call", {"name": "two_questions"}, meta=meta(wire)
    )
    two = await retry(
        wire,
        "two_questions",
        first.body["result"],
        {"elicitation": name_answer("A")},
        2,
    )
    token = two["requestState"]
    middle = len(token) // 2
    flipped = "AAA" if token[middle : middle + 3] != "AAA" else "BBB"
    forged = {**two, "requestState": token[:middle] + flipped + token[middle + 3 :]}
    params = {
        "name": "two_questions",
        "inputResponses": {"elicitation": name_answer("B")},
        "requestState": forged["requestState"],
    }
    reply, _ = await wire.modern("tools/call", params, rid=3, meta=meta(wire))
    assert reply.body["error"]["code"] == -32602


# ------------------------------------------------------------------- 2025


async def answer_when_asked(wire, sid: str, stream, result: Any, error: Any = None):
    for _ in range(50):
        await asyncio.sleep(0)
        asked = [m for m in stream.messages if "id" in m and "method" in m]
        if asked:
            break
    request = asked[0]
    body: dict[str, Any] = {"jsonrpc": "2.0", "id": request["id"]}
    if error is not None:
        body["error"] = error
    else:
        body["result"] = result
    reply, _ = await wire.post(body, [("Mcp-Session-Id", sid)], revision="2025-11-25")
    assert reply.status == 202
    return request


async def test_elicitation_is_a_request_on_the_call_stream_at_2025(wire):
    sid = await wire.initialize(capabilities={"elicitation": {}})
    stream = wire.Stream()
    call = asyncio.create_task(
        wire.session(sid, "tools/call", {"name": "greet"}, stream=stream)
    )
    request = await answer_when_asked(
        wire, sid, stream, {"action": "accept", "content": {"name": "Bo"}}
    )
    assert request["method"] == "elicitation/create"
    assert request["id"].startswith("srv-")
    reply, _ = await call
    assert reply.body["result"]["content"][0]["text"] == "Hello, Bo!"


async def test_a_client_error_answer_reaches_the_tool(wire):
    sid = await wire.initialize(capabilities={"roots": {}})
    stream = wire.Stream()
    call = asyncio.create_task(
        wire.session(sid, "tools/call", {"name": "polite"}, stream=stream)
    )
    await answer_when_asked(wire, sid, stream, None, {"code": -1, "message": "no"})
    reply, _ = await call
    assert reply.body["result"]["content"][0]["text"] == "no roots: client_error"


async def test_without_the_capability_asking_fails_cleanly_at_2025(wire):
    sid = await wire.initialize()
    reply, stream = await wire.session(sid, "tools/call", {"name": "polite"})
    assert reply.body["result"]["content"][0]["text"] == "no roots: not_supported"
    assert stream.messages == []


async def test_elicitation_needs_2025_06_18(wire):
    sid = await wire.initialize("2025-03-26", capabilities={"elicitation": {}})
    reply, _ = await wire.session(
        sid, "tools/call", {"name": "greet"}, version="2025-03-26"
    )
    assert reply.body["result"]["isError"] is True


async def test_an_unanswered_request_times_out(make_wire):
    wire = make_wire(Polite, client_request_timeout=0.01)
    sid = await wire.initialize(capabilities={"roots": {}})
    reply, stream = await wire.session(sid, "tools/call", {"name": "polite"})
    assert stream.messages[0]["method"] == "roots/list"
    assert reply.body["result"]["content"][0]["text"] == "no roots: timeout"


async def test_a_response_to_nothing_is_accepted_and_ignored(wire):
    sid = await wire.initialize()
    for body in (
        {"jsonrpc": "2.0", "id": "srv-unknown", "result": {}},
        {"jsonrpc": "2.0", "id": 5, "result": {}},
    ):
        reply, _ = await wire.post(
            body, [("Mcp-Session-Id", sid)], revision="2025-11-25"
        )
        assert reply.status == 202


async def test_a_result_that_is_not_an_object_fails_the_question(wire):
    sid = await wire.initialize(capabilities={"roots": {}})
    stream = wire.Stream()
    call = asyncio.create_task(
        wire.session(sid, "tools/call", {"name": "polite"}, stream=stream)
    )
    await answer_when_asked(wire, sid, stream, [1, 2])
    reply, _ = await call
    assert reply.body["result"]["content"][0]["text"] == "no roots: client_error"


async def test_a_deleted_session_ends_the_call_waiting_for_an_answer(wire):
    sid = await wire.initialize(capabilities={"roots": {}})
    stream = wire.Stream()
    call = asyncio.create_task(
        wire.session(sid, "tools/call", {"name": "polite"}, stream=stream)
    )
    for _ in range(10):
        await asyncio.sleep(0)
    await wire.engine.delete(
        Exchange(method="DELETE", headers=Headers.of([("Mcp-Session-Id", sid)]))
    )
    reply, _ = await call
    assert reply.status == 404  # the call stopped with its session
    assert reply.body["error"]["message"] == "Session terminated"


async def test_a_context_without_an_asker_cannot_ask():
    ctx = ToolContext()
    with pytest.raises(ClientRequestError) as raised:
        await ctx.elicit("Your name?", NAME_SCHEMA)
    assert raised.value.reason == "not_supported"


async def test_a_context_builds_its_asker_once_on_the_first_question():
    built: list[int] = []
    asked: list[list[str]] = []

    def make_asker() -> Any:
        built.append(1)

        async def ask(requests: dict[str, Any], state: Any) -> dict[str, Any]:
            asked.append(list(requests))
            return {key: {"n": len(asked)} for key in requests}

        return ask

    ctx = ToolContext(make_asker=make_asker)
    assert built == []
    assert await ctx.list_roots() == {"n": 1}
    assert await ctx.list_roots(key="again") == {"n": 2}
    assert built == [1]
    assert asked == [["roots"], ["again"]]


class _Sink:
    """A call's stream that keeps the questions sent on it."""

    def __init__(self) -> None:
        self.sent: list[Any] = []

    async def send(self, message: Any, *, event_id: str | None = None) -> None:
        self.sent.append(message)


async def _settle() -> None:
    """Let the tasks started run until they wait for an answer."""
    for _ in range(10):
        await asyncio.sleep(0)


async def test_a_session_waits_for_at_most_max_questions_answers():
    """Issue 29 (attack 4, finding 2): outstanding questions per session are capped.

    One more fails at once ("busy"), sends nothing; an answer makes room.
    """
    session = Session(
        id="s", protocol_version=LEGACY[0], capabilities_json=b'{"roots":{}}'
    )
    sink = _Sink()
    ask = session_asker(session, revision(LEGACY[0]), sink, 30.0)
    waiting = [
        asyncio.create_task(ask({"r": InputRequest.roots()}, None))
        for _ in range(MAX_QUESTIONS)
    ]
    await _settle()
    assert len(sink.sent) == MAX_QUESTIONS
    with pytest.raises(ClientRequestError) as refused:
        await ask({"r": InputRequest.roots()}, None)
    assert refused.value.reason == "busy"
    assert len(sink.sent) == MAX_QUESTIONS  # the refused one was never sent
    first = sink.sent[0]["id"]
    session.pending[first].set_result({"roots": []})
    assert await waiting[0] == {"r": {"roots": []}}
    more = asyncio.create_task(ask({"r": InputRequest.roots()}, None))
    await _settle()
    assert len(sink.sent) == MAX_QUESTIONS + 1  # room again
    for task in [*waiting[1:], more]:
        task.cancel()
    await asyncio.gather(*waiting[1:], more, return_exceptions=True)
    assert not session.pending


async def test_a_question_given_up_leaves_its_future_done():
    """Whoever watches a question (BROKER deletes its record) learns it ended.

    Here the stream fails as the question is sent (the client went away).
    """
    session = Session(
        id="s", protocol_version=LEGACY[0], capabilities_json=b'{"roots":{}}'
    )
    seen: list[asyncio.Future[Any]] = []

    class Gone:
        async def send(self, message: Any, *, event_id: str | None = None) -> None:
            seen.extend(session.pending.values())
            raise ConnectionResetError

    ask = session_asker(session, revision(LEGACY[0]), Gone(), 30.0)
    with pytest.raises(ClientRequestError) as failed:
        await ask({"r": InputRequest.roots()}, None)
    assert failed.value.reason == "disconnected"
    assert len(seen) == 1
    assert seen[0].done()
