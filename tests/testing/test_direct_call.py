"""call(): one call through the engine's own tools/call path, no HTTP."""

from __future__ import annotations

import json
from typing import ClassVar

import pytest

from wymcp.conf import Settings
from wymcp.core.schema import Action, ConfigurationError, Tool
from wymcp.core.server import MODERN
from wymcp.testing import (
    assert_refused,
    assert_succeeded,
    assert_tool_error,
    build_context,
    call,
)

ITEMS = [{"sku": "a", "qty": 2}, {"sku": "b", "qty": 3}]
REVISIONS = [MODERN, "2025-11-25", "2025-06-18", "2025-03-26"]


async def test_an_accepted_call_answers_the_tool_value_with_defaults_merged(
    orders_tool,
):
    answer = await call(orders_tool, "place", {"customer": "ann", "items": ITEMS})
    assert assert_succeeded(answer) == {
        "customer": "ann",
        "units": 5,
        "rush": False,
        "who": None,
    }
    assert answer.status == 200
    assert answer.response is not None
    assert answer.response["id"] == 1
    assert answer.result is not None
    assert answer.result["resultType"] == "complete"


@pytest.mark.parametrize("revision", REVISIONS)
async def test_a_refusal_comes_back_as_the_wire_answers_it(orders_tool, revision):
    items = [{"sku": "a", "qty": 1}] * 3 + [{"sku": "d", "qty": 5000}]
    answer = await call(
        orders_tool,
        "place",
        {"customer": "ann", "items": items},
        ctx=build_context(protocol_version=revision),
    )
    refusal = assert_refused(
        answer,
        "invalid_values",
        path="data.items[3].qty",
        problem="value is higher than maximum 1000",
    )
    assert refusal["help"] == 'help {tool: "orders", action: "place"}'
    assert answer.result is not None
    assert ("resultType" in answer.result) is (revision == MODERN)


async def test_every_gate_answers_through_call(orders_tool):
    unknown = await call(orders_tool, "ship", {})
    assert assert_refused(unknown, "unknown_action")["valid_actions"] == [
        "cancel",
        "explode",
        "place",
    ]
    stray = await call(orders_tool, "place", {"customer": "a", "items": ITEMS, "x": 1})
    assert_refused(stray, "unknown_params", path="data.x")
    missing = await call(orders_tool, "place", {"items": ITEMS})
    assert assert_refused(missing, "missing_required_fields", path="data.customer")[
        "missing"
    ] == ["customer"]


async def test_a_tool_error_and_a_raise_answer_is_error_without_a_traceback(
    orders_tool,
):
    cancelled = await call(orders_tool, "cancel", {"order_id": 7})
    assert assert_tool_error(cancelled, "Order 7 does not exist.") == (
        "Order 7 does not exist."
    )
    exploded = await call(orders_tool, "explode")
    text = assert_tool_error(exploded, "tool_raised")
    assert json.loads(text)["exception"] == "RuntimeError"
    assert "Traceback" not in text


async def test_a_plain_tool_takes_its_arguments_as_data(weather_tool):
    answer = await call(weather_tool, None, {"region": "north", "days": 2})
    assert assert_succeeded(answer) == "north: sunny for 2 day(s)"
    refused = await call(weather_tool, None, {"region": "north", "days": 9})
    assert_refused(refused, "invalid_values", path="arguments.days")
    same = await call(weather_tool, None, arguments={"region": "south"})
    assert same.value == "south: sunny for 1 day(s)"


async def test_the_mirrored_header_of_an_annotated_argument_is_sent(weather_tool):
    answer = await call(weather_tool, None, {"region": "Zürich Nord"})
    assert assert_succeeded(answer) == "Zürich Nord: sunny for 1 day(s)"


async def test_progress_and_logs_follow_the_context(orders_tool):
    data = {"customer": "ann", "items": ITEMS}
    quiet = await call(orders_tool, "place", data)
    assert quiet.messages == ()
    ctx = build_context(progress_token="p", log_level="info", principal="alice")
    loud = await call(orders_tool, "place", data, ctx=ctx)
    assert [p["progress"] for p in loud.progress] == [1, 2]
    assert {p["progressToken"] for p in loud.progress} == {"p"}
    assert loud.logs == [{"level": "info", "data": {"placed": 2}, "logger": "orders"}]
    assert assert_succeeded(loud)["who"] == "alice"


async def test_a_2025_session_logs_every_level_unless_a_level_is_set(orders_tool):
    data = {"customer": "ann", "items": ITEMS}
    every = await call(
        orders_tool, "place", data, ctx=build_context(protocol_version="2025-11-25")
    )
    assert [log["level"] for log in every.logs] == ["info", "debug"]
    some = await call(
        orders_tool,
        "place",
        data,
        ctx=build_context(protocol_version="2025-11-25", log_level="info"),
    )
    assert [log["level"] for log in some.logs] == ["info"]


async def test_the_request_id_and_meta_of_the_context_are_sent(orders_tool):
    ctx = build_context(request_id="r-9", meta={"trace": "t1"})
    answer = await call(orders_tool, "cancel", {"order_id": 1}, ctx=ctx)
    assert answer.response is not None
    assert answer.response["id"] == "r-9"


async def test_lenient_settings_drop_unknown_keys_and_say_so(orders_tool):
    lenient = Settings().evolve(STRICT=False)
    answer = await call(
        orders_tool,
        "place",
        {"customer": "a", "items": ITEMS, "colour": "red"},
        settings=lenient,
    )
    assert assert_succeeded(answer)["units"] == 5
    assert answer.result is not None
    assert answer.result["_meta"]["wymcp/dropped"] == ["data.colour"]


async def test_a_tool_is_found_by_name_in_the_settings(settings):
    answer = await call("weather", None, {"region": "east"}, settings=settings)
    assert answer.value == "east: sunny for 1 day(s)"
    with pytest.raises(LookupError, match="weather"):
        await call("nope", None, settings=settings)


async def test_a_bad_envelope_is_the_refusal_the_wire_gets(orders_tool):
    answer = await call(orders_tool, "place", ["not", "an", "object"])  # type: ignore[arg-type]
    refusal = assert_refused(answer, "invalid_arguments")
    assert "'data' is an array, not an object" in refusal["message"]
    assert answer.status == 200


async def test_a_client_request_at_2025_is_refused_at_once_not_awaited(greeter_tool):
    ctx = build_context(
        protocol_version="2025-11-25", client_capabilities={"elicitation": {}}
    )
    answer = await call(greeter_tool, None, ctx=ctx)
    assert [r["method"] for r in answer.requests] == ["elicitation/create"]
    assert_tool_error(answer, "tool_raised")


async def test_asking_at_2026_answers_input_required(greeter_tool):
    ctx = build_context(client_capabilities={"elicitation": {}})
    answer = await call(greeter_tool, None, ctx=ctx)
    assert answer.result is not None
    assert answer.result["resultType"] == "input_required"
    assert list(answer.result["inputRequests"]) == ["name"]


async def test_a_tool_that_cannot_be_registered_raises_configuration_error():
    class Broken(Tool):
        name = "broken"
        description = "Requires what it does not declare."
        actions: ClassVar = {
            "go": Action(description="Go", properties={}, required=["ghost"])
        }

    with pytest.raises(ConfigurationError, match="broken"):
        await call(Broken, "go")


async def test_action_and_arguments_together_are_a_usage_error(orders_tool):
    with pytest.raises(TypeError, match="either"):
        await call(orders_tool, "place", arguments={"action": "place"})
