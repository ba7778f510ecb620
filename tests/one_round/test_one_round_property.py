"""Property: one refusal names what the gates would name one round at a time.

For generated schemas and generated faulty data, the combined refusal (its own
fields and `also`) names exactly the paths the gates name when the call is sent
again and again, each time repaired as the last refusal said; and its
request-dependent part stays within its byte bound.
"""

from __future__ import annotations

import copy
import json
from typing import Any

from hypothesis import HealthCheck, assume, event, given, settings
from hypothesis import strategies as st

from refusal_fixer import parse
from wymcp.core.gates import check
from wymcp.core.schema import Action, Tool

NAMES = ["title", "url", "count", "color", "items", "owner", "label", "size"]
REQUEST_PART = 4000

Sample = tuple[dict[str, Any], Any]
"""A schema and a value it accepts."""

SCALARS: st.SearchStrategy[Sample] = st.sampled_from(
    [
        ({"type": "string", "minLength": 1}, "s"),
        ({"type": "integer", "minimum": 0, "maximum": 9}, 3),
        ({"type": "boolean"}, True),
        ({"enum": ["red", "green"]}, "red"),
        ({"type": ["string", "null"]}, None),
    ]
)


@st.composite
def objects(draw: st.DrawFn, children: st.SearchStrategy[Sample]) -> Sample:
    names = draw(st.lists(st.sampled_from(NAMES), min_size=1, max_size=4, unique=True))
    samples = {name: draw(children) for name in names}
    required = [n for n in names if draw(st.booleans())]
    schema = {
        "type": "object",
        "properties": {n: s for n, (s, _) in samples.items()},
        "required": required,
    }
    return schema, {n: v for n, (_, v) in samples.items()}


def arrays(children: st.SearchStrategy[Sample]) -> st.SearchStrategy[Sample]:
    return children.map(
        lambda sv: (
            {"type": "array", "items": sv[0]},
            [copy.deepcopy(sv[1]) for _ in range(2)],
        )
    )


NODES = st.recursive(
    SCALARS, lambda inner: objects(inner) | arrays(inner), max_leaves=6
)


@st.composite
def actions(draw: st.DrawFn) -> tuple[Action, dict[str, Any], dict[str, Any]]:
    """An action, a valid call of it, and a valid value of every property."""
    schema, value = draw(objects(NODES))
    names = list(schema["properties"])
    required = schema["required"]
    optional = [n for n in names if n not in required]
    groups: list[list[str]] = []
    if len(optional) >= 2 and draw(st.booleans()):
        groups = [[optional[0]], [optional[1]]]
    action = Action(
        description="Generated",
        properties=schema["properties"],
        required=required,
        required_one_of=groups,
    )
    return action, value, value


def _typo(key: str) -> str:
    if len(key) < 3:
        return key + "q"
    return key[0] + key[2] + key[1] + key[3:]


def _fault(draw: st.DrawFn, data: Any) -> None:
    """One fault at a random place of ``data`` (changed in place)."""
    places: list[Any] = []

    def walk(value: Any) -> None:
        if isinstance(value, dict):
            places.append(value)
            for sub in value.values():
                walk(sub)
        elif isinstance(value, list):
            for sub in value:
                walk(sub)

    walk(data)
    target = draw(st.sampled_from(places))
    keys = sorted(target)
    how = draw(st.sampled_from(["drop", "typo", "upper", "extra", "type"]))
    if how == "extra" or not keys:
        target[draw(st.sampled_from(["zq_extra", "verbose"]))] = 1
        return
    key = draw(st.sampled_from(keys))
    if how == "drop":
        del target[key]
    elif how == "typo":
        target[_typo(key)] = target.pop(key)
    elif how == "upper":
        target[key.upper()] = target.pop(key)
    else:
        target[key] = draw(st.sampled_from([7, "x", [1], {"a": 1}, 2.5]))


def _tool(action: Action) -> type[Tool]:
    class Generated(Tool):
        name = "generated"
        description = "Generated"
        actions = {"act": action}  # noqa: RUF012 - the pinned declaration style

        async def run_action(self, ctx: object, name: str, data: Any) -> Any:
            raise NotImplementedError

    return Generated


def _named(section: dict[str, Any]) -> dict[str, Any]:
    return {
        "unknown": section.get("unknown"),
        "did_you_mean": section.get("did_you_mean"),
        "missing": section.get("missing"),
        "required_one_of": section.get("required_one_of"),
        "errors": section.get("errors"),
        "error_count": section.get("error_count"),
    }


def _rounds(
    tool: type[Tool], data: dict[str, Any], fill: dict[str, Any]
) -> tuple[dict[str, dict[str, Any]], set[str]]:
    """Each gate's refusal, one round at a time, the call repaired as it said."""
    seen: dict[str, dict[str, Any]] = {}
    renamed_root: set[str] = set()
    call = copy.deepcopy(data)
    for _ in range(5):
        refusal = check(tool, "act", call).refusal
        if refusal is None:
            break
        code = refusal["error"]
        if code in seen:  # see test_unknown_keys_inside_a_moved_value
            return {}, set()
        seen[code] = refusal
        if code == "invalid_values":
            break
        _repair(call, refusal, fill, renamed_root)
    return seen, renamed_root


def _repair(
    call: dict[str, Any],
    refusal: dict[str, Any],
    fill: dict[str, Any],
    renamed_root: set[str],
) -> None:
    """Do what one refusal says: move typos, drop unknown keys, send the missing."""
    code = refusal["error"]
    if code == "missing_required_fields":
        for name in refusal["missing"]:
            call[name] = copy.deepcopy(fill[name])
        return
    if code == "missing_required_group":
        for name in refusal["required_one_of"][0]:
            call.setdefault(name, copy.deepcopy(fill[name]))
        return
    assert refusal["unknown_count"] == len(refusal["unknown"])
    moves = refusal.get("did_you_mean", {})
    values = {p: _take(call, parse(p)[1]) for p in refusal["unknown"]}
    for path in refusal["unknown"]:
        _drop(call, parse(path)[1])
    for path in refusal["unknown"]:
        if path not in moves:
            continue
        tokens = parse(moves[path])[1]
        parent = _take(call, tokens[:-1])
        if tokens[-1] not in parent:
            parent[tokens[-1]] = values[path]
            if len(tokens) == 1:
                renamed_root.add(str(tokens[0]))


def _take(value: Any, tokens: tuple[str | int, ...]) -> Any:
    for token in tokens:
        value = value[token]
    return value


def _drop(value: Any, tokens: tuple[str | int, ...]) -> None:
    del _take(value, tokens[:-1])[tokens[-1]]


def _request_part(refusal: dict[str, Any]) -> int:
    kept = {
        k: v for k, v in refusal.items() if k not in ("input_schema", "valid_actions")
    }
    return len(json.dumps(kept).encode())


@settings(
    max_examples=200,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
@given(st.data())
def test_one_refusal_names_what_the_rounds_would(data: st.DataObject) -> None:
    action, valid, fill = data.draw(actions())
    call = copy.deepcopy(valid)
    for _ in range(data.draw(st.integers(min_value=1, max_value=4))):
        _fault(data.draw, call)
    tool = _tool(action)
    refusal = check(tool, "act", call).refusal
    if refusal is None:
        return
    assert _request_part(refusal) <= REQUEST_PART
    rounds, renamed_root = _rounds(tool, call, fill)
    assume(rounds)
    event(" -> ".join(rounds))
    first = refusal["error"]
    assert first in rounds
    combined = {first: refusal, **refusal.get("also", {})}
    later = dict(rounds)
    if first == "unknown_params" and "missing_required_fields" in later:
        # `missing` is as the call was sent: the names a did_you_mean key fills
        # are in it too, the rest is what the required gate names next.
        then = later.pop("missing_required_fields")["missing"]
        assert [n for n in refusal["missing"] if n not in renamed_root] == then
    elif first == "unknown_params":
        assert set(refusal.get("missing", [])) <= renamed_root
    assert set(combined) == set(later)
    for code, section in later.items():
        mine = _named(combined[code])
        theirs = _named(section)
        if code == "unknown_params" and first == "unknown_params":
            assert mine["unknown"] == theirs["unknown"]
            assert mine["did_you_mean"] == theirs["did_you_mean"]
            continue
        assert mine == theirs, code


def test_the_bound_holds_when_every_section_is_full() -> None:
    """Typos of twelve long keys, with 12,000 bad values behind them.

    `unknown` and `did_you_mean` take most of the 4,000 bytes; `also` keeps its
    counts and as many entries as still fit.
    """
    names = [f"{'k' * 58}{i:02d}" for i in range(12)]
    props = {n: {"type": "array", "items": {"type": "integer"}} for n in names}
    tool = _tool(Action(description="Wide", properties=props, required=names))
    data: dict[str, Any] = {f"{n[:-3]}Z{n[-2:]}": ["x"] * 1000 for n in names}
    refusal = check(tool, "act", data).refusal
    assert refusal is not None
    assert refusal["error"] == "unknown_params"
    assert _request_part(refusal) <= REQUEST_PART
    assert len(refusal["did_you_mean"]) >= 1
    also = refusal["also"]["invalid_values"]
    assert also["error_count"] == len(refusal["did_you_mean"]) * 1000
    assert len(also["errors"]) < len(refusal["did_you_mean"])


def test_unknown_keys_inside_a_moved_value() -> None:
    """The one place `also` and the rounds differ: a value a typo'd key carries.

    Its own unknown keys are named where it lands, as the value gate reads them
    (`additionalProperties`), where the next round would name them unknown keys.
    """
    owner = {"type": "object", "properties": {"name": {"type": "string"}}}
    tool = _tool(Action(description="Own", properties={"owner": owner}))
    refusal = check(tool, "act", {"ownr": {"name": "a", "zz": 1}}).refusal
    assert refusal is not None
    assert refusal["did_you_mean"] == {"data.ownr": "data.owner"}
    assert refusal["also"]["invalid_values"]["errors"] == [
        {
            "path": "data.owner",
            "problems": ["value has properties additionalProperties does not allow"],
        }
    ]
