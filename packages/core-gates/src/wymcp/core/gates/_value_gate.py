"""The value gate: every value checked against the action's compiled value root.

An accepted call costs one engine call. A refused one is walked once, instance
position by instance position in path order, with the set of schema positions that
apply there; each offending path is counted once, and only the first ten get texts.
"""

from __future__ import annotations

import hashlib
import heapq
import itertools
import json
import marshal
import operator
from collections.abc import Callable, Iterable, Iterator
from decimal import Decimal
from typing import Any

import attrs

from wymcp.core.gates._bound import FIRST, Path, echo, token_key
from wymcp.core.gates._copy_on_write import replaced
from wymcp.core.gates._engine_reads import (
    charge,
    read_budget,
    spend_reading,
    values_in,
)
from wymcp.core.gates._error_cost import errors_fit, errors_per_place, schema_keys
from wymcp.core.gates._problem_texts import (
    UNCHECKABLE,
    UNNAMED,
    keyword_text,
    problem_text,
)
from wymcp.core.gates._slices import (
    assertion_holds,
    children_accept,
    node_accepts,
    runs,
)
from wymcp.core.gates._walk_sizes import remembered, spend_small
from wymcp.core.schema import (
    OverBudgetError,
    ValueNode,
    multiple_of_problem,
    spend_work,
)

_CHECK_ERRORS = (ValueError, TypeError, OverflowError, RecursionError, AttributeError)
_SCALARS = (str, int, float, bool, type(None))
_CHUNK = 4096
_SHORT = 8
"""Items an array may hold for its refused walk to skip the check of its children."""
_EXACT = float(2**53)
_UNEVALUATED = frozenset({"unevaluatedProperties", "unevaluatedItems"})
_HOLDERS = frozenset({float, dict, list})
"""The kinds of value a cast can change (a float) or look inside."""
DEPTH = 128
"""How deep the walk reads a refused value (the engine checks every depth).

Deeper than `JSON_DEPTH_LIMIT`'s default (100), so every level of a body the
transport lets through is walked; one level costs the walk about four frames."""
CAST_MEMO = 4096
"""Most casts of equal floats one array remembers; past it the memory starts empty."""
WALK_WORK = 16
"""Values the engine calls of a refusal's walk may read per value of the data."""
WALK_FLOOR = 100_000
"""Values they may read whatever the size of the data."""
ERROR_WORK = 256
"""Values' worth of the walk's budget one engine error costs (building it and
its text take about as long as the engine reading a few hundred values)."""
_UNBOUNDED = 1 << 62
LEAF_ERRORS = 1000
"""How many engine errors a position that cannot be split (`unevaluated*`, a
dynamic reference) may cost; the rest of it goes uncounted, and the refusal says the
count is partial."""


@attrs.define
class ValueReport:
    """What the value gate found: the first ten paths with their problems, a count.

    `partial` says the count stopped short: inside a position that cannot be split
    after `LEAF_ERRORS` engine errors, or past `DEPTH` levels.
    """

    count: int = 0
    entries: list[tuple[Path, list[str]]] = attrs.field(factory=list)
    partial: bool = False
    places: dict[int, int] = attrs.field(factory=dict, repr=False, eq=False)
    """The walk's `errors_per_place` of each node asked about (by `id`)."""
    schema_keys: int = attrs.field(default=0, repr=False, eq=False)
    """The root schema's longest key past the free length (`schema_keys`)."""
    stopped: bool = attrs.field(default=False, repr=False, eq=False)
    """Whether the walk's read budget ran out (the position it was at is named)."""

    @property
    def full(self) -> bool:
        """Whether ten paths are kept (the rest are only counted)."""
        return len(self.entries) >= FIRST

    def add(self, path: Path, problems: Callable[[], list[str]]) -> None:
        """Count an offending path; ask for its problems only if it is kept."""
        self.count += 1
        if len(self.entries) < FIRST:
            self.entries.append((path, problems()))


def is_valid(validator: Any, value: object) -> bool:
    """Ask the engine; a value it cannot read counts as invalid.

    Under a running work budget the call spends the values the engine reads.
    """
    spend_reading(value)
    return accepts(validator, value)


def is_valid_at(node: ValueNode, value: object) -> bool:
    """What `is_valid(node.validator, value)` answers, asked in bounded runs.

    A container whose size the walk remembers (`spend_small`) and that fits one
    run is asked whole, as `node_accepts` would, without being counted again.
    """
    small = spend_small(value)
    if small:
        return accepts(node.validator, value)
    if small is None:
        spend_reading(value)
    return node_accepts(node, value)


def holds(node: ValueNode, keyword: str, check: Any, value: object) -> bool:
    """What `is_valid(check, value)` answers for one of `node.assertions`, in runs."""
    small = spend_small(value)
    if small:
        return accepts(check, value)
    if small is None:
        spend_reading(value)
    return assertion_holds(node, keyword, check, value)


def children_hold(node: ValueNode, value: object) -> bool:
    """What `is_valid(node.children_valid, value)` answers, in bounded runs."""
    small = spend_small(value)
    if small:
        return accepts(node.children_valid, value)
    if small is None:
        spend_reading(value)
    return children_accept(node, value)


def accepts(validator: Any, value: object) -> bool:
    """Ask the engine, spending nothing; a value it cannot read counts as invalid."""
    try:
        return bool(validator.is_valid(value))
    except _CHECK_ERRORS:
        return False


def value_errors(root: ValueNode, data: object) -> ValueReport | None:
    """None when the root accepts `data`; else the bounded report of its errors.

    Time is linear in the data: the walk's engine calls may read at most
    `WALK_WORK` values per value of the data (past `WALK_FLOOR`); past them the
    report keeps what it found and says its count is partial. Memory beyond the
    data is the keys of the objects along one path, 4,096 item flags and a 32-byte
    digest per level, and one transient `marshal` copy of a refused item; the
    engine's errors (each a copy of its value) are asked for only at a position
    that cannot be split (`_engine_errors`).
    """
    if node_accepts(root, data):
        return None
    report = ValueReport(schema_keys=schema_keys(root.schema))
    units = WALK_FLOOR + WALK_WORK * values_in(data, _UNBOUNDED)
    try:
        with read_budget(units), remembered():
            _visit([root], data, (), report, {})
    except (RecursionError, OverBudgetError):
        report.partial = True
    if report.count == 0:
        report.add((), lambda: [UNCHECKABLE])
    return report


Extras = dict[Path, list[str]]
"""Engine texts of a position that cannot be split, by path relative to the walk."""


def _visit(
    nodes: list[ValueNode],
    value: object,
    path: Path,
    report: ValueReport,
    extras: Extras,
) -> None:
    """Report the offending paths at and under `value`, in path order.

    `nodes` are the schema positions that apply here and refuse `value`. Past
    `DEPTH` levels the position is reported with its own problems (`_deep`).
    """
    if len(path) > DEPTH:
        _deep(nodes, value, path, report)
        return
    if report.full and not extras and len(nodes) == 1 and nodes[0].plain:
        report.count += _count_plain(nodes[0], value, path, report)
        return
    start = report.count
    try:
        _visit_here(nodes, value, path, report, extras)
    except OverBudgetError:
        if not report.stopped and report.count == start and nodes:
            report.add(path, lambda: [UNNAMED])  # where the budget ran out
        report.stopped = True
        raise


def _visit_here(
    nodes: list[ValueNode],
    value: object,
    path: Path,
    report: ValueReport,
    extras: Extras,
) -> None:
    """`_visit` within `DEPTH`: this position's problems, then its children."""
    texts: list[Callable[[], list[str]]] = []
    applying = _expand(nodes, value, texts, extras, report)
    own = extras.pop((), None)
    if own is not None:
        texts.append(lambda: own)
    before = report.count
    if texts:
        report.add(path, lambda: _bounded([t for thunk in texts for t in thunk()]))
    kind = value.__class__
    if kind is dict:
        _visit_object(applying, value, path, report, extras)  # type: ignore[arg-type]
    elif kind is list:
        _visit_array(applying, value, path, report, extras)  # type: ignore[arg-type]
    if report.count == before and nodes:
        report.add(path, lambda: [UNCHECKABLE])


def _count_plain(
    node: ValueNode, value: object, path: Path, report: ValueReport
) -> int:
    """How many offending paths a plain position that refuses `value` holds.

    The counting lane, once ten paths are kept: no texts, no sorting, one engine
    call per child; a child that is not plain goes back to the general walk.
    """
    schema = node.schema
    if len(path) > DEPTH:
        report.partial = True  # nothing below is read, as in `_deep`
        return 1
    if schema.__class__ is not dict:
        return 1
    own = any(not holds(node, k, check, value) for k, check in node.assertions)
    kind = value.__class__
    if kind is dict:
        own = own or _lacks(schema, value)  # type: ignore[arg-type]
        count = _count_object(node, value, path, report)  # type: ignore[arg-type]
    elif kind is list:
        count = _count_array(node, value, path, report)  # type: ignore[arg-type]
    else:
        count = 0
    return max(count + own, 1)


def _deep(
    nodes: list[ValueNode], value: object, path: Path, report: ValueReport
) -> None:
    """A refused value past `DEPTH` levels: its path and its own problems.

    Nothing below it is read, so the count is said partial. No engine error is
    asked for: each one carries a copy of the value it refuses and a message
    quoting it, and under a recursive `anyOf` every level's errors hold the
    levels below (about 490 x the body for one string 90 levels deep).
    """
    report.partial = True
    texts: list[Callable[[], list[str]]] = []
    _expand(nodes, value, texts, {}, report, engine=False)
    report.add(
        path, lambda: _bounded([t for thunk in texts for t in thunk()] or [UNNAMED])
    )


def _lacks(schema: dict[str, Any], value: dict[Any, Any]) -> bool:
    """Whether the object lacks a `required` (or `dependentRequired`) name."""
    required = schema.get("required")
    if required.__class__ is list and any(name not in value for name in required):
        return True
    return "dependentRequired" in schema and bool(_missing(schema, value))


def _count_object(
    node: ValueNode, value: dict[Any, Any], path: Path, report: ValueReport
) -> int:
    """The offending paths under an object's declared properties."""
    count = 0
    for key, child in node.properties.items():
        if key in value:
            sub = value[key]
            if not is_valid_at(child, sub):
                count += _count_child(child, sub, (*path, key), report)
    return count


def _count_array(
    node: ValueNode, value: list[Any], path: Path, report: ValueReport
) -> int:
    """The offending paths under an array's items (the engine finds them first).

    A short array is walked at once: asking first would decide each item twice.
    """
    valid_children = node.children_valid
    short = len(value) <= _SHORT
    if valid_children is not None and not short and children_hold(node, value):
        return 0
    count = 0
    prefix = node.prefix_items
    for index, child in enumerate(prefix[: len(value)]):
        if not is_valid_at(child, value[index]):
            count += _count_child(child, value[index], (*path, index), report)
    if node.items is not None and len(value) > len(prefix):
        before = report.count
        _visit_tail([node.items], value, len(prefix), path, report)
        count += report.count - before
        report.count = before
    return count


def _count_child(child: ValueNode, sub: object, path: Path, report: ValueReport) -> int:
    """The offending paths of a refused child: one for a scalar, else counted."""
    if isinstance(sub, _SCALARS):
        return 1
    if child.plain:
        return _count_plain(child, sub, path, report)
    before = report.count
    _visit([child], sub, path, report, {})
    counted = report.count - before
    report.count = before
    return counted


def _expand(
    nodes: list[ValueNode],
    value: object,
    texts: list[Callable[[], list[str]]],
    extras: Extras,
    report: ValueReport,
    *,
    engine: bool = True,
) -> list[ValueNode]:
    """Every refusing position that applies here; each one's own failures to `texts`.

    `allOf` branches and `$ref` targets apply here too; so does every branch of an
    `anyOf`/`oneOf` none of whose branches accepts `value` (their causes are the
    ones a caller must read), and the `then`/`else` the `if` chose. A position
    that cannot be split gives the engine's texts to `extras`, unless `engine` is
    false (past `DEPTH`: its errors would copy the value once per level below).
    """
    stack = list(nodes)
    seen: set[int] = set()
    applying: list[ValueNode] = []
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.schema is False:
            texts.append(lambda: ["no value is allowed here"])
            continue
        if node.opaque:
            if not engine:
                continue
            if _engine_may_be_asked(node, value, report):
                _engine_errors(node, value, extras, report)
                continue
            node = _walked_instead(node, texts, report)
        applying.append(node)
        _own(node, value, texts)
        stack.extend(b for b in node.all_of if not is_valid_at(b, value))
        stack.extend(_branches(node, value, texts))
        if node.if_ is not None:
            chosen = node.then if is_valid_at(node.if_, value) else node.else_
            if chosen is not None and not is_valid_at(chosen, value):
                stack.append(chosen)
        if node.dependent and isinstance(value, dict):
            stack.extend(
                sub
                for key, sub in node.dependent
                if key in value and not is_valid_at(sub, value)
            )
    return applying


def _branches(
    node: ValueNode, value: object, texts: list[Callable[[], list[str]]]
) -> list[ValueNode]:
    """The `anyOf`/`oneOf` branches whose causes apply here, and their texts."""
    found: list[ValueNode] = []
    if node.any_of and not any(is_valid_at(b, value) for b in node.any_of):
        texts.append(lambda: ["value matches no schema of anyOf"])
        found.extend(node.any_of)
    if node.one_of:
        accepted = sum(1 for b in node.one_of if is_valid_at(b, value))
        if accepted == 0:
            texts.append(lambda: ["value matches no schema of oneOf"])
            found.extend(node.one_of)
        elif accepted > 1:
            texts.append(lambda: ["value matches more than one schema of oneOf"])
    if node.not_ is not None and is_valid_at(node.not_, value):
        texts.append(lambda: ["value must not match the schema of not"])
    return found


def _own(node: ValueNode, value: object, texts: list[Callable[[], list[str]]]) -> None:
    """The position's own failing keywords: assertions, then `required` & co."""
    schema = node.schema
    failed = [
        (keyword, validator)
        for keyword, validator in node.assertions
        if not holds(node, keyword, validator, value)
    ]
    if failed:
        texts.append(lambda: [_text(k, schema, value) for k, _ in failed])
    if isinstance(value, dict) and isinstance(schema, dict):
        missing = _missing(schema, value)
        if missing:
            texts.append(lambda: missing)


def _text(keyword: str, schema: Any, value: object) -> str:
    """The text of one failing keyword; `multipleOf` says why (its own check)."""
    if keyword != "multipleOf":
        return keyword_text(keyword, schema)
    return multiple_of_problem(value, schema.get("multipleOf")) or UNCHECKABLE


def _missing(schema: dict[str, Any], value: dict[Any, Any]) -> list[str]:
    """The texts of `required` and `dependentRequired` names absent from the object.

    A `dependentRequired` name says which present property requires it.
    """
    texts: list[str] = []
    required = schema.get("required")
    if isinstance(required, list):
        texts.extend(_required_text(name) for name in required if name not in value)
    dependent = schema.get("dependentRequired")
    if isinstance(dependent, dict):
        for key, needed in dependent.items():
            if key in value and isinstance(needed, list):
                texts.extend(
                    _required_text(name, key) for name in needed if name not in value
                )
    return texts


def _required_text(name: object, present: object = None) -> str:
    """`property 'b' is required` (`when property 'a' is present`), names cut."""
    text = f"property '{echo(str(name))}' is required"
    if present is None:
        return text
    return f"{text} when property '{echo(str(present))}' is present"


def _dependent_text(
    node: ValueNode, error: Any, value: object, relative: Path
) -> str | None:
    """The text of an engine `required` error that `dependentRequired` raised."""
    tokens = [str(token) for token in error.schema_path]
    if str(error.kind.name) != "required" or tokens[-1:] != ["dependentRequired"]:
        return None
    holder = _pointer_in(node.schema, tokens[:-1])
    instance = _at(value, relative)
    name = error.kind.as_dict().get("property")
    if not isinstance(holder, dict) or not isinstance(instance, dict):
        return None
    dependent = holder.get("dependentRequired")
    for key, needed in dependent.items() if isinstance(dependent, dict) else ():
        if key in instance and isinstance(needed, list) and name in needed:
            return _required_text(name, key)
    return None


def _pointer_in(schema: object, tokens: list[str]) -> object:
    """The schema at `tokens` inside `schema` (None where it leads nowhere)."""
    found = schema
    for token in tokens:
        if isinstance(found, dict):
            found = found.get(token)
        elif isinstance(found, list) and token.isdigit() and int(token) < len(found):
            found = found[int(token)]
        else:
            return None
    return found


def _visit_object(
    applying: list[ValueNode],
    value: dict[Any, Any],
    path: Path,
    report: ValueReport,
    extras: Extras,
) -> None:
    """Descend into the keys some applying position refuses, in path order.

    Once ten paths are kept, a refused scalar is only counted, as in `_visit_tail`.
    A key's child positions are found when the walk reaches it. Up to
    `_ORDERED_KEYS` keys are visited in path order (a heap of them); past that
    in the object's own order (no copy of the keys), so the paths kept are the
    first refused ones as sent.
    """
    walk = _KeysWalk(
        asked=[
            node
            for node in applying
            if node.children_valid is None or not children_hold(node, value)
        ],
        value=value,
        path=path,
        report=report,
        below=_split(extras),
    )
    keys = walk.keys()
    if len(value) <= _ORDERED_KEYS:
        keys = _in_path_order(list(keys), report)
    for key in keys:
        walk.visit(key)


_ORDERED_KEYS = 4096
"""Most keys of one object the walk orders all at once (a heap of them)."""


@attrs.define
class _KeysWalk:
    """The walk below one object: the positions asked about its keys."""

    asked: list[ValueNode]
    value: dict[Any, Any]
    path: Path
    report: ValueReport
    below: dict[Any, Extras]

    def keys(self) -> Iterable[Any]:
        """The keys to look at: every key when a position asks, and the engine's."""
        if not self.asked:
            return self.below
        if self.below.keys() <= self.value.keys():
            return self.value
        return set(self.value) | set(self.below)

    def refusing(self, key: Any) -> list[ValueNode]:
        """The positions applying to the key's value that refuse it."""
        sub = self.value[key]
        children = [
            child
            for node in self.asked
            for _, child in _children_of(node, self.value, (key,))
        ]
        return [child for child in children if not is_valid_at(child, sub)]

    def visit(self, key: Any) -> None:
        """Walk one key's value, or only count it once ten paths are kept."""
        sub = self.value[key]
        refusing = self.refusing(key)
        inner = self.below.get(key, {})
        report = self.report
        if refusing and not inner and report.full and isinstance(sub, _SCALARS):
            report.count += 1  # a refused scalar's one offending path is itself
        elif refusing or inner:
            _visit(refusing, sub, (*self.path, key), report, inner)


def _in_path_order(keys: list[Any], report: ValueReport) -> Iterator[Any]:
    """The keys in path order while the report keeps paths, then the rest unordered.

    Past ten kept paths the walk only counts, so the order no longer matters: a heap
    (built in linear time) gives the first keys, where sorting 300,000 keys would
    hold the interpreter (and every other client's event loop) for a second.
    """
    heap = [(*token_key(str(key)), index) for index, key in enumerate(keys)]
    heapq.heapify(heap)
    while heap and not report.full:
        yield keys[heapq.heappop(heap)[-1]]
    for entry in heap:
        yield keys[entry[-1]]


def _children_of(
    node: ValueNode, value: dict[Any, Any], keys: Iterable[Any] | None = None
) -> list[tuple[Any, ValueNode]]:
    """Each (key, child position) a node applies to the keys of an object.

    `keys` (default: every key of `value`) are the keys asked about.
    """
    found: list[tuple[Any, ValueNode]] = []
    properties = node.properties
    patterns = node.pattern_nodes
    additional = node.additional
    asked = value if keys is None else keys
    if not patterns and additional is None:
        found.extend((key, properties[key]) for key in asked if key in properties)
        return found
    for key in asked:
        matched = False
        if key in properties:
            found.append((key, properties[key]))
            matched = True
        for pattern, child in patterns:
            if is_valid(pattern, key):
                found.append((key, child))
                matched = True
        if not matched and additional is not None:
            found.append((key, additional))
    return found


def _visit_array(
    applying: list[ValueNode],
    value: list[Any],
    path: Path,
    report: ValueReport,
    extras: Extras,
) -> None:
    """Descend into the items some applying position refuses, in index order."""
    nodes = [
        node
        for node in applying
        if node.children_valid is None or not children_hold(node, value)
    ]
    nodes = [node for node in nodes if node.prefix_items or node.items is not None]
    below = _split(extras)
    head = max((len(node.prefix_items) for node in nodes), default=0)
    head = max(head, *(index + 1 for index in below if isinstance(index, int)), 0)
    head = min(head, len(value))
    for index in range(head):
        item = value[index]
        children = [_item_node(node, index) for node in nodes]
        refusing = [c for c in children if c is not None and not is_valid_at(c, item)]
        inner = below.get(index, {})
        if refusing or inner:
            _visit(refusing, item, (*path, index), report, inner)
    tail = [node.items for node in nodes if node.items is not None]
    if tail and head < len(value):
        _visit_tail(tail, value, head, path, report)


def _item_node(node: ValueNode, index: int) -> ValueNode | None:
    """The position a node applies to the item at `index`."""
    if index < len(node.prefix_items):
        return node.prefix_items[index]
    return node.items


def _visit_tail(
    tail: list[ValueNode], value: list[Any], start: int, path: Path, report: ValueReport
) -> None:
    """The items past every `prefixItems`: found by the engine in chunks.

    Once ten paths are kept, a refused scalar item (whose only offending path is
    itself) is just counted, so the cost per item is one engine call made from C;
    a refused container equal to one already counted in the chunk adds that count
    (told by a digest of its `marshal` bytes: the walk below it holds 32 bytes per
    level, not a copy of the container; a chunk of one item needs none).
    """
    for offset in range(start, len(value), _CHUNK):
        chunk = value[offset : offset + _CHUNK]
        counted: dict[bytes, int] = {}
        for index in _refused(tail, chunk):
            item = chunk[index]
            if report.full and isinstance(item, _SCALARS):
                report.count += 1
                continue
            key = _digest(item) if report.full and len(chunk) > 1 else None
            if key is not None and key in counted:
                report.count += counted[key]
                continue
            refusing = (
                tail
                if len(tail) == 1
                else [c for c in tail if not is_valid_at(c, item)]
            )
            before = report.count
            _visit(refusing, item, (*path, offset + index), report, {})
            if key is not None:
                counted[key] = report.count - before


def _digest(item: object) -> bytes | None:
    """A digest of `_frozen(item)`: equal for equal containers (None if unwritable)."""
    frozen = _frozen(item)
    return None if frozen is None else hashlib.blake2b(frozen, digest_size=32).digest()


def _refused(tail: list[ValueNode], chunk: list[Any]) -> list[int]:
    """The indexes of the items some tail position refuses, in order."""
    refused: set[int] = set()
    for node in tail:
        if node.python_checks:  # each distinct item spends as it is decided
            flags = map(operator.not_, _verdicts(node, chunk))
            refused.update(itertools.compress(range(len(chunk)), flags))
            continue
        spend_reading(chunk)
        for first, end, large in runs(chunk, 0):  # back in Python between runs
            if large:
                if not node_accepts(node, chunk[first]):
                    refused.add(first)
                continue
            try:
                flags = map(
                    operator.not_, map(node.validator.is_valid, chunk[first:end])
                )
                refused.update(itertools.compress(range(first, end), flags))
            except _CHECK_ERRORS:
                refused.update(
                    index
                    for index in range(first, end)
                    if not is_valid_at(node, chunk[index])
                )
    return sorted(refused)


def _verdicts(node: ValueNode, chunk: list[Any]) -> list[bool]:
    """Each item's verdict, an equal item (of the same types throughout) asked once.

    A refusal decided in Python costs the engine an exception per item; an array
    repeating one refused number, or one refused array of numbers, pays it once per
    distinct item. Memory: one key per distinct item of the chunk (a container's
    key is its `marshal` bytes, about its size in JSON).
    """
    known: dict[object, bool] = {}
    verdicts: list[bool] = []
    for item in chunk:
        kind = item.__class__
        key: object = (kind, item)
        if kind is dict or kind is list:
            key = _frozen(item)
            if key is None:
                verdicts.append(is_valid_at(node, item))
                continue
        verdict = known.get(key)
        if verdict is None:
            verdict = known[key] = is_valid_at(node, item)
        verdicts.append(verdict)
    return verdicts


def _frozen(item: object) -> bytes | None:
    """A key equal for equal containers of the same types throughout, else None.

    `marshal` writes each type apart (`1`, `1.0`, `True`) and keeps key
    order; equal bytes read back as equal values. None for what it cannot write.
    """
    try:
        return marshal.dumps(item)  # type: ignore[arg-type]
    except (ValueError, RecursionError):
        return None


def _split(extras: Extras) -> dict[Any, Extras]:
    """Engine texts below this position, grouped by their first token."""
    below: dict[Any, Extras] = {}
    for relative, texts in extras.items():
        below.setdefault(relative[0], {})[relative[1:]] = texts
    return below


def _engine_may_be_asked(node: ValueNode, value: object, report: ValueReport) -> bool:
    """Whether the engine may be asked for its errors about `value` at `node`.

    Not when they would weigh more than `ERRORS_WEIGHT` (as many times as one
    place of the schema can make errors), nor when the value holds more than
    `VALUES_ASKED` values. A node's count is worked out once per walk.
    """
    spend_reading(value)
    copies = report.places.get(id(node))
    if copies is None:
        copies = report.places[id(node)] = errors_per_place(node)
    return errors_fit(value, copies=copies, schema_keys=report.schema_keys)


def _walked_instead(
    node: ValueNode, texts: list[Callable[[], list[str]]], report: ValueReport
) -> ValueNode:
    """The node to walk where the engine's errors cost too much to ask for.

    An `unevaluated*` schema that only the node's own properties, patterns and
    items can evaluate for (no `allOf`, `$ref`, `anyOf`, conditional, ...
    beside it) applies to the keys or items they leave: it is walked as
    `additionalProperties` or `items`, and every value it refuses gets its own
    path. Otherwise the position is walked as any other (its own keywords, its
    properties and items) and what only the engine could tell is said not to be
    named, the count partial.
    """
    stand_in = _unevaluated_as_children(node)
    if stand_in is not None:
        return stand_in
    report.partial = True
    texts.append(lambda: [UNNAMED])
    return node


_NOT_LOCAL = frozenset(
    {
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "allOf",
        "anyOf",
        "oneOf",
        "if",
        "dependentSchemas",
        "contains",
        "additionalItems",
        "dependencies",
    }
)
"""Keywords beside `unevaluated*` that may evaluate keys or items of their own."""


def _unevaluated_as_children(node: ValueNode) -> ValueNode | None:
    """`node` with its `unevaluated*` schemas as `additionalProperties`/`items`.

    None unless nothing but its own properties, patterns, `additionalProperties`,
    `prefixItems` and schema `items` evaluates keys or items there.
    """
    schema = node.schema
    if not isinstance(schema, dict) or any(key in schema for key in _NOT_LOCAL):
        return None
    if "items" in schema and node.items is None:
        return None  # `items` as a list: an older draft's tuple
    unevaluated = dict(node.unevaluated)
    keys = unevaluated.get("unevaluatedProperties")
    items = unevaluated.get("unevaluatedItems")
    return attrs.evolve(
        node,
        additional=node.additional if "additionalProperties" in schema else keys,
        items=node.items if "items" in schema else items,
        children_valid=None,
        items_valid=None,
        opaque=False,
        plain=False,
    )


def _engine_errors(
    node: ValueNode, value: object, extras: Extras, report: ValueReport
) -> None:
    """A position that cannot be split: its engine errors, bounded, by instance path.

    The engine spells an all-digit object key as an integer; the instance says which
    it is. An `unevaluatedProperties`/`unevaluatedItems` schema's error names
    the object or array; each value the schema refused gets its own path instead (as
    under `additionalProperties`), with its own problems. Asked only about a value
    `_too_large` let through.
    """
    leaf = _Leaf(extras, report)
    try:
        errors = iter(node.validator.iter_errors(value))
        for seen, error in enumerate(itertools.islice(errors, LEAF_ERRORS + 1)):
            if seen == LEAF_ERRORS:
                report.partial = True
                break
            relative = instance_path(value, error.instance_path)
            if _unevaluated(node, error, value, relative, leaf):
                continue
            text = _dependent_text(node, error, value, relative)
            extras.setdefault(relative, []).append(text or problem_text(error))
        charge(ERROR_WORK * (seen + 1 + sum(1 for _ in errors)))
    except _CHECK_ERRORS:
        extras.setdefault((), []).append(UNCHECKABLE)


@attrs.define
class _Leaf:
    """Where a position that cannot be split reports, and its engine errors left."""

    extras: Extras
    report: ValueReport
    budget: int = LEAF_ERRORS


def _unevaluated(
    node: ValueNode, error: Any, value: object, relative: Path, leaf: _Leaf
) -> bool:
    """Report each value an `unevaluated*` schema of the node's own refused.

    False (the container's text is kept) for another error, for `false` (which
    refuses the container's extra keys or items as such), or when the refused
    values cannot be told: the engine names refused keys, but refused items only by
    their JSON, so an item is told by the item schema refusing it (and, when more
    items fail it than the engine refused, by its JSON).
    """
    keyword = str(error.kind.name)
    if keyword not in _UNEVALUATED or list(error.schema_path) != [keyword]:
        return False
    child = dict(node.unevaluated).get(keyword)
    container = _at(value, relative)
    if child is None or child.schema is False or container is None:
        return False  # `false` keeps the container's own problem text
    unexpected = list(error.kind.as_dict().get("unexpected") or ())
    if keyword == "unevaluatedProperties":
        tokens: list[Any] = [key for key in unexpected if key in container]  # type: ignore[operator]
        found = len(tokens) == len(unexpected) and isinstance(container, dict)
    else:
        start = len(node.prefix_items) if relative == () else 0
        tokens = _refused_items(child, container, unexpected, start)
        found = isinstance(container, list) and len(tokens) == len(unexpected)
    if not found or not tokens:
        return False
    for index, token in enumerate(tokens):
        if index == LEAF_ERRORS:
            leaf.report.count += len(tokens) - LEAF_ERRORS  # counted, never listed
            break
        _child_errors(child, container[token], (*relative, token), leaf)  # type: ignore[index]
    return True


def _at(value: object, path: Path) -> object:
    """The part of `value` at `path` (None if the path leads nowhere)."""
    found = value
    for token in path:
        held = isinstance(found, dict) and token in found
        if not held and not (
            isinstance(found, list) and isinstance(token, int) and token < len(found)
        ):
            return None
        found = found[token]  # type: ignore[index]
    return found


def _refused_items(
    child: ValueNode, items: object, unexpected: list[Any], start: int
) -> list[int]:
    """The indexes of the items the engine called unevaluated and refused.

    They are the items past the position's own `prefixItems` (`start`) the
    keyword's schema refuses, unless an item it refuses was evaluated elsewhere (an
    `allOf` branch's `prefixItems`, `contains`): then the engine's JSON of
    each, in order, tells them apart.
    """
    if not isinstance(items, list):
        return []
    refused = [i for i in range(start, len(items)) if not is_valid_at(child, items[i])]
    if len(refused) == len(unexpected):
        return refused
    told: list[int] = []
    texts = iter(unexpected)
    wanted = next(texts, None)
    for index in refused:
        if wanted is None:
            break
        if _json_text(items[index]) == wanted:
            told.append(index)
            wanted = next(texts, None)
    return told


def _json_text(item: object) -> str | None:
    """An item as the engine writes it in its messages (compact JSON)."""
    try:
        return json.dumps(item, ensure_ascii=False, separators=(",", ":"))
    except (TypeError, ValueError, RecursionError):
        return None


def _child_errors(child: ValueNode, sub: object, at: Path, leaf: _Leaf) -> None:
    """The problems of one refused value, at its path and below (bounded).

    `sub` is inside a value `_engine_may_be_asked` let through, so its
    errors weigh less.
    """
    spend_reading(sub)
    errors = iter(child.validator.iter_errors(sub))
    for error in itertools.islice(errors, max(leaf.budget, 1)):
        leaf.budget -= 1
        charge(ERROR_WORK)
        path = (*at, *instance_path(sub, error.instance_path))
        leaf.extras.setdefault(path, []).append(problem_text(error))
    charge(ERROR_WORK * sum(1 for _ in errors))


def instance_path(value: object, tokens: Any) -> Path:
    """A path spelled from the instance: a list's index, a dict's own key.

    The engine spells a key that reads as a number as that number (`"00"` and
    `"+1"` come back as 0 and 1): it is matched to the object's one key of that
    number; when none or several are, the path stops at the object.
    """
    found: list[str | int] = []
    node = value
    for token in tokens:
        if isinstance(node, list):
            index = int(token)
            found.append(index)
            node = node[index] if 0 <= index < len(node) else None
        elif isinstance(node, dict):
            key = _own_key(node, token)
            if key is None:
                break
            found.append(key)
            node = node[key]
        else:
            found.append(str(token))
            node = None
    return tuple(found)


def _own_key(node: dict[Any, Any], token: object) -> str | None:
    """The key of `node` the engine's path token names (None if not one key)."""
    if not isinstance(token, int):
        key = str(token)
        return key if key in node else None
    keys = [key for key in node if _as_number(key) == token]
    return keys[0] if len(keys) == 1 else None


def _as_number(key: object) -> int | None:
    """The int a key reads as (`"007"`, `"+1"`), or None."""
    text = str(key)
    digits = text[1:] if text[:1] in "+-" else text
    if not digits or not digits.isascii() or not digits.isdigit():
        return None
    return int(text)


def _bounded(found: list[str]) -> list[str]:
    """Deduplicated, sorted texts; at most ten, then `and N more`."""
    texts = sorted(set(found)) or [UNCHECKABLE]
    if len(texts) > FIRST:
        return [*texts[:FIRST], f"and {len(texts) - FIRST} more"]
    return texts


def cast_integers(node: ValueNode, value: object) -> object:
    """Return `value` with whole floats cast to int where the schema says integer.

    The schema that says it is any position that accepted the value: properties,
    items, patterns, `additionalProperties`, `allOf` branches and `$ref`
    targets, the `anyOf`/`oneOf` branch that accepted it, the `then`/`else`
    the `if` chose. Containers are copied only where something changed; the
    caller's data is never modified. Each value read here past the fast lanes spends
    one unit of the running work budget.
    """
    if not node.casts:
        return value
    spend_work()
    if not node.plain:
        return _cast_set([node], value)
    kind = value.__class__
    if kind is float:
        return _cast_number(node, value)  # type: ignore[arg-type]
    if kind is dict:
        return _cast_object(node, value)  # type: ignore[arg-type]
    if kind is list:
        return _cast_array(node, value)  # type: ignore[arg-type]
    return value


def _cast_number(node: ValueNode, value: float) -> object:
    """A whole float where the schema says integer becomes an int."""
    if node.integer and value.is_integer():
        return whole(value)
    return value


def whole(number: float) -> int:
    """The integer a whole float stands for: the decimal its repr spells.

    Below 2**53 that is `int(number)`; above, the shortest repr names the number
    the client wrote (`1.1060260653197889e18` is `1106026065319788900`), the one
    `multipleOf` decided on.
    """
    if -_EXACT < number < _EXACT:
        return int(number)
    return int(Decimal(repr(number)))


def _cast_object(node: ValueNode, value: dict[Any, Any]) -> dict[Any, Any]:
    """Cast inside an object's declared properties."""
    result = value
    for key in node.integer_keys:
        number = value.get(key)
        if number.__class__ is float and number.is_integer():
            result = replaced(result, value, key, whole(number))
    for key, child in node.deeper_keys:
        if key in value:
            sub = value[key]
            new = cast_integers(child, sub)
            if new is not sub:
                result = replaced(result, value, key, new)
    return result


def _cast_array(node: ValueNode, value: list[Any]) -> list[Any]:
    """Cast inside an array's items."""
    items = node.items
    if not node.prefix_items and items is not None and _flat(items):
        return _cast_flat_items(items, value)
    result = value
    prefix = node.prefix_items
    for index, item in enumerate(value):
        if item.__class__ not in _HOLDERS:
            continue
        child = prefix[index] if index < len(prefix) else items
        if child is not None and child.casts:
            new = cast_integers(child, item)
            if new is not item:
                result = replaced(result, value, index, new)
    return result


def _flat(node: ValueNode) -> bool:
    """Whether all there is to cast in `node` is itself or its integer keys."""
    return (
        node.plain
        and not node.deeper_keys
        and not (node.items is not None and node.items.casts)
        and not any(child.casts for child in node.prefix_items)
    )


def _cast_flat_items(items: ValueNode, value: list[Any]) -> list[Any]:
    """The fast lane: items that are integers, or objects with integer keys only.

    One comprehension finds the items holding a float; only those are cast, an
    equal float once (at most `CAST_MEMO` remembered: a whole float past 2**53
    costs a decimal conversion and a big int).
    """
    keys = items.integer_keys
    if not keys:
        if float not in map(type, value):  # one pass in C: nothing to cast
            return value
        hits = [i for i, item in enumerate(value) if item.__class__ is float]
    elif len(keys) == 1 and not items.integer:
        key = keys[0]
        if not _float_at(value, key):
            return value
        hits = [
            i
            for i, item in enumerate(value)
            if item.__class__ is dict and item.get(key).__class__ is float
        ]
    else:
        hits = [
            i
            for i, item in enumerate(value)
            if item.__class__ is float
            or (
                item.__class__ is dict
                and any(item.get(k).__class__ is float for k in keys)
            )
        ]
    if not hits:
        return value
    result = list(value)
    cast: dict[float, object] = {}
    for index in hits:
        item = value[index]
        if item.__class__ is not float:
            result[index] = cast_integers(items, item)
            continue
        known = cast.get(item, _UNCAST)
        if known is _UNCAST:
            if len(cast) >= CAST_MEMO:
                cast.clear()
            known = cast[item] = cast_integers(items, item)
        result[index] = known
    return result


_UNCAST = object()


def _float_at(items: list[Any], key: str) -> bool:
    """Whether an item holds a float at `key`, or is not an object: one pass in C.

    The usual array of objects holds none to cast; this says so in ~620
    instructions an item where the comprehension that finds them takes ~780.
    """
    try:
        return float in set(map(type, map(dict.get, items, itertools.repeat(key))))
    except TypeError:  # an item that is not an object: the comprehension decides
        return True


def _cast_set(nodes: list[ValueNode], value: object) -> object:
    """Cast through every position that accepted `value` (the general lane)."""
    spend_work()
    applying = _accepting(nodes, value)
    kind = value.__class__
    if kind is float:
        if any(node.integer for node in applying) and value.is_integer():  # type: ignore[attr-defined]
            return whole(value)  # type: ignore[arg-type]
        return value
    if kind is dict:
        return _cast_keys(applying, value)  # type: ignore[arg-type]
    if kind is list:
        return _cast_items(applying, value)  # type: ignore[arg-type]
    return value


def _accepting(nodes: list[ValueNode], value: object) -> list[ValueNode]:
    """The casting positions that accepted `value`, branches followed."""
    stack = [node for node in nodes if node.casts]
    seen: set[int] = set()
    applying: list[ValueNode] = []
    while stack:
        node = stack.pop()
        if id(node) in seen or not node.casts:
            continue
        seen.add(id(node))
        applying.append(node)
        stack.extend(node.all_of)
        for branches in (node.any_of, node.one_of):
            chosen = next((b for b in branches if is_valid_at(b, value)), None)
            if chosen is not None:
                stack.append(chosen)
        if node.if_ is not None:
            if is_valid_at(node.if_, value):
                stack.extend(n for n in (node.if_, node.then) if n is not None)
            elif node.else_ is not None:
                stack.append(node.else_)
        if node.dependent and isinstance(value, dict):
            stack.extend(sub for key, sub in node.dependent if key in value)
    return applying


def _cast_keys(applying: list[ValueNode], value: dict[Any, Any]) -> dict[Any, Any]:
    """Cast each key's value through the positions that apply to it.

    Only the keys holding a float, an object or an array can have something to
    cast; the others (an accepted object of 300,000 integers) are never matched
    against the patterns.
    """
    held = [key for key, sub in value.items() if sub.__class__ in _HOLDERS]
    if not held:
        return value
    spend_work(len(held))
    children: dict[Any, list[ValueNode]] = {}
    for node in applying:
        for key, child in _children_of(node, value, held):
            if child.casts:
                children.setdefault(key, []).append(child)
    changes: dict[Any, object] = {}
    for key, nodes in children.items():
        sub = value[key]
        new = _cast_one(nodes, sub)
        if new is not sub:
            changes[key] = new
    if not changes:
        return value
    result = value.copy()
    result.update(changes)
    return result


def _cast_one(nodes: list[ValueNode], sub: object) -> object:
    """Cast one value; through one plain position, by the plain lanes."""
    if len(nodes) == 1 and nodes[0].plain:
        if sub.__class__ is float:
            return _cast_number(nodes[0], sub)
        return cast_integers(nodes[0], sub)  # an array's items: the flat lane
    return _cast_set(nodes, sub)


def _cast_items(applying: list[ValueNode], value: list[Any]) -> list[Any]:
    """Cast each item through the positions that apply to it."""
    result = value
    for index, item in enumerate(value):
        if item.__class__ not in _HOLDERS:
            continue
        nodes = [
            child
            for child in (_item_node(node, index) for node in applying)
            if child is not None and child.casts
        ]
        if not nodes:
            continue
        new = _cast_set(nodes, item)
        if new is not item:
            result = replaced(result, value, index, new)
    return result
