"""A scripted fixer: repairs a refused call from what the refusal says, nothing else.

It reads the refusal's paths (`unknown`, `errors`), `missing`, `did_you_mean`,
`valid_actions`, the sections of `also` and the schema the refusal carries
(`input_schema`), and the call it sent; it never reads the tool's declaration.
"""

from __future__ import annotations

import copy
import difflib
import json
import re
from collections.abc import Iterator
from typing import Any

from wymcp.core.gates import arguments_refusal, check
from wymcp.core.schema import ToolSpec

Path = tuple[str | int, ...]
_TOKEN = re.compile(r'\.([A-Za-z_][A-Za-z0-9_]*)|\[(\d+)\]|\[("(?:[^"\\]|\\.)*")\]')
_MISSING = object()


def first_refusal(spec: ToolSpec, arguments: dict[str, Any]) -> dict[str, Any] | None:
    """What a served call of `arguments` is answered: its refusal, or None."""
    refusal = arguments_refusal(spec, arguments)
    if refusal is not None:
        return refusal
    verdict = check(spec, arguments["action"], arguments.get("data"))
    return None if verdict.accepted else verdict.refusal


def parse(path: str) -> tuple[str, Path]:
    """A rendered path read back: its root and its tokens."""
    root = re.match(r"[a-z]+", path)
    assert root is not None
    tokens: list[str | int] = []
    for name, index, quoted in _TOKEN.findall(path[root.end() :]):
        if name:
            tokens.append(name)
        elif index:
            tokens.append(int(index))
        else:
            tokens.append(json.loads(quoted))
    return root.group(), tuple(tokens)


def sections(refusal: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """The refusal's own fields and its `also`, keyed by the code."""
    found = {str(refusal["error"]): refusal}
    found.update(refusal.get("also", {}))
    return found


def named(refusal: dict[str, Any]) -> dict[str, Any]:
    """Everything a refusal names: unknown paths, renames, missing names, values."""
    unknown: set[str] = set()
    renames: dict[str, str] = {}
    missing: set[str] = set()
    values: set[str] = set()
    for section in sections(refusal).values():
        unknown |= set(section.get("unknown", []))
        renames.update(section.get("did_you_mean", {}))
        missing |= set(section.get("missing", []))
        values |= {entry["path"] for entry in section.get("errors", [])}
    return {
        "unknown": unknown,
        "renames": renames,
        "missing": missing,
        "values": values,
        "action": refusal.get("did_you_mean", {}).get("action"),
        "data_string": "'data' is a string" in refusal.get("message", ""),
    }


def names_fault(refusal: dict[str, Any], fault: tuple[str, ...]) -> bool:
    """Whether the refusal names one injected fault."""
    found = named(refusal)
    kind = fault[0]
    if kind == "rename":
        return (
            fault[1] in found["unknown"] and found["renames"].get(fault[1]) == fault[2]
        )
    if kind == "unknown":
        return fault[1] in found["unknown"]
    if kind == "missing":
        return fault[1] in found["missing"]
    if kind == "value":
        return fault[1] in found["values"]
    if kind == "action":
        return bool(found["action"] == fault[1])
    return bool(found["data_string"])


def fix(arguments: dict[str, Any], refusal: dict[str, Any]) -> dict[str, Any]:
    """The call repaired as the refusal says."""
    call = copy.deepcopy(arguments)
    schema = (
        refusal.get("input_schema") if refusal["error"] != "invalid_arguments" else None
    )
    if refusal["error"] == "invalid_arguments":
        call = _fix_envelope(call, refusal)
    elif refusal["error"] == "unknown_action":
        meant = refusal.get("did_you_mean", {}).get("action")
        call["action"] = meant or _nearest(call["action"], refusal["valid_actions"])
    data = call.setdefault("data", {})
    for code, section in sections(refusal).items():
        if code == "unknown_params":
            _fix_unknown(data, section, schema)
    for section in sections(refusal).values():
        for name in section.get("missing", []):
            if name not in data and schema is not None:
                data[name] = synth(schema["properties"][name])
    for section in sections(refusal).values():
        for entry in section.get("errors", []):
            _fix_value(data, parse(entry["path"])[1], entry["problems"], schema)
    return call


def _nearest(word: str, choices: list[str]) -> str:
    close = difflib.get_close_matches(word.casefold(), choices, n=1, cutoff=0)
    return close[0] if close else choices[0]


def _fix_envelope(call: dict[str, Any], refusal: dict[str, Any]) -> dict[str, Any]:
    renames = refusal.get("did_you_mean", {})
    fixed: dict[str, Any] = {}
    data = call.get("data")
    if isinstance(data, str):
        data = json.loads(data)
    fixed["data"] = data if isinstance(data, dict) else {}
    action = call.get("action")
    for key, value in call.items():
        right = renames.get(f"arguments.{key}")
        if right == "arguments.action":
            action = value
        elif right is not None and right.startswith("data"):
            _set(fixed["data"], parse(right)[1], value)
    if not isinstance(action, str) or action not in refusal["valid_actions"]:
        action = _nearest(str(action), refusal["valid_actions"])
    fixed["action"] = action
    return fixed


def _fix_unknown(
    data: dict[str, Any], section: dict[str, Any], schema: dict[str, Any] | None
) -> None:
    renames = section.get("did_you_mean", {})
    for path in section.get("unknown", []):
        tokens = parse(path)[1]
        value = _get(data, tokens)
        if value is _MISSING:
            continue
        _delete(data, tokens)
        if path in renames:
            _set(data, parse(renames[path])[1], value, only_new=True)
            continue
        home = _declared_elsewhere(schema, tokens)
        if home is not None:
            _set(data, home, value, only_new=True)


def _declared_elsewhere(schema: dict[str, Any] | None, tokens: Path) -> Path | None:
    """The one other place (through `properties`) the schema declares this key."""
    if schema is None:
        return None
    key = tokens[-1]
    places = [
        path
        for path in _object_paths({"properties": schema["properties"]}, ())
        if key
        in _node({"properties": schema["properties"]}, path).get("properties", {})
    ]
    if len(places) != 1:
        return None
    return (*places[0], key)


def _object_paths(schema: dict[str, Any], path: Path) -> Iterator[Path]:
    if "properties" in schema:
        yield path
        for key, sub in schema["properties"].items():
            yield from _object_paths(sub, (*path, key))


def _node(schema: dict[str, Any], path: Path) -> dict[str, Any]:
    for token in path:
        if isinstance(token, int):
            schema = schema.get("items", {})
        else:
            schema = schema.get("properties", {}).get(token, {})
    return schema


def _fix_value(
    data: dict[str, Any],
    tokens: Path,
    problems: list[str],
    schema: dict[str, Any] | None,
) -> None:
    node = _node({"properties": schema["properties"]}, tokens) if schema else {}
    value = _get(data, tokens)
    for problem in problems:
        required = re.fullmatch(r"property '(.+)' is required", problem)
        if required:
            container = _get(data, tokens)
            name = required.group(1)
            if isinstance(container, dict) and name not in container and node:
                container[name] = synth(node["properties"][name])
            continue
        if problem.startswith("value matches no schema"):
            continue
        _set(data, tokens, _repaired(value, problem, node))
        return


def _repaired(value: Any, problem: str, node: dict[str, Any]) -> Any:
    wanted = re.fullmatch(r"value is not of type (.+)", problem)
    if wanted:
        kinds = wanted.group(1).split(" or ")
        if isinstance(value, str) and ("integer" in kinds or "number" in kinds):
            try:
                return int(value) if "integer" in kinds else float(value)
            except ValueError:
                pass
        if "array" in kinds and not isinstance(value, list):
            return [value]
        if "string" in kinds and isinstance(value, int | float):
            return str(value)
    if problem.startswith("value must be one of the enum values"):
        choices = node.get("enum") or json.loads(
            "[" + problem.split(": ", 1)[1].replace(" or ", ", ") + "]"
        )
        for choice in choices:
            if isinstance(choice, str) and str(value).casefold() == choice.casefold():
                return choice
    return synth(node) if node else value


def synth(schema: dict[str, Any]) -> Any:  # noqa: PLR0911 - one return per schema keyword
    """A value the schema accepts, made from the schema alone."""
    if "enum" in schema:
        return next((v for v in schema["enum"] if v is not None), None)
    kinds = schema.get("type", "string")
    kind = kinds if isinstance(kinds, str) else next(k for k in kinds if k != "null")
    if kind in {"integer", "number"}:
        return schema.get("minimum", 1)
    if kind == "boolean":
        return False
    if kind == "array":
        return [
            synth(schema.get("items", {})) for _ in range(schema.get("minItems", 0))
        ]
    if kind == "object":
        props = schema.get("properties", {})
        return {name: synth(props[name]) for name in schema.get("required", [])}
    fmt = {"date": "2026-01-01", "email": "a@example.com", "uri": "https://a.example"}
    if schema.get("format") in fmt:
        return fmt[schema["format"]]
    pattern = schema.get("pattern")
    for candidate in ("x" * max(1, schema.get("minLength", 1)), "a1", "00000"):
        if pattern is None or re.search(pattern, candidate):
            return candidate
    return "x"


def _get(data: Any, tokens: Path) -> Any:
    for token in tokens:
        if (isinstance(data, dict) and token in data) or (
            isinstance(data, list) and isinstance(token, int) and token < len(data)
        ):
            data = data[token]
        else:
            return _MISSING
    return data


def _set(data: Any, tokens: Path, value: Any, *, only_new: bool = False) -> None:
    if not tokens:
        return
    for token in tokens[:-1]:
        data = data.setdefault(token, {}) if isinstance(data, dict) else data[token]
    if only_new and isinstance(data, dict) and tokens[-1] in data:
        return
    data[tokens[-1]] = value


def _delete(data: Any, tokens: Path) -> None:
    parent = _get(data, tokens[:-1])
    if isinstance(parent, dict):
        parent.pop(tokens[-1], None)
