"""`check`: one call through every gate, in order.

Unknown action, unknown keys, required, `required_one_of`, values, then defaults.
A call every gate accepts costs one engine call plus the integer cast.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from wymcp.core.gates import _refusal
from wymcp.core.gates._also import (
    GROUP,
    MISSING,
    attach,
    moved,
    of_refusal,
    sections,
)
from wymcp.core.gates._bound import FIRST
from wymcp.core.gates._did_you_mean import Budget, closest, data_matches
from wymcp.core.gates._engine_reads import (
    holds_float,
    read_budget,
    spend_wide_ints,
    values_in,
)
from wymcp.core.gates._key_gate import KeyReport, unknown_keys
from wymcp.core.gates._paths import render_path
from wymcp.core.gates._problem_texts import UNCHECKABLE
from wymcp.core.gates._refusal import REQUEST_PART, help_pointer, request_part_size
from wymcp.core.gates._slices import SLICE, cost, node_accepts
from wymcp.core.gates._value_gate import (
    ValueReport,
    accepts,
    cast_integers,
    value_errors,
)
from wymcp.core.gates._verdict import Verdict
from wymcp.core.schema import (
    ActionSpec,
    OverBudgetError,
    ToolSpec,
    ValueNode,
    prepare,
    work_budget,
)

_NOT_OBJECT = "value is not of type object"
FAST_WORK = 20_000
"""Units of Python work (a number decided in Python, a key cast) `check_fast` may
spend on the event loop: tens of milliseconds at most. Under `multipleOf` every
float (whole ones too) is decided in Python, so counted; the engine decides ints,
and each int past 2**64 under a numeric keyword costs a unit per 64 bits."""
FAST_READS = 16 * FAST_WORK
"""Values the engine calls `check_fast` makes past its first pass (the cast asking
which branch accepted a value) may read in all; past them, None."""
FAST_VALUES = 4096
"""Most JSON values `check_fast` hands the engine under a `branching` root (one
whose engine pass may read a value more than once); past them, None."""
SMALL_JSON = 4096
"""Data decoded from a JSON text of at most this many bytes is not counted by
`check_fast`: every value takes a byte, so it holds at most `FAST_VALUES`
values, and at most `SMALL_JSON` + 2,810 `SLICE` units (the widest int such a
text can hold, 4,096 digits or 212 64-bit words, costs 1 + 212**2 // 16 units
past its own): under `SLICE`. Its wide ints are at most 213 words in all."""


def check(
    tool: object, action: str | None, data: object, *, strict: bool = True
) -> Verdict:
    """Pass one call through the gates.

    Args:
        tool: a `Tool` class or instance, or its `ToolSpec`; a tool never
            prepared is prepared first (and may raise `ConfigurationError`).
        action: the action name, or None for a plain tool (then `data` is the
            whole `arguments`).
        data: the call's data; None means `{}`.
        strict: refuse unknown keys (default); when False, drop them and list them
            in `Verdict.dropped`.

    Returns:
        The verdict; `check` never raises on any JSON input. A refusal names the
        first gate that refuses and adds `also`: what the later gates find in
        the rest of the call (docs/refusals.md).
    """
    spec = prepare(tool)
    target = _target(spec, action)
    if target is None:
        return _unknown_action(spec, action, data, strict=strict)
    return gated(spec, target, data, strict=strict)


def gated(
    spec: ToolSpec, target: ActionSpec, data: object, *, strict: bool = True
) -> Verdict:
    """Pass one call's data through the gates of a known action (or plain tool)."""
    if data is None:
        data = {}
    fast = _fast(spec, target, data, sliced=True)
    if fast is not None:
        return fast
    if not isinstance(data, dict):
        report = ValueReport()
        report.add((), lambda: [_NOT_OBJECT])
        return Verdict(
            accepted=False, refusal=_refusal.invalid_values(spec, target, report)
        )
    return _slow(spec, target, data, strict=strict)


def check_fast(
    tool: object, action: str | None, data: object, *, json_bytes: int | None = None
) -> Verdict | None:
    """The verdict of a call the gates accept at the cost of one engine call, else None.

    What it accepts `check` accepts, with the same data. A server calls it on its
    event loop and, when it answers None, runs `check` elsewhere (a worker thread):
    a refusal's walk is linear in the data, which on a large body is longer than an
    event loop should be held. So is the Python work some accepted data needs (the
    decimal `multipleOf` of many numbers, casts under `patternProperties`): past
    `FAST_WORK` units of it, the answer is None too. So is it, before any engine
    pass, for data of over `SLICE` units (what one engine call in the thread may
    read: its one call here would hold the loop longer, `uniqueItems` over a
    large array most), for a key outside a closed root's key set, for data of
    over `FAST_VALUES` values under a root whose engine pass may read a value
    more than once (`anyOf`, a recursive `$ref` in a branch, ...), and for ints
    past 2**64 under numeric keywords past the budget.

    `json_bytes`, the length of the JSON text `data` was decoded from (within a
    larger text) when the caller knows it: data of at most `SMALL_JSON` bytes,
    the usual call, is under those counts by its size, so is not counted.
    """
    spec = prepare(tool)
    target = _target(spec, action)
    if target is None:
        return None
    root = target.root
    if data is None:
        data = {}
    small = json_bytes is not None and json_bytes <= SMALL_JSON
    if not small:
        if cost(data, SLICE) > SLICE:
            return None
        if root.branching and values_in(data, FAST_VALUES) > FAST_VALUES:
            return None
    if not (root.casts or root.python_checks or (root.numeric and not small)):
        # Nothing below can spend work or reads, so no budget can run out: no
        # wide-int pass, an engine that never calls back into Python (only a
        # decimal `multipleOf` does, `python_checks`), and a cast that returns
        # at once (it is the only other spender) for a root that never says
        # integer. Entering the two budgets cost calc ~10k instructions a call.
        return _fast(spec, target, data)
    try:
        with work_budget(FAST_WORK), read_budget(FAST_READS):
            if root.numeric and not small:
                spend_wide_ints(data)
            return _fast(spec, target, data)
    except OverBudgetError:
        return None


def _fast(
    spec: ToolSpec, target: ActionSpec, data: object, *, sliced: bool = False
) -> Verdict | None:
    """Accept data whose keys are present and which the engine accepts whole.

    `sliced` (`check`, in a worker thread when the data is large): the engine is
    asked in runs (`node_accepts`), so the thread lets the event loop run between
    them; on the loop itself (`check_fast`, data of at most `SLICE` units) one
    call reads no more than one run.
    """
    root = target.root
    if (
        data.__class__ is dict
        and _keys_present(target, data)
        and not _stray_key(root, data)
        and (node_accepts(root, data) if sliced else accepts(root.validator, data))
    ):
        return _accept(spec, target, data)
    return None


def _stray_key(root: ValueNode, data: dict[str, Any]) -> bool:
    """Whether the data has a key a closed root without patterns refuses.

    The engine would refuse it too, but only after reading the values beside it.
    """
    return (
        root.closed
        and not root.pattern_nodes
        and not data.keys() <= root.properties.keys()
    )


def _unknown_action(
    spec: ToolSpec, action: object, data: object, *, strict: bool
) -> Verdict:
    """Refuse an unknown action; name the action it is probably a typo of.

    When one is found (`did_you_mean: {"action": ...}`), `also` says what that
    action's gates find in the data, so the call is fixed in one round.
    """
    refusal = _refusal.unknown_action(spec, action)
    match = None
    if spec.plain is None and isinstance(action, str) and spec.actions:
        match = closest(action, sorted(spec.actions), Budget())
    if match is not None:
        refusal = {k: v for k, v in refusal.items() if k != "help"}
        refusal["did_you_mean"] = {"action": match}
        refusal["help"] = help_pointer(spec.name)
        verdict = gated(spec, spec.actions[match], data, strict=strict)
        if verdict.refusal is not None:
            budget = REQUEST_PART - request_part_size(refusal)
            found = of_refusal(verdict.refusal)
            attach(refusal, found, budget=budget, before="help")
    return Verdict(accepted=False, refusal=refusal)


def _target(spec: ToolSpec, action: object) -> ActionSpec | None:
    """The action (or plain arguments) a call addresses; None if there is none."""
    if spec.plain is not None:
        return spec.plain if action is None else None
    if isinstance(action, str):
        return spec.actions.get(action)
    return None


def _keys_present(target: ActionSpec, data: Mapping[str, Any]) -> bool:
    """Whether the required names and one `required_one_of` group are present."""
    for name in target.required:  # a loop: `any` of a generator costs ~1k more
        if name not in data:
            return False
    groups = target.required_one_of
    return not groups or any(all(name in data for name in g) for g in groups)


def _slow(
    spec: ToolSpec, target: ActionSpec, data: dict[str, Any], *, strict: bool
) -> Verdict:
    """Walk the gates in order on a call the fast path did not accept."""
    root = target.root
    found, pruned = unknown_keys(root, data, drop=True)
    dropped: tuple[str, ...] = ()
    if found.count:
        kept, count = found.kept, found.count
        if strict:
            return Verdict(
                accepted=False,
                refusal=_unknown_params(spec, target, found, data, pruned),
            )
        name = _refusal.root_name(target)
        dropped = tuple(render_path(path, name) for path in kept)
        if count > FIRST:
            dropped = (*dropped, f"and {count - FIRST} more")
        data = pruned if isinstance(pruned, dict) else data
    missing = [name for name in target.required if name not in data]
    if missing:
        refusal = _refusal.missing_required(spec, target, missing)
        _also(refusal, sections(target, data, skip=(MISSING,)))
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    if not _keys_present(target, data):
        refusal = _refusal.missing_group(spec, target)
        _also(refusal, sections(target, data, skip=(MISSING, GROUP)))
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    report = value_errors(root, data)
    if report is not None:
        refusal = _refusal.invalid_values(spec, target, report)
        return Verdict(accepted=False, refusal=refusal, dropped=dropped)
    return _accept(spec, target, data, dropped)


def _unknown_params(
    spec: ToolSpec,
    target: ActionSpec,
    found: KeyReport,
    data: dict[str, Any],
    pruned: object,
) -> dict[str, Any]:
    """Refuse unknown keys; `also` reads the rest as if `did_you_mean` were taken.

    The rest of the call is the data with each key `did_you_mean` shows moved to
    the key it maps to and every other unknown key left out.
    """
    name = _refusal.root_name(target)
    kept, count = found.kept, found.count
    matches = data_matches(target.root, data, kept, Budget())
    refusal = _refusal.unknown_params(spec, target, kept, count, data, matches=matches)
    shown = refusal.get("did_you_mean", {})
    renames = [(path, key) for path, key in matches if render_path(path, name) in shown]
    rest = moved(pruned, data, renames)
    _also(refusal, sections(target, rest, skip=(MISSING,)))
    return refusal


def _also(refusal: dict[str, Any], found: dict[str, dict[str, Any]]) -> None:
    budget = REQUEST_PART - request_part_size(refusal)
    attach(refusal, found, budget=budget, before="input_schema")


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
    return Verdict(True, read, None, dropped)  # noqa: FBT003 - positional: no kwargs dict


def _accepted(target: ActionSpec, data: dict[str, Any]) -> dict[str, Any]:
    """The data as the value gate read it, with the defaults merged after.

    Under a `branching` root the cast asks the engine which branch accepted each
    value, over its whole subtree at each level: data without a float has nothing
    to cast, and one pass says so.
    """
    root = target.root
    skip = root.branching and not holds_float(data)
    cast = data if skip else cast_integers(root, data)
    read = cast if isinstance(cast, dict) else data
    if not target.defaults:
        return dict(read)
    return target.merge_defaults(read)
