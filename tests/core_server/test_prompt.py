"""Prompts: listing, rendering, arguments through the gates, completion."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import pytest

from wymcp.core.schema import ConfigurationError
from wymcp.core.server import (
    Engine,
    Prompt,
    PromptArgument,
    embedded_resource,
    image,
)


class Simple(Prompt):
    name = "test_simple_prompt"
    description = "A simple prompt."

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        return "This is a simple prompt for testing."


class WithArguments(Prompt):
    name = "test_prompt_with_arguments"
    title = "With arguments"
    description = "Two arguments."
    arguments: ClassVar[Sequence[PromptArgument]] = (
        PromptArgument(name="arg1", description="First", required=True),
        PromptArgument(name="arg2", description="Second", required=True),
        PromptArgument(name="style", schema={"enum": ["short", "long"]}),
    )

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        return (
            f"Prompt with arguments: arg1='{arguments['arg1']}', "
            f"arg2='{arguments['arg2']}'"
        )

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str]:
        return ["hello", "help", "world"] if argument == "arg1" else []


class Mixed(Prompt):
    name = "mixed"
    description = "Several messages."

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        return [
            embedded_resource("test://r", text="inside", mime_type="text/plain"),
            ("assistant", "noted"),
            {"role": "user", "content": image(b"\x89PNG", "image/png")},
        ]


class Broken(Prompt):
    name = "broken"

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        raise RuntimeError("secret")


@pytest.fixture
def wire(make_wire):
    return make_wire(prompts=(Simple, WithArguments, Mixed, Broken))


async def test_prompts_list(wire):
    reply, _ = await wire.modern("prompts/list")
    prompts = reply.body["result"]["prompts"]
    assert [p["name"] for p in prompts] == [
        "test_simple_prompt",
        "test_prompt_with_arguments",
        "mixed",
        "broken",
    ]
    assert prompts[1]["arguments"][0] == {
        "name": "arg1",
        "description": "First",
        "required": True,
    }
    assert prompts[1]["title"] == "With arguments"
    assert "ttlMs" in reply.body["result"]


async def test_prompt_titles_are_gated_at_2025_03_26(wire):
    sid = await wire.initialize("2025-03-26")
    reply, _ = await wire.session(sid, "prompts/list", version="2025-03-26")
    assert "title" not in reply.body["result"]["prompts"][1]


async def test_a_simple_prompt(wire):
    reply, _ = await wire.modern("prompts/get", {"name": "test_simple_prompt"})
    result = reply.body["result"]
    assert result["messages"] == [
        {
            "role": "user",
            "content": {"type": "text", "text": "This is a simple prompt for testing."},
        }
    ]
    assert result["description"] == "A simple prompt."


async def test_a_prompt_with_arguments(wire):
    reply, _ = await wire.modern(
        "prompts/get",
        {
            "name": "test_prompt_with_arguments",
            "arguments": {"arg1": "hello", "arg2": "world"},
        },
    )
    text = reply.body["result"]["messages"][0]["content"]["text"]
    assert text == "Prompt with arguments: arg1='hello', arg2='world'"


@pytest.mark.parametrize(
    ("arguments", "error"),
    [
        ({"arg1": "a"}, "missing_required_fields"),
        ({"arg1": "a", "arg2": "b", "bogus": "c"}, "unknown_params"),
        ({"arg1": "a", "arg2": "b", "style": "medium"}, "invalid_values"),
        ({"arg1": 1, "arg2": "b"}, "invalid_values"),
    ],
)
async def test_bad_arguments_are_refused_by_the_gates(wire, arguments, error):
    reply, _ = await wire.modern(
        "prompts/get", {"name": "test_prompt_with_arguments", "arguments": arguments}
    )
    assert reply.status == 400
    body = reply.body["error"]
    assert body["code"] == -32602
    assert body["data"]["error"] == error
    assert body["data"]["prompt"] == "test_prompt_with_arguments"
    assert "help" not in body["data"]


@pytest.mark.parametrize(
    ("arguments", "said"),
    [
        (
            {"arg1": "a", "arg2": "b", "bogus": "c"},
            (
                "Unknown parameter(s) for prompt 'test_prompt_with_arguments':"
                " arguments.bogus."
            ),
        ),
        (
            {"arg1": 1, "arg2": "b"},
            (
                "Invalid value(s) for prompt 'test_prompt_with_arguments' at"
                " arguments.arg1; see errors."
            ),
        ),
    ],
)
async def test_prompt_refusals_say_prompt_not_tool(wire, arguments, said):
    reply, _ = await wire.modern(
        "prompts/get", {"name": "test_prompt_with_arguments", "arguments": arguments}
    )
    error = reply.body["error"]
    assert error["message"].startswith(said)
    assert error["data"]["message"] == error["message"]
    assert "tool" not in error["message"]
    assert "tool" not in error["data"]


async def test_a_misspelled_prompt_argument_gets_did_you_mean(wire):
    reply, _ = await wire.modern(
        "prompts/get",
        {"name": "test_prompt_with_arguments", "arguments": {"arg1": "a", "agr2": "b"}},
    )
    data = reply.body["error"]["data"]
    assert data["missing"] == ["arg2"]
    assert data["did_you_mean"] == {"arguments.agr2": "arguments.arg2"}


async def test_mixed_messages(wire):
    reply, _ = await wire.modern("prompts/get", {"name": "mixed"})
    messages = reply.body["result"]["messages"]
    assert [m["role"] for m in messages] == ["user", "assistant", "user"]
    assert [m["content"]["type"] for m in messages] == ["resource", "text", "image"]


async def test_an_unknown_prompt_is_invalid_params(wire):
    reply, _ = await wire.modern("prompts/get", {"name": "nope"})
    assert reply.body["error"]["code"] == -32602
    assert "test_simple_prompt" in reply.body["error"]["data"]["reason"]


async def test_a_raising_prompt_answers_internal_error(wire):
    reply, _ = await wire.modern("prompts/get", {"name": "broken"})
    assert reply.body["error"]["code"] == -32603
    assert "secret" not in str(reply.body)


async def test_prompt_completion(wire):
    reply, _ = await wire.modern(
        "completion/complete",
        {
            "ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
            "argument": {"name": "arg1", "value": "he"},
            "context": {"arguments": {"arg2": "x"}},
        },
    )
    completion = reply.body["result"]["completion"]
    assert completion["values"] == ["hello", "help", "world"]
    assert completion["hasMore"] is False


async def test_prompts_in_a_session(wire):
    sid = await wire.initialize()
    reply, _ = await wire.session(sid, "prompts/get", {"name": "test_simple_prompt"})
    assert reply.body["result"]["messages"][0]["role"] == "user"


def test_duplicate_argument_names_are_refused():
    class Twice(Prompt):
        name = "twice"
        arguments: ClassVar[Sequence[PromptArgument]] = (
            PromptArgument(name="a"),
            PromptArgument(name="a"),
        )

    with pytest.raises(ConfigurationError, match="unique"):
        Engine(tools=[], prompts=[Twice])


def test_declarations_that_are_not_prompts_are_refused():
    class Nameless(Prompt):
        pass

    class Loose(Prompt):
        name = "loose"
        arguments: ClassVar[Sequence[Any]] = ("a",)

    with pytest.raises(ConfigurationError, match="name"):
        Engine(tools=[], prompts=[Nameless])
    with pytest.raises(ConfigurationError, match="PromptArgument"):
        Engine(tools=[], prompts=[Loose])
    with pytest.raises(ConfigurationError, match="not a wymcp Prompt"):
        Engine(tools=[], prompts=[object()])


@pytest.mark.parametrize(
    "params",
    [{}, {"name": 3}, {"name": "test_simple_prompt", "arguments": [1]}],
)
async def test_bad_get_params_are_invalid_params(wire, params):
    reply, _ = await wire.modern("prompts/get", params)
    assert reply.body["error"]["code"] == -32602


async def test_a_whole_result_and_a_bad_shape(make_wire):
    class Whole(Prompt):
        name = "whole"

        async def render(self, arguments: dict[str, str], ctx: Any) -> object:
            return {"description": "mine", "messages": ["hi"]}

    class Bad(Prompt):
        name = "bad"

        async def render(self, arguments: dict[str, str], ctx: Any) -> object:
            return [42]

    wire = make_wire(prompts=(Whole, Bad))
    reply, _ = await wire.modern("prompts/get", {"name": "whole"})
    assert reply.body["result"]["description"] == "mine"
    reply, _ = await wire.modern("prompts/get", {"name": "bad"})
    assert reply.body["error"]["code"] == -32603
