"""The prepared form of a tool: what registration checked, built and compiled once."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from wymcp.core.schema._action import Action
from wymcp.core.schema._header_annotations import HeaderAnnotation
from wymcp.core.schema._value_root import ValueNode

_OUTPUT_PROBLEMS = 10
_OUTPUT_PROBLEM_LENGTH = 200


_LEAVES = frozenset({str, int, float, bool, type(None)})


def fresh_copy(value: Any) -> Any:
    """A deep copy of a JSON value: new lists and dicts, the same immutable leaves."""
    kind = value.__class__
    if kind is dict:
        return {
            key: sub if sub.__class__ in _LEAVES else fresh_copy(sub)
            for key, sub in value.items()
        }
    if kind is list:
        return [sub if sub.__class__ in _LEAVES else fresh_copy(sub) for sub in value]
    if kind in _LEAVES:
        return value
    if isinstance(value, Mapping):
        return {key: fresh_copy(sub) for key, sub in value.items()}
    if isinstance(value, tuple):
        return [fresh_copy(sub) for sub in value]
    return value


@attrs.frozen(eq=False)
class ActionSpec:
    """One prepared action (or, with `action` None, a plain tool's arguments).

    Attributes:
        name: the action's name ("" for a plain tool's arguments).
        action: the `Action` declaration (None for a plain tool).
        published: what help shows and refusals carry as `input_schema`: the closed
            `properties`, `required`, `defaults` and, when declared,
            `required_one_of` (for a plain tool, its closed input schema).
        required: the required names, in declaration order.
        required_one_of: the groups, at least one of which must be fully present.
        defaults: values merged into the data after every gate passed (read them
            through `merge_defaults`, which hands out fresh lists and objects).
        root: the compiled value root the value gate validates against.
    """

    name: str
    action: Action | None
    published: Mapping[str, Any]
    required: tuple[str, ...]
    required_one_of: tuple[tuple[str, ...], ...]
    defaults: Mapping[str, Any]
    root: ValueNode
    _containers: tuple[str, ...] = attrs.field(init=False, repr=False)

    @_containers.default
    def _container_defaults(self) -> tuple[str, ...]:
        """The defaults that are lists or objects: the ones copied per call."""
        return tuple(
            key
            for key, value in self.defaults.items()
            if isinstance(value, (dict, list))
        )

    def merge_defaults(self, data: Mapping[str, Any]) -> dict[str, Any]:
        """`data` with the defaults it lacks merged under it, as a new dict.

        A default list or object is a fresh deep copy each time, so what a tool does
        to its data never reaches the next call or what help publishes.
        """
        merged = {**self.defaults, **data}
        for key in self._containers:
            if key not in data:
                merged[key] = fresh_copy(self.defaults[key])
        return merged

    def published_copy(self) -> dict[str, Any]:
        """A fresh deep copy of `published`: what a refusal or help may hand out."""
        copied: dict[str, Any] = fresh_copy(dict(self.published))
        return copied


@attrs.frozen(eq=False)
class ToolSpec:
    """One prepared tool.

    Attributes:
        name: the tool's name.
        tool: the tool instance calls run on.
        input_schema: what tools/list publishes as `inputSchema`.
        actions: the prepared actions by name (empty for a plain tool).
        header_annotations: the `x-mcp-header` annotations of the input schema.
        output_schema: the declared output schema, or None.
        plain: a plain tool's prepared arguments (None for a multi-action tool).
        scopes: the OAuth scopes its calls need, by `"*"` (every action) or action
            name (`Tool.scopes`, checked); empty when none is declared.
        task_support: `forbidden`/`optional`/`required` by action name
            (`""` for a plain tool), resolved and checked.
        may_run_as_task: whether `task_support` allows a task for any call.
    """

    name: str
    tool: Any
    input_schema: Mapping[str, Any]
    actions: Mapping[str, ActionSpec]
    header_annotations: tuple[HeaderAnnotation, ...]
    output_schema: Mapping[str, Any] | None
    plain: ActionSpec | None = None
    output_validator: Any = attrs.field(default=None, repr=False)
    scopes: Mapping[str, frozenset[str]] = attrs.field(factory=dict)
    task_support: Mapping[str, str] = attrs.field(factory=dict)
    may_run_as_task: bool = attrs.field(init=False, repr=False)

    @may_run_as_task.default
    def _any_task_support(self) -> bool:
        """Whether any call of it may run as a task (else none is asked per call)."""
        return any(support != "forbidden" for support in self.task_support.values())

    def task_support_for(self, action: str | None) -> str:
        """The task support of one call (`forbidden` for an unknown action)."""
        return self.task_support.get(action or "", "forbidden")

    def validate_output(self, value: object) -> list[str]:
        """Check a result against the output schema; return problems (empty = valid).

        `format` is an annotation here. The problems are for the server's log: at
        most ten, each cut short.
        """
        if self.output_validator is None:
            return []
        problems: list[str] = []
        try:
            for error in self.output_validator.iter_errors(value):
                location = "/" + "/".join(str(token) for token in error.instance_path)
                problems.append(
                    f"{location}: {error.kind.name}"
                    f" ({str(error.message)[:_OUTPUT_PROBLEM_LENGTH]})"
                )
                if len(problems) == _OUTPUT_PROBLEMS:
                    break
        except (ValueError, TypeError, OverflowError) as error:
            return [f"the value cannot be checked as JSON: {type(error).__name__}"]
        return problems
