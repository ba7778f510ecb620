"""``check``: one call through every gate, in order.

Unknown action, unknown keys, required, ``required_one_of``, values, then defaults.
A call every gate accepts costs one engine call plus the integer cast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.gates import _refusal
from wymcp.core.gates._bound import FIRST
from wymcp.core.gates._catalogue import UNCHECKABLE
from wymcp.core.gates._key_gate import unknown_keys
from wymcp.core.gates._paths import render_path
from wymcp.core.gates._value_gate import (
    ValueReport,
    cast_integers,
    is_valid,
    value_errors,
)
from wymcp.core.gates._verdict import Verdict
from wymcp.core.schema import (
    ActionSpec,
    OverBudgetError,
    ToolSpec,
    prepare,
    work_budget,
)

_NOT_OBJECT = "value is not of type object"
FAST_WORK = 20_000
"""Units of Python work (a number decided in Python, a key cast) ``check_fast`` may
spend on the event loop: tens of milliseconds at most."""


def check(
    tool: object, action: str | None, data: object, *, strict: bool = True
) -> Verdict:
    """Pass one call through the gates.

    Args:
        tool: a ``Tool`` class or instance, or its ``ToolSpec``; a tool never
            prepared is prepared first (and may raise ``ConfigurationError``).
        action: the action name, or None for a plain tool (then ``data`` is the
            whole ``arguments``).
        data: the call's data; None means ``{}``.
        strict: refuse unknown keys (default); when False, drop them and list them
            in ``Verdict.dropped``.

    Returns:
        The verdict; ``check`` never raises on any JSON input.
    """
    spec = prepare(tool)
    target = _target(spec, action)
    if target is None:
        return Verdict(accepted=False, refusal=_refusal.unknown_action(spec, action))
    if data is None:
        data = {}
    fast = _fast(spec, target, data)
    if fast is not None:
        return fast
    if not isinstance(data, dict):
        report = ValueReport()
        report.add((), lambda: [_NOT_OBJECT])
        return Verdict(
            accepted=False, refusal=_refusal.invalid_values(spec, target, report)
        )
    return _slow(spec, target, data, strict=strict)


def check_fast(tool: object, action: str | None, data: object) -> Verdict | None:
    """The verdict of a call the gates accept at the cost of one engine call, else None.

    What it accepts ``check`` accepts, with the same data. A server calls it on its
    event loop and, when it answers None, runs ``check`` elsewhere (a worker thread):
    a refusal's walk is linear in the data, which on a large body is longer than an
    event loop should be held. So is the Python work some accepted data needs (the
    decimal ``multipleOf`` of many numbers, casts under ``patternProperties``): past
    ``FAST_WORK`` units of it, the answer is None too.
    """
    spec = prepare(tool)
    target = _target(spec, action)
    if target is None:
        return None
    try:
        with work_budget(FAST_WORK):
            return _fast(spec, target, {} if data is None else data)
    except OverBudgetError:
        return None


def _fast(spec: ToolSpec, target: ActionSpec, data: object) -> Verdict | None:
    """Accept data whose keys are present and which the engine accepts whole."""
    if (
        data.__class__ is dict
        and _keys_present(target, data)
        and is_valid(target.root.validator, data)
    ):
        return _accept(spec, target, data)
    return None


def _target(spec: ToolSpec, action: object) -> ActionSpec | None:
    """The action (or plain arguments) a call addresses; None if there is none."""
    if spec.plain is not None:
        return spec.plain if action is None else None
    if isinstance(action, str):
        return spec.actions.get(action)
    return None


def _keys_present(target: ActionSpec, data: Mapping[str, Any]) -> bool:
    """Whether the required names and one ``required_one_of`` group are present."""
    if any(name not in data for name in target.required):
        return False
    groups = target.required_one_of
    return not groups or any(all(name in data for name in g) for g in groups)


def _slow(
    spec: ToolSpec, target: ActionSpec, data: dict[str, Any], *, strict: bool
) -> Verdict:
    """Walk the gates in order on a call the fast path did not accept."""
    root = target.root
    found, pruned = unknown_keys(root, data, drop=not strict)
    dropped: tuple[str, ...] = ()
    if found.count:
        kept, count = found.kept, found.count
        if strict:
            return Verdict(
                accepted=False,
                refusal=_refusal.unknown_params(spec, target, kept, count, data),
            )
        name = _refusal.root_name(target)
        dropped = tuple(render_path(path, name) for path in kept)
        if count > FIRST:
            dropped = (*dropped, f"and {count - FIRST} more")
        data = pruned if isinstance(pruned, dict) else data
    missing = [name for name in target.required if name not in data]
    if missing:
        refusal = _refusal.missing_required(spec, target, missing)
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    if not _keys_present(target, data):
        refusal = _refusal.missing_group(spec, target)
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    report = value_errors(root, data)
    if report is not None:
        refusal = _refusal.invalid_values(spec, target, report)
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    return _accept(spec, target, data, dropped)


def _accept(
    spec: ToolSpec,
    target: ActionSpec,
    data: dict[str, Any],
    dropped: tuple[str, ...] = (),
) -> Verdict:
    """Accept data every gate passed; one nested deeper than the cast reads is refused.

    The engine reads any depth; the cast recurses in Python, so a value nested past
    Python's recursion limit gets a bounded refusal rather than a traceback.
    """
    try:
        read = _accepted(target, data)
    except RecursionError:
        report = ValueReport(partial=True)
        report.add((), lambda: [UNCHECKABLE])
        refusal = _refusal.invalid_values(spec, target, report)
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    return Verdict(accepted=True, data=read, dropped=dropped)


def _accepted(target: ActionSpec, data: dict[str, Any]) -> dict[str, Any]:
    """The data as the value gate read it, with the defaults merged after."""
    cast = cast_integers(target.root, data)
    read = cast if isinstance(cast, dict) else data
    if not target.defaults:
        return dict(read)
    return target.merge_defaults(read)
