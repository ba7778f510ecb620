"""Tools that need the client's input before they answer (SEP-2322 at 2026-07-28).

Each asks through `ctx.elicit`, `ctx.sample`, `ctx.list_roots` or `ctx.ask`
under the suite's keys: an `input_required` result and a rerun with
`ctx.request_state` at 2026-07-28, a request on the call's stream at 2025-11-25.
"""

from typing import Any, ClassVar

from wymcp.core.schema import Tool, ToolError
from wymcp.core.server import InputRequest
from wymcp_conformance._content_tools import NO_ARGUMENTS


def _form(field: str, kind: str = "string") -> dict[str, Any]:
    """A one-field elicitation form."""
    return {
        "type": "object",
        "properties": {field: {"type": kind}},
        "required": [field],
    }


def _field(answer: dict[str, Any], field: str) -> object:
    """One field the user filled in, or raise when they did not accept."""
    content = answer.get("content")
    if answer.get("action") != "accept" or not isinstance(content, dict):
        raise ToolError(f"The user did not provide '{field}'.")
    return content.get(field)


def _sampled(answer: dict[str, Any]) -> str:
    content = answer.get("content")
    if isinstance(content, dict) and isinstance(content.get("text"), str):
        return str(content["text"])
    return "(no text)"


class InputRequiredElicitation(Tool):
    """Asks for the user's name, then greets them."""

    name = "test_input_required_result_elicitation"
    description = "Ask the user's name (key user_name), then greet them."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit the name and greet."""
        del arguments
        answer = await ctx.elicit("What is your name?", _form("name"), key="user_name")
        return f"Hello, {_field(answer, 'name')}!"


class InputRequiredSampling(Tool):
    """Asks the client's model a question and answers with what it said."""

    name = "test_input_required_result_sampling"
    description = "Ask the client's model for France's capital (key capital_question)."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Sample and answer with the model's text."""
        del arguments
        answer = await ctx.sample(
            "What is the capital of France?", max_tokens=100, key="capital_question"
        )
        return f"The model said: {_sampled(answer)}"


class InputRequiredListRoots(Tool):
    """Asks the client for its roots and lists them."""

    name = "test_input_required_result_list_roots"
    description = "Ask the client for its roots (key client_roots) and list them."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """List the roots the client gave."""
        del arguments
        answer = await ctx.list_roots(key="client_roots")
        roots = answer.get("roots")
        uris = [
            str(root.get("uri"))
            for root in (roots if isinstance(roots, list) else [])
            if isinstance(root, dict)
        ]
        return f"Client roots: {', '.join(uris) or '(none)'}"


class InputRequiredRequestState(Tool):
    """Asks for a confirmation with sealed state, and checks the state came back."""

    name = "test_input_required_result_request_state"
    description = "Ask for a confirmation (key confirm), carrying request state."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS
    STATE: ClassVar[dict[str, str]] = {"asked": "confirm"}

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit the confirmation; say state-ok when the sealed state is back."""
        del arguments
        answer = await ctx.elicit(
            "Please confirm", _form("ok", "boolean"), key="confirm", state=self.STATE
        )
        confirmed = _field(answer, "ok")
        if ctx.request_state == self.STATE:
            return f"state-ok: confirmed={confirmed}"
        return f"confirmed={confirmed}"


class InputRequiredMultipleInputs(Tool):
    """Asks for a name, a sampled greeting and the roots in one round."""

    name = "test_input_required_result_multiple_inputs"
    description = "Ask for a name, a greeting and the roots at once."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Ask the three questions together and combine the answers."""
        del arguments
        answers = await ctx.ask(
            {
                "user_name": InputRequest.elicitation(
                    "What is your name?", _form("name")
                ),
                "greeting": InputRequest.sampling("Generate a greeting", max_tokens=50),
                "client_roots": InputRequest.roots(),
            },
            state={"asked": ["user_name", "greeting", "client_roots"]},
        )
        name = _field(answers["user_name"], "name")
        roots = answers["client_roots"].get("roots") or []
        return (
            f"{_sampled(answers['greeting'])}, {name}! "
            f"({len(roots) if isinstance(roots, list) else 0} roots)"
        )


class InputRequiredMultiRound(Tool):
    """Asks two questions in two rounds, the state carrying the first answer."""

    name = "test_input_required_result_multi_round"
    description = "Ask a name (step1), then a favourite colour (step2)."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Run whichever step the sealed state says is next."""
        del arguments
        state = ctx.request_state if isinstance(ctx.request_state, dict) else {}
        name = state.get("name")
        if state.get("round") != 2:  # noqa: PLR2004 - the second round
            first = await ctx.elicit(
                "Step 1: What is your name?",
                _form("name"),
                key="step1",
                state={"round": 1},
            )
            name = _field(first, "name")
        second = await ctx.elicit(
            "Step 2: What is your favorite color?",
            _form("color"),
            key="step2",
            state={"round": 2, "name": name},
        )
        return f"{name} likes {_field(second, 'color')}."


class InputRequiredTamperedState(Tool):
    """Asks with sealed state; a retry whose state was altered is refused."""

    name = "test_input_required_result_tampered_state"
    description = "Ask for a confirmation with integrity-protected request state."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Elicit a confirmation; the engine verifies the state on the retry."""
        del arguments
        answer = await ctx.elicit(
            "Please confirm",
            _form("ok", "boolean"),
            key="confirm",
            state={"asked": "confirm", "tamper": "evident"},
        )
        return f"state verified: confirmed={_field(answer, 'ok')}"


class InputRequiredCapabilities(Tool):
    """Asks only for what the request's client capabilities allow."""

    name = "test_input_required_result_capabilities"
    description = "Ask the client only what its declared capabilities allow."
    input_schema: ClassVar[dict[str, Any]] = NO_ARGUMENTS

    async def run(self, arguments: dict[str, Any], ctx: Any) -> object:
        """Build the questions from the declared capabilities and ask them."""
        del arguments
        declared = ctx.client_capabilities
        requests: dict[str, InputRequest] = {}
        if "elicitation" in declared:
            requests["user_name"] = InputRequest.elicitation(
                "What is your name?", _form("name")
            )
        if "sampling" in declared:
            requests["greeting"] = InputRequest.sampling(
                "Generate a greeting", max_tokens=50
            )
        if "roots" in declared:
            requests["client_roots"] = InputRequest.roots()
        if not requests:
            return "The client declared nothing to ask."
        answers = await ctx.ask(requests)
        return f"Answered: {', '.join(sorted(answers))}"
