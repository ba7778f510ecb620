"""The zero-argument tools the suite calls to check each content block type."""

from typing import Any, ClassVar

from wymcp.core.schema import Tool
from wymcp.core.server import audio, embedded_resource, image, text
from wymcp_conformance._media import tiny_png, tiny_wav

NO_ARGUMENTS: dict[str, Any] = {"type": "object", "additionalProperties": False}
"""The input schema of a tool that takes no arguments."""

SIMPLE_TEXT = "This is a simple text response for testing."


class SimpleText(Tool):
    """Answers one fixed text block."""

    name = "test_simple_text"
    description = "Return a simple text block."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Return the fixed sentence."""
        del arguments, ctx
        return text(SIMPLE_TEXT)


class ImageContent(Tool):
    """Answers one PNG image block."""

    name = "test_image_content"
    description = "Return a one-pixel PNG image block."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Return the PNG."""
        del arguments, ctx
        return image(tiny_png(), "image/png")


class AudioContent(Tool):
    """Answers one WAV audio block."""

    name = "test_audio_content"
    description = "Return a short silent WAV audio block."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Return the WAV."""
        del arguments, ctx
        return audio(tiny_wav(), "audio/wav")


class EmbeddedResource(Tool):
    """Answers one embedded text resource."""

    name = "test_embedded_resource"
    description = "Return a text resource embedded in the answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Return the embedded resource."""
        del arguments, ctx
        return embedded_resource(
            "test://embedded-resource",
            text="This is an embedded resource content.",
            mime_type="text/plain",
        )


class MultipleContentTypes(Tool):
    """Answers a text, an image and an embedded JSON resource together."""

    name = "test_multiple_content_types"
    description = "Return text, image and resource blocks in one answer."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Return the three blocks."""
        del arguments, ctx
        return [
            text("Multiple content types test:"),
            image(tiny_png(), "image/png"),
            embedded_resource(
                "test://mixed-content-resource",
                text='{"test": "data", "value": 123}',
                mime_type="application/json",
            ),
        ]
