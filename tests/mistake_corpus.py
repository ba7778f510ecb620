"""A seeded corpus of mistaken tool calls, the kinds of mistakes models make.

Each call is a valid call of a template (the demo's `tasks` and `projects`, and
`orders`, a tool of nested objects and arrays) with faults injected; every call
knows the faults it carries, as what the first refusal must name:

- `("rename", wrong, right)`: `wrong` listed unknown, `did_you_mean` maps it to `right`
- `("unknown", path)`: listed unknown
- `("missing", name)`: a required name listed missing
- `("value", path)`: a path listed among the invalid values
- `("action", name)`: `did_you_mean` names the action meant
- `("data_string",)`: the message says `data` is a string
"""

from __future__ import annotations

import copy
import json
import random
from collections.abc import Callable, Iterator
from typing import Any

import attrs

from wymcp.core.gates import render_path
from wymcp.core.schema import Action, Tool, ToolSpec, prepare
from wymcp_tasks import Projects, Todos

SEED = 25
PER_KIND = 26

Fault = tuple[str, ...]
Path = tuple[str | int, ...]


class Orders(Tool):
    """Orders: a customer with an address, and an array of line items."""

    name = "orders"
    description = "Place and cancel orders."
    actions = {  # noqa: RUF012 - the declaration style of a Tool
        "place": Action(
            description="Place an order",
            properties={
                "customer": {
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "minLength": 1},
                        "email": {"type": "string", "format": "email"},
                        "address": {
                            "type": "object",
                            "properties": {
                                "street": {"type": "string", "minLength": 1},
                                "city": {"type": "string", "minLength": 1},
                                "zip": {"type": "string", "pattern": "^[0-9]{5}$"},
                            },
                            "required": ["street", "city"],
                        },
                    },
                    "required": ["name", "address"],
                },
                "items": {
                    "type": "array",
                    "minItems": 1,
                    "items": {
                        "type": "object",
                        "properties": {
                            "sku": {"type": "string", "minLength": 1},
                            "quantity": {"type": "integer", "minimum": 1},
                            "gift": {"type": "boolean"},
                            "labels": {"type": "array", "items": {"type": "string"}},
                        },
                        "required": ["sku", "quantity"],
                    },
                },
                "priority": {"type": "string", "enum": ["low", "normal", "high"]},
                "tags": {"type": "array", "items": {"type": "string"}},
            },
            required=["customer", "items"],
        ),
        "cancel": Action(
            description="Cancel an order",
            properties={
                "order_id": {"type": "integer", "minimum": 1},
                "reason": {
                    "type": "string",
                    "enum": ["changed_mind", "duplicate", "too_slow"],
                },
            },
            required=["order_id"],
        ),
    }

    async def run_action(self, ctx: object, action: str, data: dict[str, Any]) -> Any:
        """Never run: the corpus only meets the gates."""
        raise NotImplementedError


TEMPLATES: list[tuple[type[Tool], str, dict[str, Any]]] = [
    (
        Todos,
        "create",
        {
            "title": "Write the report",
            "priority": 2,
            "due": "2026-12-24",
            "description": "Quarterly numbers",
        },
    ),
    (Todos, "list", {"status": "open", "priority": 1, "limit": 10}),
    (Todos, "get", {"id": 7}),
    (Todos, "update", {"id": 7, "status": "done", "title": "Ship it", "priority": 4}),
    (Todos, "complete", {"id": 3}),
    (Todos, "delete", {"id": 9}),
    (Todos, "search", {"text": "report", "limit": 5}),
    (Todos, "export", {"status": "done"}),
    (Projects, "create", {"project": "home-renovation", "description": "Kitchen"}),
    (Projects, "archive", {"project": "garden"}),
    (Projects, "list", {"include_archived": True, "limit": 20}),
    (
        Orders,
        "place",
        {
            "customer": {
                "name": "Ada",
                "email": "ada@example.com",
                "address": {
                    "street": "1 Main St",
                    "city": "Springfield",
                    "zip": "12345",
                },
            },
            "items": [
                {"sku": "A-1", "quantity": 2, "labels": ["red"]},
                {"sku": "B-2", "quantity": 1, "gift": True},
                {"sku": "C-3", "quantity": 5},
            ],
            "priority": "normal",
            "tags": ["gift", "rush"],
        },
    ),
    (Orders, "cancel", {"order_id": 41, "reason": "changed_mind"}),
]

EXTRA_KEYS = ("verbose", "request_id", "dry_run", "metadata", "confirm", "trace")


@attrs.frozen
class Mistake:
    """One mistaken call: its tool, the arguments sent, the faults injected."""

    kind: str
    tool: type[Tool]
    arguments: dict[str, Any]
    faults: frozenset[Fault]
    intended: str


def spec_of(tool: type[Tool]) -> ToolSpec:
    """The prepared spec of a corpus tool."""
    return prepare(tool)


def _schema(tool: type[Tool], action: str) -> dict[str, Any]:
    return spec_of(tool).actions[action].published_copy()


def _walk_keys(
    schema: dict[str, Any], value: object, path: Path
) -> Iterator[tuple[Path, dict[str, Any]]]:
    """Every sent key the schema declares: its path and its property schema."""
    if isinstance(value, dict):
        props = schema.get("properties", {})
        for key, sub in value.items():
            if key in props:
                yield (*path, key), props[key]
                yield from _walk_keys(props[key], sub, (*path, key))
    elif isinstance(value, list) and isinstance(schema.get("items"), dict):
        for index, sub in enumerate(value):
            yield from _walk_keys(schema["items"], sub, (*path, index))


def _types(schema: dict[str, Any]) -> set[str]:
    kind = schema.get("type", [])
    return {kind} if isinstance(kind, str) else set(kind)


def _get(data: Any, path: Path) -> Any:
    for token in path:
        data = data[token]
    return data


def _rename(data: dict[str, Any], path: Path, new: str) -> None:
    parent = _get(data, path[:-1])
    parent[new] = parent.pop(path[-1])


def _p(path: Path) -> str:
    return render_path(path, "data")


class _Injector:
    """Faults injected into one template's data, with what must be named."""

    def __init__(self, rng: random.Random, tool: type[Tool], action: str) -> None:
        self.rng = rng
        self.tool = tool
        self.action = action
        self.schema = {"type": "object", **_schema(tool, action)}
        self.used: set[Path] = set()

    def _pick(
        self, data: dict[str, Any], ok: Callable[[Path, dict[str, Any]], bool]
    ) -> tuple[Path, dict[str, Any]] | None:
        found = [
            (path, sub)
            for path, sub in _walk_keys(self.schema, data, ())
            if ok(path, sub)
            and not any(
                path[: len(u)] == u or u[: len(path)] == path for u in self.used
            )
        ]
        if not found:
            return None
        path, sub = self.rng.choice(found)
        self.used.add(path)
        return path, sub

    def misspell(self, data: dict[str, Any]) -> Fault | None:
        picked = self._pick(data, lambda p, _s: len(str(p[-1])) >= 4)
        if picked is None:
            return None
        path, _ = picked
        key = str(path[-1])
        siblings = _get(self.schema_props(path[:-1]), ())
        for _ in range(20):
            wrong = _typo(self.rng, key)
            if wrong.casefold() != key.casefold() and wrong not in siblings:
                _rename(data, path, wrong)
                return ("rename", _p((*path[:-1], wrong)), _p(path))
        return None

    def schema_props(self, path: Path) -> dict[str, Any]:
        node = self.schema
        for token in path:
            node = (
                node["items"] if isinstance(token, int) else node["properties"][token]
            )
        return node.get("properties", {})

    def wrong_case(self, data: dict[str, Any]) -> Fault | None:
        picked = self._pick(data, lambda p, _s: True)
        if picked is None:
            return None
        path, _ = picked
        key = str(path[-1])
        wrong = self.rng.choice(
            [key.upper(), key[:1].upper() + key[1:], _camel(key) or key.upper()]
        )
        if wrong == key:
            wrong = key.upper()
        _rename(data, path, wrong)
        return ("rename", _p((*path[:-1], wrong)), _p(path))

    def missing(self, data: dict[str, Any]) -> Fault | None:
        required = self.schema.get("required", [])
        present = [n for n in required if n in data and (n,) not in self.used]
        if not present:
            return None
        name = self.rng.choice(present)
        self.used.add((name,))
        del data[name]
        return ("missing", name)

    def nested_missing(self, data: dict[str, Any]) -> Fault | None:
        def ok(path: Path, _s: dict[str, Any]) -> bool:
            parent = self.schema_node(path[:-1])
            return len(path) > 1 and path[-1] in parent.get("required", [])

        picked = self._pick(data, ok)
        if picked is None:
            return None
        path, _ = picked
        del _get(data, path[:-1])[path[-1]]
        return ("value", _p(path[:-1]))

    def schema_node(self, path: Path) -> dict[str, Any]:
        node = self.schema
        for token in path:
            node = (
                node["items"] if isinstance(token, int) else node["properties"][token]
            )
        return node

    def number_as_string(self, data: dict[str, Any]) -> Fault | None:
        picked = self._pick(data, lambda p, s: bool(_types(s) & {"integer", "number"}))
        if picked is None:
            return None
        path, _ = picked
        parent = _get(data, path[:-1])
        parent[path[-1]] = str(parent[path[-1]])
        return ("value", _p(path))

    def string_for_array(self, data: dict[str, Any]) -> Fault | None:
        picked = self._pick(data, lambda p, s: "array" in _types(s) and _strings(s))
        if picked is None:
            return None
        path, _ = picked
        parent = _get(data, path[:-1])
        parent[path[-1]] = parent[path[-1]][0]
        return ("value", _p(path))

    def enum_case(self, data: dict[str, Any]) -> Fault | None:
        def ok(path: Path, s: dict[str, Any]) -> bool:
            value = _get(data, path)
            return isinstance(value, str) and value in s.get("enum", [])

        picked = self._pick(data, ok)
        if picked is None:
            return None
        path, _ = picked
        parent = _get(data, path[:-1])
        value = parent[path[-1]]
        parent[path[-1]] = self.rng.choice([value.upper(), value.capitalize()])
        return ("value", _p(path))

    def extra_key(self, data: dict[str, Any]) -> Fault:
        key = self.rng.choice(EXTRA_KEYS)
        data[key] = self.rng.choice([True, 1, "x"])
        return ("unknown", _p((key,)))

    def wrong_depth(self, data: dict[str, Any]) -> Fault | set[Fault] | None:
        """A nested key moved one level up (nested tools) or a field beside `data`."""

        def ok(path: Path, _s: dict[str, Any]) -> bool:
            return len(path) > 1 and isinstance(path[-2], str)

        picked = self._pick(data, ok)
        if picked is None:
            return None
        path, _ = picked
        parent = _get(data, path[:-1])
        value = parent.pop(path[-1])
        above = _get(data, path[:-2])
        if path[-1] in above:
            parent[path[-1]] = value
            return None
        above[path[-1]] = value
        faults: set[Fault] = {("unknown", _p((*path[:-2], path[-1])))}
        if path[-1] in self.schema_node(path[:-1]).get("required", []):
            faults.add(("value", _p(path[:-1])))
        return faults


def _strings(schema: dict[str, Any]) -> bool:
    items = schema.get("items")
    return isinstance(items, dict) and _types(items) == {"string"}


def _camel(key: str) -> str | None:
    head, *rest = key.split("_")
    if not rest:
        return None
    return head + "".join(part.capitalize() for part in rest)


def _typo(rng: random.Random, key: str) -> str:
    """One edit a hurried writer makes: a swap, a dropped or a doubled letter."""
    op = rng.choice(("swap", "drop", "double"))
    i = rng.randrange(1, len(key) - 1)
    if op == "swap":
        return key[:i] + key[i + 1] + key[i] + key[i + 2 :]
    if op == "drop":
        return key[:i] + key[i + 1 :]
    return key[:i] + key[i] + key[i:]


def _wrong_action(rng: random.Random, action: str) -> str:
    choices = [action.capitalize(), action.upper(), action + "s"]
    if len(action) >= 4:
        choices += [action[:-1], action[0] + action[2] + action[1] + action[3:]]
    return rng.choice([c for c in choices if c != action])


DATA_KINDS = {
    "misspelled_key": "misspell",
    "key_wrong_case": "wrong_case",
    "missing_required": "missing",
    "number_as_string": "number_as_string",
    "string_for_array": "string_for_array",
    "enum_wrong_case": "enum_case",
    "extra_unknown_key": "extra_key",
}
KINDS = (
    *DATA_KINDS,
    "key_wrong_depth",
    "not_wrapped",
    "data_as_json_string",
    "wrong_action",
    "several_in_one_call",
    "nested_items_mixed",
)


def _inject(kind: str, rng: random.Random) -> Mistake | None:  # noqa: C901, PLR0911, PLR0912, PLR0915 - one branch per kind of mistake
    """One call of `kind` from a random template, or None if it does not fit."""
    tool, action, base = rng.choice(TEMPLATES)
    data = _varied(rng, tool, action, copy.deepcopy(base))
    inj = _Injector(rng, tool, action)
    faults: set[Fault] = set()
    arguments: dict[str, Any]
    sent_action = action
    if kind in DATA_KINDS:
        fault = getattr(inj, DATA_KINDS[kind])(data)
        if fault is None:
            return None
        faults.add(fault)
    elif kind == "key_wrong_depth":
        if tool is Orders:
            found = inj.wrong_depth(data)
            if found is None:
                return None
            faults |= found if isinstance(found, set) else {found}
        else:
            key = rng.choice(sorted(data))
            arguments = {"action": action, "data": data}
            arguments[key] = data.pop(key)
            faults.add(("rename", f"arguments.{key}", f"data.{key}"))
            return Mistake(kind, tool, arguments, frozenset(faults), action)
    elif kind == "not_wrapped":
        if not data:
            return None
        arguments = {"action": action, **data}
        faults |= {("rename", f"arguments.{k}", f"data.{k}") for k in data}
        return Mistake(kind, tool, arguments, frozenset(faults), action)
    elif kind == "data_as_json_string":
        extra = rng.choice(["", "number_as_string", "misspell", "enum_case"])
        if extra:
            fault = getattr(inj, extra)(data)
            if fault is not None:
                faults.add(fault)
        faults.add(("data_string",))
        arguments = {"action": action, "data": json.dumps(data)}
        return Mistake(kind, tool, arguments, frozenset(faults), action)
    elif kind == "wrong_action":
        sent_action = _wrong_action(rng, action)
        faults.add(("action", action))
        if rng.random() < 0.5:
            fault = inj.number_as_string(data) or inj.enum_case(data)
            if fault is not None:
                faults.add(fault)
    elif kind == "several_in_one_call":
        names = ["misspell", "wrong_case", "missing", "number_as_string"]
        names += ["string_for_array", "enum_case", "extra_key", "nested_missing"]
        for name in rng.sample(names, rng.choice((2, 3))):
            fault = getattr(inj, name)(data)
            if fault is not None:
                faults.add(fault)
        if len(faults) < 2:
            return None
        wrap = rng.choice(("", "", "not_wrapped", "data_as_json_string"))
        if wrap == "not_wrapped" and "action" not in data and "data" not in data:
            faults = {_unwrapped(f) for f in faults}
            covered = {f[1] for f in faults if f[0] in {"rename", "unknown"}}
            faults |= {
                ("rename", f"arguments.{k}", f"data.{k}")
                for k in data
                if f"arguments.{k}" not in covered
            }
            return Mistake(
                kind, tool, {"action": action, **data}, frozenset(faults), action
            )
        if wrap == "data_as_json_string":
            faults.add(("data_string",))
            arguments = {"action": action, "data": json.dumps(data)}
            return Mistake(kind, tool, arguments, frozenset(faults), action)
    elif kind == "nested_items_mixed":
        if tool is not Orders or action != "place":
            return None
        faults |= _items_faults(rng, inj, data)
    return Mistake(
        kind,
        tool,
        {"action": sent_action, "data": data},
        frozenset(faults),
        action,
    )


def _unwrapped(fault: Fault) -> Fault:
    """A fault of a root key sent beside `action`: its path starts at `arguments`."""
    if fault[0] in {"rename", "unknown"} and fault[1].count(".") == 1:
        return (fault[0], "arguments." + fault[1].removeprefix("data."), *fault[2:])
    return fault


def _varied(
    rng: random.Random, tool: type[Tool], action: str, data: dict[str, Any]
) -> dict[str, Any]:
    """The template with its values drawn afresh, so calls of a kind differ."""
    words = ("red", "blue", "gift", "rush", "fragile", "spare")
    for key, value in list(data.items()):
        if isinstance(value, bool):
            data[key] = rng.choice((True, False))
        elif isinstance(value, int) and key in {"priority", "limit", "id", "order_id"}:
            data[key] = rng.randint(1, 5)
    if tool is Orders and action == "place":
        data["items"] = [
            {
                "sku": f"{rng.choice('ABCD')}-{rng.randint(1, 99)}",
                "quantity": rng.randint(1, 9),
                **({"labels": rng.sample(words, 2)} if rng.random() < 0.6 else {}),
                **({"gift": True} if rng.random() < 0.3 else {}),
            }
            for _ in range(rng.randint(2, 4))
        ]
        data["tags"] = rng.sample(words, rng.randint(1, 3))
        if rng.random() < 0.3:
            del data["customer"]["email"]
    return data


def _items_faults(
    rng: random.Random, inj: _Injector, data: dict[str, Any]
) -> set[Fault]:
    """Two or three items of `orders.place`, each with its own fault."""
    faults: set[Fault] = set()
    items = data["items"]
    for index in rng.sample(range(len(items)), min(len(items), rng.choice((2, 3)))):
        item = items[index]
        how = rng.choice(("qty_string", "typo", "drop_sku", "extra", "labels_string"))
        at: Path = ("items", index)
        if how == "qty_string":
            item["quantity"] = str(item["quantity"])
            faults.add(("value", _p((*at, "quantity"))))
        elif how == "typo":
            wrong = rng.choice(("quantiy", "qunatity", "Quantity", "skU", "SKU"))
            right = "quantity" if wrong.casefold().startswith("q") else "sku"
            item[wrong] = item.pop(right)
            faults.add(("rename", _p((*at, wrong)), _p((*at, right))))
        elif how == "drop_sku":
            del item["sku"]
            faults.add(("value", _p(at)))
        elif how == "extra":
            item["note"] = "x"
            faults.add(("unknown", _p((*at, "note"))))
        else:
            item["labels"] = "blue"
            faults.add(("value", _p((*at, "labels"))))
        inj.used.add(at)
    return faults


def corpus() -> list[Mistake]:
    """The corpus: `PER_KIND` distinct calls of each kind, the same on every run."""
    rng = random.Random(SEED)  # noqa: S311 - a seeded corpus, not a secret
    calls: list[Mistake] = []
    for kind in KINDS:
        seen: set[str] = set()
        while len(seen) < PER_KIND:
            mistake = _inject(kind, rng)
            if mistake is None or not mistake.faults:
                continue
            sent = json.dumps([mistake.tool.name, mistake.arguments], sort_keys=True)
            if sent not in seen:
                seen.add(sent)
                calls.append(mistake)
    return calls
