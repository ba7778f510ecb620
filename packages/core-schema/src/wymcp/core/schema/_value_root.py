"""The compiled value root: an action's closed schema built once with jsonschema-rs.

Each position reached through properties/items carries what the gates read there:
a closed key set, the integer cast, and validators that let a refusal count
offending paths without asking the engine for every error message.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import attrs
import jsonschema_rs

_CHILD_KEYWORDS = ("properties", "items", "prefixItems")
_REF_HOPS = 8
_ANNOTATIONS = frozenset(
    {
        "title",
        "description",
        "default",
        "examples",
        "deprecated",
        "readOnly",
        "writeOnly",
        "$comment",
        "contentEncoding",
        "contentMediaType",
        "contentSchema",
    }
)
_NOT_DECOMPOSABLE = frozenset(
    {
        "allOf",
        "anyOf",
        "oneOf",
        "not",
        "if",
        "then",
        "else",
        "dependentSchemas",
        "patternProperties",
        "unevaluatedProperties",
        "unevaluatedItems",
    }
)
_REFERENCE_KEYWORDS = frozenset(
    {
        "$schema",
        "$id",
        "$ref",
        "$dynamicRef",
        "$recursiveRef",
        "$anchor",
        "$dynamicAnchor",
        "$recursiveAnchor",
        "$defs",
        "definitions",
    }
)


@attrs.frozen(eq=False)
class ValueNode:
    """One schema position of a value root (the root itself, a property, an item).

    Attributes:
        schema: the closed schema at this position.
        validator: a compiled validator of the whole subtree, or None where the
            subtree cannot stand alone (references, another dialect).
        shallow: a validator of this position's own keywords without its children,
            or None when the position is not a plain composition of its children.
        properties: the nodes of the declared properties.
        prefix_items: the nodes of ``prefixItems``.
        items: the node of ``items`` (applies past ``prefixItems``), or None.
        closed: whether a key outside the declared ones is refused here.
        patterns: the ``patternProperties`` patterns a key may also match.
        integer: whether the schema here says integer (a whole float is cast).
        casts: whether this node or one below it says integer.
        integer_keys: the declared properties that are integers with nothing to
            cast below them (the cast's fast lane).
        deeper_keys: the other declared properties with something to cast.
        keyed: whether this node or one below it has a closed key set (where the
            unknown-key gate has something to look at).
        keyword_checks: where ``shallow`` is set, one validator per assertion
            keyword of the position (see ``_keyword_checks``), or None.
        inner: where ``shallow`` is set, a validator of the children alone
            (``properties``, ``items``, ``prefixItems``), so a value whose only
            fault is its own (too many items) is not walked child by child.
    """

    schema: Any
    validator: Any
    shallow: Any
    properties: Mapping[str, ValueNode]
    prefix_items: tuple[ValueNode, ...]
    items: ValueNode | None
    closed: bool
    patterns: tuple[re.Pattern[str], ...]
    integer: bool
    casts: bool
    integer_keys: tuple[str, ...] = ()
    deeper_keys: tuple[tuple[str, ValueNode], ...] = ()
    keyed: bool = False
    keyword_checks: tuple[tuple[str, Any], ...] | None = None
    inner: Any = None


def compile_schema(schema: Any, *, assert_formats: bool = True) -> Any:
    """Build a jsonschema-rs validator; ``format`` asserted (input) or annotation."""
    return jsonschema_rs.validator_for(
        schema,
        validate_formats=assert_formats,
        ignore_unknown_formats=not assert_formats,
    )


def build_problem(error: Exception) -> str:
    """Say in one line what the engine stopped on while building a schema."""
    message = getattr(error, "message", None)
    text = message if isinstance(message, str) else str(error)
    first = text.strip().splitlines()[0] if text.strip() else type(error).__name__
    return first[:300]


def build_value_root(schema: object) -> ValueNode:
    """Compile a closed schema into a value root (raises what the engine raises)."""
    validator = compile_schema(schema)
    standalone = not _mentions_references(schema)
    return _node(schema, validator, schema, standalone=standalone)


def _node(
    schema: object, validator: Any, document: object, *, standalone: bool
) -> ValueNode:
    """Build the node of one schema position and, recursively, of its children."""
    if not isinstance(schema, dict):
        return ValueNode(
            schema=schema,
            validator=validator,
            shallow=None,
            properties={},
            prefix_items=(),
            items=None,
            closed=False,
            patterns=(),
            integer=False,
            casts=False,
        )
    properties = {
        str(name): _child(sub, document, standalone=standalone)
        for name, sub in _mapping(schema.get("properties")).items()
    }
    prefix = schema.get("prefixItems")
    prefix_items = tuple(
        _child(sub, document, standalone=standalone)
        for sub in (prefix if isinstance(prefix, list) else [])
    )
    items_schema = schema.get("items")
    items = (
        _child(items_schema, document, standalone=standalone)
        if isinstance(items_schema, dict)
        else None
    )
    patterns = _patterns(schema)
    integer = _says_integer(_type_of(schema, document))
    children = [*properties.values(), *prefix_items, *([items] if items else [])]
    integer_keys = tuple(
        key
        for key, child in properties.items()
        if child.integer and not _casts_below(child)
    )
    deeper_keys = tuple(
        (key, child)
        for key, child in properties.items()
        if child.casts and key not in integer_keys
    )
    closed = schema.get("additionalProperties") is False and patterns is not None
    shallow = _shallow(schema, children) if standalone else None
    return ValueNode(
        schema=schema,
        validator=validator,
        shallow=shallow,
        properties=properties,
        prefix_items=prefix_items,
        items=items,
        closed=closed,
        patterns=patterns or (),
        integer=integer,
        casts=integer or any(child.casts for child in children),
        integer_keys=integer_keys,
        deeper_keys=deeper_keys,
        keyed=closed or any(child.keyed for child in children),
        keyword_checks=_keyword_checks(schema) if shallow is not None else None,
        inner=_inner(schema) if shallow is not None else None,
    )


def _inner(schema: dict[str, Any]) -> Any:
    """Validator of a decomposable position's children alone (None if unbuildable)."""
    children = {
        keyword: value
        for keyword, value in schema.items()
        if keyword in _CHILD_KEYWORDS or keyword == "additionalProperties"
    }
    try:
        return compile_schema(children)
    except (ValueError, TypeError):
        return None


def _casts_below(node: ValueNode) -> bool:
    """Whether a child of ``node`` has something to cast."""
    children = [*node.properties.values(), *node.prefix_items]
    if node.items is not None:
        children.append(node.items)
    return any(child.casts for child in children)


def _child(schema: object, document: object, *, standalone: bool) -> ValueNode:
    """Build a child node, with its own validator when it can stand alone."""
    validator = None
    if standalone:
        try:
            validator = compile_schema(schema)
        except (ValueError, TypeError):
            validator = None
    return _node(
        schema, validator, document, standalone=standalone and validator is not None
    )


def _shallow(schema: dict[str, Any], children: list[ValueNode]) -> Any:
    """Validator of the position's own keywords, or None if it is not decomposable."""
    if any(keyword in schema for keyword in _NOT_DECOMPOSABLE):
        return None
    if not isinstance(schema.get("additionalProperties", False), bool):
        return None
    if "items" in schema and not isinstance(schema["items"], dict):
        return None
    if any(child.validator is None for child in children):
        return None
    try:
        return compile_schema(_own_keywords(schema))
    except (ValueError, TypeError):
        return None


def _own_keywords(schema: dict[str, Any]) -> dict[str, Any]:
    """The keywords of a position without its children (and its closure)."""
    return {
        keyword: value
        for keyword, value in schema.items()
        if keyword not in _CHILD_KEYWORDS and keyword != "additionalProperties"
    }


def _keyword_checks(schema: dict[str, Any]) -> tuple[tuple[str, Any], ...] | None:
    """One validator per assertion keyword of a decomposable position.

    They let a refusal name the failing keywords with the engine's cheap yes/no
    answer, never its messages (which serialise the whole value). ``required`` and
    ``dependentRequired`` are read in Python; ``contains`` carries its bounds.
    """
    own = _own_keywords(schema)
    checks: list[tuple[str, Any]] = []
    try:
        for keyword, value in own.items():
            if keyword in _ANNOTATIONS or keyword.startswith("x-"):
                continue
            if keyword in {"required", "dependentRequired", "minContains"}:
                continue
            if keyword == "maxContains":
                if "contains" in own:
                    part = {"contains": own["contains"], "maxContains": value}
                    checks.append((keyword, compile_schema(part | {"minContains": 0})))
                continue
            if keyword == "contains":
                least = own.get("minContains", 1)
                name = "minContains" if "minContains" in own else "contains"
                part = {"contains": value, "minContains": least}
                checks.append((name, compile_schema(part)))
                continue
            checks.append((keyword, compile_schema({keyword: value})))
    except (ValueError, TypeError):
        return None
    return tuple(checks)


def _patterns(schema: dict[str, Any]) -> tuple[re.Pattern[str], ...] | None:
    """Compile the patternProperties patterns; None if Python cannot read one."""
    compiled = []
    for pattern in _mapping(schema.get("patternProperties")):
        try:
            compiled.append(re.compile(str(pattern)))
        except re.error:
            return None
    return tuple(compiled)


def _type_of(schema: dict[str, Any], document: object) -> object:
    """The ``type`` of a schema, following local ``$ref`` chains (``#/...``)."""
    seen = 0
    node: object = schema
    while isinstance(node, dict) and "type" not in node and seen < _REF_HOPS:
        reference = node.get("$ref")
        if not isinstance(reference, str) or not reference.startswith("#/"):
            return None
        node = _pointer(document, reference[2:])
        seen += 1
    return node.get("type") if isinstance(node, dict) else None


def _pointer(document: object, pointer: str) -> object:
    """Resolve a JSON pointer inside the document (None if it leads nowhere)."""
    node = document
    for raw in pointer.split("/"):
        token = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict):
            node = node.get(token)
        elif isinstance(node, list) and token.isdigit() and int(token) < len(node):
            node = node[int(token)]
        else:
            return None
    return node


def _says_integer(kind: object) -> bool:
    """Whether a ``type`` keyword admits integers but not other numbers."""
    if kind == "integer":
        return True
    return isinstance(kind, list) and "integer" in kind and "number" not in kind


def _mapping(value: object) -> dict[Any, Any]:
    """The value if it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def _mentions_references(schema: object) -> bool:
    """Whether any dict in the schema uses a keyword that ties it to its document."""
    stack: list[object] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if any(keyword in _REFERENCE_KEYWORDS for keyword in node):
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False
