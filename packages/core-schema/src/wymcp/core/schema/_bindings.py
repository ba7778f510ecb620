"""The `@action` methods of a tool, bound at registration, and the dispatch to them.

Registration collects every marked method, derives its declaration and builds its
converter once; `dispatch_action` runs a gated call through the bound method.
"""

from __future__ import annotations

import inspect
import typing
from collections.abc import Awaitable, Callable, Mapping
from types import MappingProxyType
from typing import Any, Final

import attrs

from wymcp.core.schema._action import Action
from wymcp.core.schema._action_decorator import MARK, ActionMark
from wymcp.core.schema._derive import (
    DerivationError,
    derive_input,
    derive_output,
    is_output_annotation,
)
from wymcp.core.schema._echo_limit import ECHO_LIMIT
from wymcp.core.schema._errors import ToolError
from wymcp.core.schema._nested_defaults import (
    NestedDefaultsError,
    prove_nested_defaults,
)
from wymcp.core.schema._signature import (
    SignatureError,
    is_context,
    resolve,
    signature_fields,
)
from wymcp.core.schema._tool import Tool
from wymcp.core.schema._unreadable import UnreadableDataError

BINDINGS = "_wymcp_bindings"
"""The instance attribute holding a prepared tool's bindings by action name."""

_NO_BINDINGS: Final[Mapping[str, Any]] = MappingProxyType({})
"""What a tool without a `__dict__` has (made once, not per call)."""


@attrs.frozen(eq=False)
class Binding:
    """One action's code: the method, and how data goes in and the value comes out."""

    name: str
    method: Callable[..., Awaitable[Any]]
    structure: Callable[[Any], Any] | None = None
    output_type: type | None = None
    output_list: bool = False
    unstructure: Callable[[Any], Any] | None = None
    output_schema: dict[str, Any] | None = None

    async def run(
        self, tool: object, data: Any, ctx: object, *, read: bool = True
    ) -> object:
        """Structure the gated data, run the method, unstructure what it returned.

        With `read` False, `data` is what `read` made of it already.
        """
        argument = self.read(data) if read else data
        value = await self.method(tool, argument, ctx)
        if self.unstructure is not None and self._typed(value):
            return self.unstructure(value)
        return value

    def read(self, data: dict[str, Any]) -> Any:
        """The method's argument: the gated data, into its class when it has one.

        Raises `UnreadableDataError` for values the class cannot hold.
        """
        if self.structure is None:
            return data
        try:
            return self.structure(data)
        except UnreadableDataError:
            raise
        except Exception as error:  # noqa: BLE001 - never echo the value it read
            raise StructureError(self.name, error) from None

    def _typed(self, value: object) -> bool:
        if self.output_list:
            return isinstance(value, list) and all(
                isinstance(item, self.output_type)  # type: ignore[arg-type]
                for item in value
            )
        return isinstance(value, self.output_type)  # type: ignore[arg-type]


class StructureError(ToolError):
    """Data the gates accepted that cattrs could not read (a declaration bug).

    The message names the action and the exception type, never the value.
    """

    def __init__(self, action: str, error: BaseException) -> None:
        super().__init__(
            f"The data of action {action!r} passed its schema but could not be"
            f" read into its class ({type(error).__name__}); the tool's declaration"
            " needs a fix."
        )


@attrs.frozen
class Bound:
    """A tool's actions once bound: the declarations, the code, the output schema."""

    actions: Mapping[str, Action] | None
    bindings: dict[str, Binding]
    output_schema: dict[str, Any] | None


def bind_actions(tool: Tool, declared: object, problems: list[str]) -> Bound:
    """Collect the `@action` methods of `tool` beside its `actions` mapping.

    Problems (a method without a declaration, a declaration without code, a type
    the derivation cannot express) go to `problems`, each naming the action.
    """
    marks = _marked_methods(type(tool))
    if not marks or (declared is not None and not isinstance(declared, Mapping)):
        return Bound(declared, {}, None)  # type: ignore[arg-type]
    table: dict[str, Action] = dict(declared or {})
    dict_names = set(table)
    bindings: dict[str, Binding] = {}
    attempted: set[str] = set()
    for attribute, (function, mark) in marks.items():
        name = mark.name or attribute
        where = f"action {name!r}"
        if name in attempted:
            problems.append(f"{where}: two methods are marked @action for it")
            continue
        attempted.add(name)
        try:
            binding, declaration = _bind(name, function, mark, table.get(name))
        except (DerivationError, BindError) as error:
            problems.append(f"{where}: {error}")
            continue
        except NestedDefaultsError as error:
            problems.extend(f"{where}: {problem}" for problem in error.problems)
            continue
        if declaration is not None and name in dict_names:
            problems.append(f"{where}: {_TWICE}")
            continue
        if declaration is not None:
            table[name] = declaration
        bindings[name] = binding
    if type(tool).run_action is Tool.run_action:
        problems.extend(
            f"action {name!r}: declared but has no code; mark a method @action"
            " or define run_action"
            for name in table
            if name not in attempted
        )
    return Bound(table, bindings, _combined_output(table, bindings))


_TWICE = (
    "declared twice, in actions and by @action(description=...);"
    " bind the declaration with a bare @action instead"
)


def dispatch_action(
    tool: object, action: str, data: Any, ctx: object, *, read: bool = True
) -> Awaitable[object]:
    """Run one gated call: through its `@action` method, else `run_action`.

    With `read` False, `data` is what `action_reader` read already.
    """
    bindings = getattr(tool, "__dict__", {}).get(BINDINGS)
    if bindings is not None:
        binding = bindings.get(action)
        if binding is not None:
            return binding.run(tool, data, ctx, read=read)  # type: ignore[no-any-return]
    run: Callable[..., Awaitable[object]] = tool.run_action  # type: ignore[attr-defined]
    return run(action, data, ctx)


def action_binding(tool: object, action: str) -> Binding | None:
    """The `@action` binding of a prepared tool's action, or None (`run_action`).

    One lookup for a call: its `structure` says whether the gated data is read
    into a class first (`read`), its `run` runs it with `read=False` after.
    """
    bindings = getattr(tool, "__dict__", _NO_BINDINGS).get(BINDINGS)
    return None if bindings is None else bindings.get(action)


def action_reader(tool: object, action: str) -> Callable[[Any], Any] | None:
    """How a prepared tool's typed action reads its gated data, or None.

    None for an action whose method takes the data as it is (or that has none).
    The reader raises `UnreadableDataError` for values its class cannot hold.
    """
    bindings = getattr(tool, "__dict__", {}).get(BINDINGS) or {}
    binding = bindings.get(action)
    if binding is None or binding.structure is None:
        return None
    return binding.read  # type: ignore[no-any-return]


async def run_bound(
    tool: Tool, action: str, data: dict[str, Any], ctx: object
) -> object:
    """Run `action` through its bound method, preparing `tool` if it was not yet."""
    bindings = vars(tool).get(BINDINGS)
    if bindings is None and _marked_methods(type(tool)):
        from wymcp.core.schema._registration import prepare  # noqa: PLC0415 - a cycle

        prepare(tool)
        bindings = vars(tool).get(BINDINGS)
    binding = (bindings or {}).get(action)
    if binding is None:
        raise NotImplementedError(
            f"action {action[:ECHO_LIMIT]!r} has no @action method and run_action "
            "is not overridden"
        )
    return await binding.run(tool, data, ctx)


def action_output_schema(tool: object, action: str) -> dict[str, Any] | None:
    """The output schema derived for one `@action` of a prepared tool, or None."""
    bindings = getattr(tool, "__dict__", {}).get(BINDINGS) or {}
    binding = bindings.get(action)
    return None if binding is None else binding.output_schema


def marks_actions(tool: object) -> bool:
    """Whether `tool` (a `Tool` class or instance) has `@action` methods."""
    cls = tool if isinstance(tool, type) else type(tool)
    return issubclass(cls, Tool) and bool(_marked_methods(cls))


class BindError(Exception):
    """A method that cannot be bound; the message is the problem."""


def _marked_methods(cls: type) -> dict[str, tuple[Callable[..., Any], ActionMark]]:
    """The marked functions by attribute name, base classes first, overrides winning."""
    found: dict[str, tuple[Callable[..., Any], ActionMark]] = {}
    for klass in reversed(cls.__mro__):
        for attribute, value in vars(klass).items():
            mark = getattr(value, MARK, None)
            if isinstance(mark, ActionMark):
                found[attribute] = (value, mark)
            elif attribute in found:
                del found[attribute]
    return found


def _bind(
    name: str,
    function: Callable[..., Any],
    mark: ActionMark,
    dict_declaration: Action | None,
) -> tuple[Binding, Action | None]:
    """The binding of one marked method and the declaration it makes (if any)."""
    # cattrs loads with the first typed action, not with every server.
    import cattrs  # noqa: PLC0415 - see the comment above

    from wymcp.core.schema._structuring import (  # noqa: PLC0415 - with cattrs, as above
        fill_defaults,
        make_converter,
        structurer,
        unstructurer,
    )

    method: Callable[..., Awaitable[Any]] = function
    if _takes_data(function, mark):
        data_type, returned = _annotations(function)
        typed_input = isinstance(data_type, type) and attrs.has(data_type)
        _check_mark(mark, typed_input=typed_input, bound=dict_declaration is not None)
    else:
        try:
            fields = signature_fields(function, _class_label(function, name))
            returned = resolve(function, "return")
        except SignatureError as error:
            raise BindError(str(error)) from None
        if isinstance(returned, str):
            raise BindError(f"the return annotation cannot be resolved ({returned})")
        data_type, typed_input = fields.data_class, True
        method = fields.caller(function)
    converter = make_converter()
    binding_kwargs: dict[str, Any] = {}
    derived = None
    try:
        if typed_input:
            derived = derive_input(data_type, converter.unstructure)
            prove_nested_defaults(derived.nested)
            fill_defaults(converter, derived.filled)
            binding_kwargs["structure"] = structurer(converter, data_type, name)
        if is_output_annotation(returned):
            schema, wrapped = derive_output(returned)
            binding_kwargs.update(
                output_type=typing.get_args(returned)[0] if wrapped else returned,
                output_list=wrapped,
                unstructure=unstructurer(converter, returned, wrap=wrapped),
                output_schema=schema,
            )
    except (cattrs.errors.StructureHandlerNotFoundError, TypeError) as error:
        raise BindError(f"cattrs cannot convert it ({error})") from None
    binding = Binding(name=name, method=method, **binding_kwargs)
    if mark.description is None:
        return binding, None
    return binding, Action(
        description=mark.description,
        properties=derived.properties if derived else (mark.properties or {}),
        required=derived.required if derived else tuple(mark.required),
        required_one_of=mark.required_one_of,
        defaults=derived.defaults if derived else (mark.defaults or {}),
        notes=mark.notes,
        related=mark.related,
        examples=mark.examples,
        task_support=mark.task_support,
    )


def _takes_data(function: Callable[..., Any], mark: ActionMark) -> bool:
    """Whether the method takes `(self, data, ctx)`, not its fields as parameters.

    A bare `@action`, one given `properties`, or `(self, data, ctx)` with
    `data` an attrs class and `ctx` not a field (named `ctx`, unannotated
    or annotated `Context`) takes `data`; any other
    `@action(description=...)` method declares its fields by its parameters.
    """
    if not inspect.iscoroutinefunction(function):
        raise BindError(
            "an @action method must be 'async def name(self, data, ctx)' or"
            " 'async def name(self, ctx: Context, field: type, ...)'"
        )
    if mark.description is None or mark.properties is not None:
        return True
    parameters = list(inspect.signature(function).parameters.values())
    if len(parameters) != 3:  # noqa: PLR2004 - self, data, ctx
        return False
    try:
        data = resolve(function, parameters[1].name)
        ctx = resolve(function, parameters[2].name)
    except SignatureError:
        return False
    return (
        isinstance(data, type)
        and attrs.has(data)
        and (
            parameters[2].name == "ctx"
            or ctx is inspect.Parameter.empty
            or is_context(ctx)
        )
    )


def _class_label(function: Callable[..., Any], name: str) -> str:
    """The name of the data class a method's parameters make: `Bookmarks.add`."""
    owner = getattr(function, "__qualname__", name).rpartition(".")[0]
    return f"{owner.rpartition('.')[2] or 'Action'}_{name}_"


def _annotations(function: Callable[..., Any]) -> tuple[Any, Any]:
    """The annotations of `data` and of the return value of an @action method."""
    parameters = list(inspect.signature(function).parameters.values())
    if len(parameters) != 3:  # noqa: PLR2004 - self, data, ctx
        raise BindError("an @action method takes exactly (self, data, ctx)")
    # Only data's and the return annotation are read: ctx's may name a type
    # imported under TYPE_CHECKING alone.
    raw = inspect.get_annotations(function)
    wanted = {k: raw[k] for k in (parameters[1].name, "return") if k in raw}
    holder = type("Annotations", (), {"__annotations__": wanted})
    try:
        hints = typing.get_type_hints(
            holder, globalns=vars(inspect.getmodule(function) or typing)
        )
    except Exception as error:  # noqa: BLE001 - any failure to resolve is the author's
        raise BindError(
            f"its annotations cannot be resolved ({type(error).__name__}: {error})"
        ) from None
    return hints.get(parameters[1].name), hints.get("return")


def _check_mark(mark: ActionMark, *, typed_input: bool, bound: bool) -> None:
    """Refuse a mark that declares too little or too much for its method."""
    if mark.description is None:
        if mark.task_support is not None:
            raise BindError(
                "task_support belongs to the declaration: give it to the Action in"
                " actions, or declare the action with @action(description=...)"
            )
        if not bound:
            raise BindError(
                "the method is marked @action but has no declaration: give @action a"
                " description, or declare the action in actions"
            )
        if typed_input:
            raise BindError(
                "data is an attrs class but the action is declared in actions;"
                " declare it with @action(description=...) instead"
            )
    elif typed_input:
        if mark.properties is not None or mark.required or mark.defaults is not None:
            raise BindError(
                "properties, required and defaults come from data's attrs class;"
                " do not give them to @action as well"
            )
    elif mark.properties is None:
        raise BindError("annotate data with an attrs class, or give @action properties")


def _combined_output(
    table: Mapping[str, Action], bindings: Mapping[str, Binding]
) -> dict[str, Any] | None:
    """The tool's output schema when every action's output is typed, else None."""
    schemas: list[dict[str, Any]] = []
    for name in table:
        binding = bindings.get(name)
        if binding is None or binding.output_schema is None:
            return None
        if binding.output_schema not in schemas:
            schemas.append(binding.output_schema)
    if not schemas:
        return None
    if len(schemas) == 1:
        return schemas[0]
    return {"type": "object", "anyOf": schemas}
