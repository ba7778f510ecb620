"""The fixture's prompts, from a simple one to one that asks the client first.

Simple, with arguments (and completion), with an embedded resource, with an
image, and one that elicits the context it renders.
"""

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from wymcp.core.server import Prompt, PromptArgument, embedded_resource, image, text
from wymcp_conformance._media import tiny_png

SUGGESTIONS = ("paris", "park", "party")


class SimplePrompt(Prompt):
    """One fixed user message."""

    name = "test_simple_prompt"
    description = "A simple prompt without arguments."

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Return the fixed message."""
        del arguments, ctx
        return "This is a simple prompt for testing."


class PromptWithArguments(Prompt):
    """A message that quotes its two arguments."""

    name = "test_prompt_with_arguments"
    description = "A prompt with two required arguments."
    arguments: ClassVar[Sequence[PromptArgument]] = (
        PromptArgument(name="arg1", description="First test argument", required=True),
        PromptArgument(name="arg2", description="Second test argument", required=True),
    )

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Return the message with both arguments substituted."""
        del ctx
        return (
            f"Prompt with arguments: arg1='{arguments['arg1']}', "
            f"arg2='{arguments['arg2']}'"
        )

    def complete(
        self, argument: str, value: str, context: Mapping[str, str]
    ) -> Sequence[str]:
        """Suggest words that start with what was typed."""
        del argument, context
        return [word for word in SUGGESTIONS if word.startswith(value)]


class PromptWithEmbeddedResource(Prompt):
    """A resource embedded in the messages, then an instruction."""

    name = "test_prompt_with_embedded_resource"
    description = "A prompt that embeds the resource it is given."
    arguments: ClassVar[Sequence[PromptArgument]] = (
        PromptArgument(
            name="resourceUri",
            description="URI of the resource to embed",
            required=True,
        ),
    )

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Return the embedded resource and the instruction."""
        del ctx
        return [
            embedded_resource(
                arguments["resourceUri"],
                text="Embedded resource content for testing.",
                mime_type="text/plain",
            ),
            text("Please process the embedded resource above."),
        ]


class PromptWithImage(Prompt):
    """An image in the messages, then an instruction."""

    name = "test_prompt_with_image"
    description = "A prompt that shows an image."

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Return the image and the instruction."""
        del arguments, ctx
        return [image(tiny_png(), "image/png"), text("Please analyze the image above.")]


class InputRequiredPrompt(Prompt):
    """Asks the user for context before it renders (an input request on prompts/get)."""

    name = "test_input_required_result_prompt"
    description = "A prompt that first asks the user what context to use."

    async def render(self, arguments: dict[str, str], ctx: Any) -> object:
        """Elicit the context, then render it into the message."""
        del arguments
        answer = await ctx.elicit(
            "What context should the prompt use?",
            {
                "type": "object",
                "properties": {"context": {"type": "string"}},
                "required": ["context"],
            },
            key="user_context",
        )
        context = (answer.get("content") or {}).get("context", "no context")
        return f"Use this context: {context}"
