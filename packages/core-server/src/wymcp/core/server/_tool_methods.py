"""The tool methods: `tools/list`, `tools/call`, and the `help` tool it serves.

A call is checked against its `Mcp-Param-*` headers, run at once or as a task
(the tasks extension), and its asking turned into the revision's answer.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Mapping
from typing import Any

import attrs

from wymcp.core.gates import Verdict
from wymcp.core.schema import RESERVED_NAME, ToolSpec
from wymcp.core.server._asking import Contexts, asking_result
from wymcp.core.server._call import Call
from wymcp.core.server._call_deadlines import Deadlines
from wymcp.core.server._call_tool import (
    InputRequired,
    call_tool,
    gate_arguments,
    gate_content,
    raised,
    unknown_tool,
)
from wymcp.core.server._catalogue import Catalogue
from wymcp.core.server._help import HelpAnswer, answer_help, help_arguments
from wymcp.core.server._jsonrpc import invalid_params
from wymcp.core.server._listing import Listing
from wymcp.core.server._off_loop import OffLoopLane
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._stateless_mirror import check_params
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._tasks import Tasks, client_has_tasks, missing_tasks
from wymcp.core.server._tool_context import MissingCapabilityError, ToolContext


class ToolMethods:
    """Handlers of the tool methods over one engine's catalogue."""

    def __init__(
        self,
        *,
        catalogue: Catalogue,
        contexts: Contexts,
        listing: Listing,
        options: EngineOptions,
        deadlines: Deadlines,
        tasks: Tasks,
    ) -> None:
        self._catalogue = catalogue
        self._contexts = contexts
        self._listing = listing
        self._options = options
        self._deadlines = deadlines
        self._lane = OffLoopLane()  # calls' large jobs, one at a time, clients in turn
        self._tasks = tasks

    async def list(self, call: Call) -> dict[str, Any]:
        """`tools/list`: the tools in order, help last."""
        items = self._catalogue.tool_definitions(call.revision)
        return self._listing.page(call, items, "tools", seen="tools")

    async def call(self, call: Call) -> dict[str, Any]:
        """`tools/call`: -32602 for a malformed envelope or an unknown tool."""
        params = call.params
        name = params.get("name")
        if not isinstance(name, str):
            raise invalid_params("Missing or invalid 'name' in params.")
        arguments = params.get("arguments")
        if arguments is None:
            arguments = {}
        if not isinstance(arguments, dict):
            raise invalid_params("Invalid 'arguments' in params: expected an object.")
        if name == RESERVED_NAME:
            return self._help(call, arguments)
        spec = self._catalogue.by_name.get(name)
        if spec is None:
            raise unknown_tool(name, self._catalogue.tool_names())
        if call.checks_params and (spec.header_annotations or call.headers.repeated):
            # with neither, `check_params` has nothing to compare
            check_params(call.headers, spec.header_annotations, arguments)
        revision = call.revision
        lane = self._lane  # each job on it takes the caller's turn (`caller`)
        opened = (
            await self._as_task(call, spec, arguments, lane)
            if revision.stateless and spec.may_run_as_task
            else None
        )
        ctx = self._contexts(call, "tools/call:", name)
        options = self._options
        try:
            if opened is not None:
                return await self._task(call, spec, arguments, ctx, opened, lane)
            return await call_tool(
                spec,
                arguments,
                ctx,
                revision=revision,
                options=options,
                deadlines=self._deadlines,
                lane=lane,
                caller=(call.principal, call.peer),
                call_timeout=options.call_timeout,
                record=call.record,
                json_bytes=call.json_bytes,
            )
        except (InputRequired, MissingCapabilityError) as asked:
            return _asked(call, asked)
        except TaskFailedError as failed:
            raise failed.rpc_error() from None

    async def _task(  # noqa: PLR0917 - the call's parts and its lane
        self,
        call: Call,
        spec: ToolSpec,
        arguments: dict[str, Any],
        ctx: ToolContext,
        opened: tuple[str | None, Verdict],
        lane: OffLoopLane,
    ) -> dict[str, Any]:
        """Run a call that may be a task; its arguments passed the gates already."""

        def work() -> Awaitable[dict[str, Any]]:
            action, verdict = opened  # a task may run again: each run gets its data
            fresh = attrs.evolve(verdict, data=dict(verdict.data or {}))
            return call_tool(
                spec,
                arguments,
                ctx,
                revision=call.revision,
                options=self._options,
                deadlines=self._deadlines,
                lane=lane,
                call_timeout=None,  # a task is bound by its TTL, not CALL_TIMEOUT
                opened=(action, fresh),
                caller=(call.principal, call.peer),
            )

        return await self._tasks.call(
            work,
            ctx,
            principal=call.principal,
            peer=call.peer,
            capabilities=call.capabilities,
            prelude=bool(getattr(spec.tool, "task_prelude", False)),
        )

    async def _as_task(
        self,
        call: Call,
        spec: ToolSpec,
        arguments: dict[str, Any],
        lane: OffLoopLane,
    ) -> tuple[str | None, Verdict] | None:
        """The gates' accepted verdict when this call runs as a task, else None.

        -32021 when it must and cannot. A call the gates refuse is answered at
        once, never as a task. Only asked of a tool with an action that may
        run as one (`ToolSpec.may_run_as_task`).
        """
        action = arguments.get("action") if spec.plain is None else None
        support = spec.task_support_for(action if isinstance(action, str) else None)
        if support == "forbidden":
            return None
        if not client_has_tasks(call.capabilities):
            if support == "required":
                raise missing_tasks()
            return None
        opened = await gate_arguments(
            spec,
            arguments,
            strict=self._options.strict,
            record=call.record,
            lane=lane,
            json_bytes=call.json_bytes,
            caller=(call.principal, call.peer),
        )
        return None if isinstance(opened, dict) else opened

    def _help(self, call: Call, arguments: dict[str, Any]) -> dict[str, Any]:
        if call.checks_params:
            check_params(call.headers, (), arguments)
        asked = help_arguments(arguments)
        if isinstance(asked, dict):
            return _help_result(call, HelpAnswer(asked, is_error=True))
        tool, action = asked
        ctx = self._contexts(call)
        specs = self._catalogue.tools

        def context_of(spec: ToolSpec, name: str) -> Any:
            context = spec.tool.action_context(name, ctx)
            if context is not None and not isinstance(context, Mapping):
                raise TypeError("action_context must return a mapping or None")
            return dict(context) if context is not None else None

        try:
            answer = answer_help(specs, tool, action, context_of)
        except Exception as error:  # noqa: BLE001 - a raising hook answers tool_raised
            spec = next(s for s in specs if s.name == tool)
            return raised(
                spec, action, error, expose=self._options.expose_exception_messages
            )
        return _help_result(call, answer)


def _asked(call: Call, asked: InputRequired | MissingCapabilityError) -> dict[str, Any]:
    """The answer of a call that asks the client first (`input_required`)."""
    if call.record is not None:
        call.record.outcome = "input_required"
    return asking_result(asked)


def _help_result(call: Call, answer: HelpAnswer) -> dict[str, Any]:
    text = json.dumps(answer.payload, ensure_ascii=False, separators=(",", ":"))
    return {
        "content": gate_content([{"type": "text", "text": text}], call.revision),
        "isError": answer.is_error,
    }
