"""Registration: checking a tool's declaration once and building its prepared spec.

Every problem of a tool is collected into one `ConfigurationError` naming the tool
and the action; a tool passes this no later than server construction.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

from wymcp.core.schema._action import Action
from wymcp.core.schema._action_checks import (
    action_problems,
    breaks_line,
    json_problems,
    line_break_problem,
)
from wymcp.core.schema._bindings import BINDINGS, bind_actions, marks_actions
from wymcp.core.schema._errors import ConfigurationError
from wymcp.core.schema._header_annotations import (
    header_annotation_problems,
    header_annotations,
)
from wymcp.core.schema._key_set import close_properties, close_schema
from wymcp.core.schema._references import outside_problem, outside_references
from wymcp.core.schema._scopes import declared_scopes
from wymcp.core.schema._spec import ActionSpec, ToolSpec, fresh_copy
from wymcp.core.schema._summaries import compact_input_schema
from wymcp.core.schema._task_support import declared_task_support
from wymcp.core.schema._tool import Tool
from wymcp.core.schema._value_root import (
    ValueNode,
    build_problem,
    build_value_root,
    compile_schema,
)

RESERVED_NAME = "help"
"""The built-in tool's name, which no registered tool may take."""
_CACHE = "_wymcp_spec"
_TOOL_NAME = re.compile(r"[A-Za-z0-9_.-]{1,128}")
_ACTION_FIELDS = ", ".join(field.name for field in Action.__attrs_attrs__)
_BUILD_ERRORS = (ValueError, TypeError, OverflowError, RecursionError)


def prepare(tool: object) -> ToolSpec:
    """Check a tool's declaration and return its prepared spec (cached on the tool).

    Accepts a `Tool` subclass (instantiated once, with no arguments), a `Tool`
    instance or an already prepared `ToolSpec`. Raises `ConfigurationError`
    naming every problem of the tool.
    """
    if isinstance(tool, ToolSpec):
        return tool
    cached = _cached(tool)
    if cached is not None:
        return cached
    instance = _instantiate(tool)
    spec = _prepare_instance(instance)
    _remember(tool, spec)
    if tool is not instance:
        _remember(instance, spec)
    return spec


def prepare_all(tools: Iterable[object]) -> tuple[ToolSpec, ...]:
    """Prepare every tool, then refuse the reserved name `help` and duplicate names.

    The problems of every tool are reported together in one `ConfigurationError`.
    """
    specs: list[ToolSpec] = []
    problems: list[str] = []
    for tool in tools:
        try:
            specs.append(prepare(tool))
        except ConfigurationError as error:
            problems.extend(f"tool {error.tool!r}: {p}" for p in error.problems)
    seen: set[str] = set()
    for spec in specs:
        if spec.name == RESERVED_NAME:
            problems.append(
                f"tool {spec.name!r}: uses the reserved name {RESERVED_NAME!r};"
                " the help tool is provided by wymcp and added to every server"
            )
        elif spec.name in seen:
            problems.append(
                f"tool {spec.name!r}: duplicate tool name; each tool needs its own"
            )
        seen.add(spec.name)
    if problems:
        raise ConfigurationError(None, problems)
    return tuple(specs)


def _cached(tool: object) -> ToolSpec | None:
    """The spec cached on this very tool (class or instance), if any."""
    holder = getattr(tool, "__dict__", {})
    cached = holder.get(_CACHE)
    if isinstance(cached, ToolSpec) and (cached.tool is tool or isinstance(tool, type)):
        return cached
    owner = type(tool).__dict__.get(_CACHE)
    if isinstance(owner, ToolSpec) and owner.tool is tool:
        return owner
    return None


def _remember(tool: object, spec: ToolSpec) -> None:
    """Cache the spec on the tool; a tool that refuses attributes is prepared again."""
    try:
        setattr(tool, _CACHE, spec)
    except (AttributeError, TypeError):
        return


def _instantiate(tool: object) -> Tool:
    """The tool instance: the tool itself, or its class instantiated once."""
    label = str(getattr(tool, "__name__", type(tool).__name__))
    if isinstance(tool, type):
        if not issubclass(tool, Tool):
            raise ConfigurationError(label, ["is not a subclass of wymcp Tool"])
        try:
            return tool()
        except Exception as error:
            raise ConfigurationError(
                label,
                [f"cannot be instantiated with no arguments: {type(error).__name__}"],
            ) from error
    if not isinstance(tool, Tool):
        raise ConfigurationError(label, ["is not a wymcp Tool class or instance"])
    return tool


def _prepare_instance(tool: Tool) -> ToolSpec:
    """Run every registration check on one tool instance and build its spec."""
    problems = _tool_problems(tool)
    name = getattr(tool, "name", None)
    label = name if isinstance(name, str) and name else type(tool).__name__
    bound = bind_actions(tool, getattr(tool, "actions", None), problems)
    actions = bound.actions
    hand_written = getattr(tool, "input_schema", None)
    plain = None
    action_specs: dict[str, ActionSpec] = {}
    if actions is None:
        plain = _plain_spec(tool, problems)
    else:
        # A tool with @action methods has code for its actions even when one
        # failed to bind: that failure is its problem, not a missing run_action.
        action_specs = _action_specs(
            tool, actions, problems, bound=bool(bound.bindings) or marks_actions(tool)
        )
        if hand_written is not None:
            _check_hand_written(hand_written, problems)
    output_schema = getattr(tool, "output_schema", None)
    if output_schema is None:
        output_schema = bound.output_schema
    output_validator = _output_validator(output_schema, problems)
    scopes = declared_scopes(getattr(tool, "scopes", None), action_specs, problems)
    task_support = declared_task_support(
        getattr(tool, "task_support", None),
        actions if actions is None else _declarations_of(action_specs),
        problems,
    )
    if problems:
        raise ConfigurationError(label, problems)
    if bound.bindings:
        setattr(tool, BINDINGS, bound.bindings)
    if hand_written is not None:
        input_schema = dict(hand_written)
    elif plain is not None:
        input_schema = dict(plain.published)
    else:
        input_schema = compact_input_schema(action_specs)
    return ToolSpec(
        name=label,
        tool=tool,
        input_schema=input_schema,
        actions=action_specs,
        header_annotations=header_annotations(input_schema),
        output_schema=dict(output_schema) if output_schema is not None else None,
        plain=plain,
        output_validator=output_validator,
        scopes=scopes,
        task_support=task_support,
    )


def _declarations_of(specs: Mapping[str, ActionSpec]) -> dict[str, object]:
    """The declarations of prepared actions, by name."""
    return {name: spec.action for name, spec in specs.items()}


def _tool_problems(tool: Tool) -> list[str]:
    """Problems of the tool-level attributes: name, description, title, annotations."""
    problems: list[str] = []
    name = getattr(tool, "name", None)
    if not isinstance(name, str) or not _TOOL_NAME.fullmatch(name):
        problems.append(
            "name must be 1 to 128 characters of letters, digits, '_', '-' or '.'"
        )
    description = getattr(tool, "description", None)
    if not isinstance(description, str) or not description.strip():
        problems.append("description must be a non-empty string")
    title: object = tool.title
    if not isinstance(title, (str, type(None))):
        problems.append("title must be a string or None")
    annotations: object = tool.annotations
    if annotations is not None and not isinstance(annotations, Mapping):
        problems.append("annotations must be a mapping or None")
    elif annotations is not None:
        problems.extend(json_problems("annotations", annotations))
    return problems


def _action_specs(
    tool: Tool, actions: object, problems: list[str], *, bound: bool = False
) -> dict[str, ActionSpec]:
    """Check and prepare every action of a multi-action tool."""
    if not isinstance(actions, Mapping):
        problems.append("actions must be a mapping of action names to Action")
        return {}
    if type(tool).run_action is Tool.run_action and not bound:
        problems.append("a tool with actions must define run_action")
    specs: dict[str, ActionSpec] = {}
    for name, action in actions.items():
        spec = _action_spec(name, action, problems)
        if spec is not None:
            specs[name] = spec
    return specs


def _action_spec(
    name: object, action: object, problems: list[str]
) -> ActionSpec | None:
    """Check one action and build its spec; problems go to `problems`."""
    if not isinstance(name, str) or not name:
        problems.append(f"action {name!r}: an action name must be a non-empty string")
        return None
    where = f"action {name!r}"
    if not isinstance(action, Action):
        problems.append(f"{where}: must be an Action (fields: {_ACTION_FIELDS})")
        return None
    found: list[str] = []
    if breaks_line(name):
        found.append(line_break_problem("an action name"))
    shape_ok = action_problems(action, found)
    root = None
    closed: dict[str, Any] = {}
    if shape_ok.properties and _stays_inside(
        "properties", action.properties, found, named=True
    ):
        closed = close_properties(action.properties)
        value_schema = {
            "type": "object",
            "properties": closed,
            "additionalProperties": False,
        }
        root = _build_root("properties", value_schema, found)
        if root is not None and shape_ok.defaults:
            _defaults_values(root, dict(action.defaults), found)
        if root is not None and not found:
            _examples_pass(root, action, found)
    problems.extend(f"{where}: {p}" for p in found)
    if found or root is None:
        return None
    defaults = fresh_copy(dict(action.defaults))
    published: dict[str, Any] = {
        "properties": closed,
        "required": list(action.required),
        "defaults": fresh_copy(defaults),
    }
    groups = tuple(tuple(group) for group in action.required_one_of)
    if groups:
        published["required_one_of"] = [list(group) for group in groups]
    return ActionSpec(
        name=name,
        action=action,
        published=published,
        required=tuple(action.required),
        required_one_of=groups,
        defaults=defaults,
        root=root,
    )


def action_map_problems(actions: Mapping[Any, Any]) -> list[str]:
    """What registration would refuse in an action map, each naming its action.

    An `ActionSpec` filed under its own name was built by registration and passes.
    """
    problems: list[str] = []
    for name, action in actions.items():
        if not (isinstance(action, ActionSpec) and action.name == name):
            _action_spec(name, action, problems)
    return problems


def _plain_spec(tool: Tool, problems: list[str]) -> ActionSpec | None:
    """Prepare a plain tool's arguments from its hand-written input schema."""
    if type(tool).run is Tool.run:
        problems.append("a tool without actions must define run")
    schema = tool.input_schema
    if schema is None:
        schema = {"type": "object", "properties": {}}
    if not _check_hand_written(schema, problems):
        return None
    published = close_schema(dict(schema))
    required = published.get("required", [])
    value_schema = {k: v for k, v in published.items() if k != "required"}
    root = _build_root("input_schema", value_schema, problems)
    if root is None:
        return None
    return ActionSpec(
        name="",
        action=None,
        published=published,
        required=tuple(required) if isinstance(required, list) else (),
        required_one_of=(),
        defaults={},
        root=root,
    )


def _json_object(
    field: str, schema: object, problems: list[str], wanted: str
) -> Mapping[str, Any] | None:
    """`schema` when it is a mapping of JSON values; else None, saying why."""
    if not isinstance(schema, Mapping):
        problems.append(f"{field} must be {wanted}")
        return None
    found = json_problems(field, schema)
    problems.extend(found)
    return None if found else schema


def _check_hand_written(given: object, problems: list[str]) -> bool:
    """Check a hand-written input schema; return whether it could be built."""
    schema = _json_object("input_schema", given, problems, "a JSON Schema object")
    if schema is None:
        return False
    if schema.get("type") != "object":
        problems.append('input_schema must have "type": "object" at its root')
    problems.extend(f"input_schema: {p}" for p in header_annotation_problems(schema))
    if not _stays_inside("input_schema", schema, problems):
        return False
    try:
        compile_schema(dict(schema))
    except _BUILD_ERRORS as error:
        problems.append(f"input_schema cannot be built: {build_problem(error)}")
        return False
    return True


def _output_validator(given: object, problems: list[str]) -> Any:
    """Compile the output schema with `format` as an annotation (None if absent)."""
    if given is None:
        return None
    schema = _json_object(
        "output_schema", given, problems, "a JSON Schema object or None"
    )
    if schema is None or not _stays_inside("output_schema", schema, problems):
        return None
    try:
        return compile_schema(dict(schema), assert_formats=False)
    except _BUILD_ERRORS as error:
        problems.append(f"output_schema cannot be built: {build_problem(error)}")
        return None


def _stays_inside(
    where: str, schema: object, problems: list[str], *, named: bool = False
) -> bool:
    """Refuse references to other documents before the engine sees the schema."""
    outside = outside_references(schema, named=named)
    problems.extend(outside_problem(where, reference) for reference in outside)
    return not outside


def _build_root(where: str, schema: dict[str, Any], found: list[str]) -> Any:
    """Compile a value root; a build failure becomes a problem."""
    try:
        return build_value_root(schema)
    except _BUILD_ERRORS as error:
        found.append(f"{where}: the schema cannot be built: {build_problem(error)}")
        return None


def _examples_pass(root: ValueNode, action: Action, found: list[str]) -> None:
    """Check every example passes the action's gates: help must not teach a refusal."""
    groups = [tuple(group) for group in action.required_one_of]
    for index, example in enumerate(action.examples):
        where = f"examples[{index}]"
        missing = [name for name in action.required if name not in example]
        if missing:
            found.append(f"{where} lacks required {missing}")
        elif groups and not any(all(n in example for n in g) for g in groups):
            found.append(f"{where} completes no required_one_of group")
        else:
            try:
                valid = bool(root.validator.is_valid(dict(example)))
            except _BUILD_ERRORS:
                valid = False
            if not valid:
                found.append(f"{where} is refused by the action's schema")


def _defaults_values(
    root: ValueNode, defaults: dict[str, Any], found: list[str]
) -> None:
    """Check every default against its property schema (the closed value root)."""
    if not defaults:
        return
    try:
        errors = list(root.validator.iter_errors(defaults))
    except _BUILD_ERRORS as error:
        found.append(f"defaults cannot be checked: {build_problem(error)}")
        return
    keys = sorted({str(e.instance_path[0]) for e in errors if e.instance_path})
    found.extend(f"defaults: {key!r} is refused by its property schema" for key in keys)
    if errors and not keys:
        found.append("defaults are refused by the action's schema")
