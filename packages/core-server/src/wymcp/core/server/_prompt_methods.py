"""The prompt methods and completion.

`prompts/list`, `prompts/get` (arguments through the gates) and
`completion/complete`.
"""

from __future__ import annotations

import inspect
import logging
from typing import Any, Final

from wymcp.core.gates import check
from wymcp.core.server._asking import Contexts, answer_asking
from wymcp.core.server._call import Call, need
from wymcp.core.server._call_tool import InputRequired
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._jsonrpc import internal_error, invalid_params, refused_params
from wymcp.core.server._listing import Listing
from wymcp.core.server._prompt import prompt_refusal, prompt_result
from wymcp.core.server._tool_context import MissingCapabilityError

_log = logging.getLogger("wymcp.core.server")

MAX_COMPLETIONS: Final = 100
"""Most values one completion answer carries (the spec's cap)."""


class PromptMethods:
    """Handlers of the prompt methods and of completion."""

    def __init__(
        self, catalogue: Catalogue, contexts: Contexts, listing: Listing
    ) -> None:
        self._catalogue = catalogue
        self._contexts = contexts
        self._listing = listing

    async def list(self, call: Call) -> dict[str, Any]:
        """`prompts/list`."""
        need(call, self._catalogue.has_prompts)
        items = self._catalogue.prompt_definitions(call.revision)
        return self._listing.page(call, items, "prompts", seen="prompts")

    async def get(self, call: Call) -> dict[str, Any]:
        """`prompts/get`: a refused argument answers -32602 with the refusal."""
        catalogue = self._catalogue
        need(call, catalogue.has_prompts)
        name = call.params.get("name")
        if not isinstance(name, str):
            raise invalid_params("Missing or invalid 'name' in params.")
        spec = catalogue.prompt(name)
        if spec is None:
            names = ", ".join(p.name for p in catalogue.prompts)
            raise invalid_params(f"Unknown prompt. Valid prompts: {names}.")
        arguments = call.params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise invalid_params("Invalid 'arguments' in params: expected an object.")
        verdict = check(spec.gate.tool, None, arguments, strict=True)
        if not verdict.accepted:
            refusal = prompt_refusal(spec, verdict.refusal or {})
            raise refused_params(refusal)
        ctx = self._contexts(call, "prompts/get:", name)

        async def render() -> dict[str, Any]:
            try:
                value = await spec.prompt.render(dict(verdict.data or {}), ctx)
                return prompt_result(spec, value)
            except (InputRequired, MissingCapabilityError):
                raise
            except Exception:  # noqa: BLE001 - a raising render answers -32603
                _log.exception("prompt %s raised", spec.name)
                raise internal_error("The prompt could not be rendered.") from None

        return await answer_asking(render())

    async def complete(self, call: Call) -> dict[str, Any]:
        """`completion/complete` for a prompt argument or a template variable."""
        catalogue = self._catalogue
        need(call, catalogue.has_prompts or catalogue.has_resources)
        ref = call.params.get("ref")
        argument = call.params.get("argument")
        if not isinstance(ref, dict) or not isinstance(argument, dict):
            raise invalid_params("completion/complete needs 'ref' and 'argument'.")
        name, value = argument.get("name"), argument.get("value")
        if not isinstance(name, str) or not isinstance(value, str):
            raise invalid_params("argument needs a string 'name' and 'value'.")
        context = call.params.get("context")
        given = context.get("arguments") if isinstance(context, dict) else None
        known = (
            {k: v for k, v in given.items() if isinstance(v, str)}
            if isinstance(given, dict)
            else {}
        )
        target: Any = None
        if ref.get("type") == "ref/prompt" and isinstance(ref.get("name"), str):
            prompt = catalogue.prompt(ref["name"])
            target = prompt.prompt if prompt is not None else None
        elif ref.get("type") == "ref/resource" and isinstance(ref.get("uri"), str):
            template = catalogue.template(ref["uri"])
            target = template.resource if template is not None else None
        else:
            raise invalid_params("ref must be a ref/prompt or ref/resource.")
        if target is None:
            raise invalid_params("Unknown prompt or resource template.")
        suggested = target.complete(name, value, known)
        if inspect.isawaitable(suggested):  # an async complete() reads off the loop
            suggested = await suggested
        values = [v for v in suggested if isinstance(v, str)]
        return {
            "completion": {
                "values": values[:MAX_COMPLETIONS],
                "total": len(values),
                "hasMore": len(values) > MAX_COMPLETIONS,
            }
        }
