"""The base class a tool author subclasses: a multi-action tool or a plain tool."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from wymcp.core.schema._action import Action
from wymcp.core.schema._context import Context


class Tool:
    """Base class of every tool.

    A subclass sets `name` and `description` and either `actions` (a multi-action
    tool, which defines `run_action`) or, with no actions, an `input_schema` and
    `run` (a plain tool; without an `input_schema` it takes no arguments). A
    multi-action tool may also set a hand-written `input_schema` to carry
    `x-mcp-header` annotations; dispatch still goes by its actions. `scopes`
    names the OAuth scopes its calls need when the server authorizes requests: a
    list for every call, or `{"*": [...], "<action>": [...]}`.
    `task_support` (`forbidden`, `optional`, `required`; an action may
    override it) says whether a call may run as a task; with `task_prelude`
    the call runs in its request until it awaits `ctx.start_task()`.
    `help_pointer = False` leaves out the sentence pointing at `help` that a
    multi-action tool's published description otherwise ends with.

    The framework instantiates each tool class once with no arguments.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    title: ClassVar[str | None] = None
    annotations: ClassVar[Mapping[str, Any] | None] = None
    output_schema: ClassVar[Mapping[str, Any] | None] = None
    actions: ClassVar[Mapping[str, Action] | None] = None
    input_schema: ClassVar[Mapping[str, Any] | None] = None
    scopes: ClassVar[Sequence[str] | Mapping[str, Sequence[str]] | None] = None
    task_support: ClassVar[str | None] = None
    task_prelude: ClassVar[bool] = False
    help_pointer: ClassVar[bool] = True

    async def run_action(
        self, action: str, data: dict[str, Any], ctx: Context
    ) -> object:
        """Run one action of a multi-action tool with data that passed every gate.

        By default, the action's `@action` method (the tool is prepared first if
        it was not yet); override it to dispatch by hand.
        """
        from wymcp.core.schema._bindings import run_bound  # noqa: PLC0415 - a cycle

        return await run_bound(self, action, data, ctx)

    async def run(self, arguments: dict[str, Any], ctx: Context) -> object:
        """Run a plain tool with arguments that passed every gate."""
        raise NotImplementedError

    def hints(self, action: str, hint_context: Any) -> Sequence[Any]:
        """Return follow-up suggestions for a call's answer (none by default)."""
        del action, hint_context
        return []

    def action_context(self, action: str, ctx: Context) -> Mapping[str, Any] | None:
        """Return runtime context help and answers carry under `context` (none)."""
        del action, ctx
        return None
