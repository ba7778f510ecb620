"""Tools that ask the client something: sampling, elicitation, a missing capability.

At 2025-11-25 the engine sends the request on the call's stream; at 2026-07-28
it answers `input_required` (or -32021 when the request did not declare the
capability). The tools only call `ctx.sample` and `ctx.elicit`.
"""

import json
from typing import Any, ClassVar

from wymcp.core.schema import Tool
from wymcp.core.server import ClientRequestError
from wymcp_conformance._content_tools import NO_ARGUMENTS


def _completed(answer: dict[str, Any]) -> str:
    content = json.dumps(answer.get("content") or {}, sort_keys=True)
    return f"Elicitation completed: action={answer.get('action')}, content={content}"


def _sampled_text(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    blocks = content if isinstance(content, list) else [content]
    texts = [
        str(block.get("text"))
        for block in blocks
        if isinstance(block, dict) and block.get("type") == "text"
    ]
    return f"LLM response: {' '.join(texts) or '(no text)'}"


class Sampling(Tool):
    """Asks the client's model to answer a prompt."""

    name = "test_sampling"
    description = "Ask the client's model to answer the prompt."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "prompt": {"type": "string", "description": "What to ask the model."},
        },
        "required": ["prompt"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Sample and return the model's text."""
        answer = await ctx.sample(arguments["prompt"], max_tokens=100)
        return _sampled_text(answer)


class Elicitation(Tool):
    """Asks the user for a username and an e-mail address."""

    name = "test_elicitation"
    description = "Ask the user for a username and an e-mail address."
    input_schema: ClassVar[dict[str, Any]] = {
        "type": "object",
        "properties": {
            "message": {"type": "string", "description": "What to show the user."},
        },
        "required": ["message"],
        "additionalProperties": False,
    }

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit and report what the user answered."""
        answer = await ctx.elicit(
            arguments["message"],
            {
                "type": "object",
                "properties": {
                    "username": {"type": "string", "description": "User's response"},
                    "email": {"type": "string", "description": "User's email address"},
                },
                "required": ["username", "email"],
            },
        )
        return _completed(answer)


class ElicitationDefaults(Tool):
    """Asks with a form whose every primitive field has a default (SEP-1034)."""

    name = "test_elicitation_sep1034_defaults"
    description = "Ask with a form whose fields all carry defaults."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit with defaults and report the answer."""
        del arguments
        answer = await ctx.elicit(
            "Please review and update the form fields with defaults",
            {
                "type": "object",
                "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "score": {"type": "number", "default": 95.5},
                    "status": {
                        "type": "string",
                        "enum": ["active", "inactive", "pending"],
                        "default": "active",
                    },
                    "verified": {"type": "boolean", "default": True},
                },
            },
        )
        return _completed(answer)


class ElicitationEnums(Tool):
    """Asks with the five enum shapes of SEP-1330."""

    name = "test_elicitation_sep1330_enums"
    description = "Ask with single- and multi-select enums, titled and untitled."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit with every enum variant and report the answer."""
        del arguments
        options = ["option1", "option2", "option3"]
        answer = await ctx.elicit(
            "Please pick from each list",
            {
                "type": "object",
                "properties": {
                    "untitledSingle": {"type": "string", "enum": options},
                    "titledSingle": {
                        "type": "string",
                        "oneOf": [
                            {"const": "value1", "title": "First Option"},
                            {"const": "value2", "title": "Second Option"},
                            {"const": "value3", "title": "Third Option"},
                        ],
                    },
                    "legacyEnum": {
                        "type": "string",
                        "enum": ["opt1", "opt2", "opt3"],
                        "enumNames": ["Option One", "Option Two", "Option Three"],
                    },
                    "untitledMulti": {
                        "type": "array",
                        "items": {"type": "string", "enum": options},
                    },
                    "titledMulti": {
                        "type": "array",
                        "items": {
                            "anyOf": [
                                {"const": "value1", "title": "First Choice"},
                                {"const": "value2", "title": "Second Choice"},
                                {"const": "value3", "title": "Third Choice"},
                            ],
                        },
                    },
                },
            },
        )
        return _completed(answer)


class MissingCapability(Tool):
    """Needs sampling: a request that did not declare it gets -32021."""

    name = "test_missing_capability"
    description = "Sample the client's model; needs the sampling capability."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Sample; the engine refuses when the capability is missing."""
        del arguments
        answer = await ctx.sample("Say hello.", max_tokens=20)
        return _sampled_text(answer)


class StreamingElicitation(Tool):
    """Elicits while streaming: at 2026-07-28 no request may appear on the stream."""

    name = "test_streaming_elicitation"
    description = "Report progress, then ask the user to confirm."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Report progress, then elicit a confirmation."""
        del arguments
        await ctx.report_progress(1, 2, "about to ask")
        try:
            answer = await ctx.elicit(
                "Continue?",
                {
                    "type": "object",
                    "properties": {"confirm": {"type": "boolean"}},
                    "required": ["confirm"],
                },
            )
        except ClientRequestError as error:
            return f"Could not ask the client ({error.reason})."
        return _completed(answer)
