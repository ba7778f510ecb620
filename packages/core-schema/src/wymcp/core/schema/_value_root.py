"""The compiled value root: an action's closed schema built once with jsonschema-rs.

Every schema position (properties, items, patterns, combinator branches, local
`$ref` targets) is a node with its own validator, so the gates can find each
offending path and each cast without asking the engine for its error messages.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import quote, unquote

import attrs
import jsonschema_rs

from wymcp.core.schema._multiple_of import (
    KEYWORD,
    DecimalMultipleOf,
    decimal_multiples,
    integer_resource,
)
from wymcp.core.schema._references import refuse_retrieval

_URN = "urn:wymcp:value-root"
_FRAGMENT_SAFE = "/~!$&'()*+,;=:@"
_REF_HOPS = 8
_BUILD_ERRORS = (ValueError, TypeError, OverflowError, RecursionError)
_ASSERTIONS = frozenset(
    {
        "type",
        "enum",
        "const",
        "multipleOf",
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "pattern",
        "maxItems",
        "minItems",
        "uniqueItems",
        "maxProperties",
        "minProperties",
        "format",
    }
)
_BY_REFERENCE = frozenset({"contains", "propertyNames"})
_OPAQUE = frozenset(
    {
        "unevaluatedProperties",
        "unevaluatedItems",
        "$dynamicRef",
        "$recursiveRef",
        "additionalItems",
        "dependencies",
    }
)
_REFERENCE_KEYWORDS = frozenset(
    {"$id", "$anchor", "$dynamicAnchor", "$recursiveAnchor"}
)


@attrs.define(eq=False)
class ValueNode:
    """One schema position of a value root.

    Attributes:
        schema: the closed schema at this position (a dict or a boolean).
        validator: a compiled validator of the whole position (references resolved
            in the action's document).
        properties: the nodes of the declared properties.
        prefix_items: the nodes of `prefixItems`.
        items: the node of `items` (applies past `prefixItems`), or None.
        closed: whether the unknown-key gate refuses a key outside the declared ones
            (and outside `pattern_nodes`, matched as the engine matches them).
        integer: whether the schema here says integer (a whole float is cast).
        casts: whether this node or one reached from it says integer.
        integer_keys: declared properties that are integers with nothing else to
            cast (the cast's fast lane, for plain nodes).
        deeper_keys: the other declared properties with something to cast.
        keyed: whether this node or one below it (through properties and items) has a
            closed key set.
        assertions: one validator per assertion keyword of the position.
        children_valid: a validator of the position's child keywords alone
            (properties, items, patterns, additionalProperties), or None.
        items_valid: a validator of `items` alone (`{"items": ...}`), for a run
            of the items past `prefixItems`; None without a schema-valued `items`.
        pattern_nodes: each `patternProperties` pattern (as the engine matches it,
            a validator of `{"pattern": p}`) with its node.
        additional: the node of a schema-valued `additionalProperties`.
        all_of: the nodes that always apply here too (`allOf` branches and a local
            `$ref` target).
        any_of: the `anyOf` branches; one_of: the `oneOf` branches.
        not_: the node of `not`; `if_`, `then`, `else_`: the conditional's
            nodes.
        dependent: `dependentSchemas` as (key, node) pairs.
        opaque: whether the position cannot be split (`unevaluated*`, a dynamic
            or remote reference): then the engine's own errors describe it.
        unevaluated: the nodes of `unevaluatedProperties` and `unevaluatedItems`
            (by keyword), so each value they refuse is read on its own.
        plain: whether properties and items are all the position applies.
        python_checks: whether the engine may call back into Python here (the
            decimal `multipleOf`): a walk then checks equal scalar items once.
        branching: whether this node or one reached from it makes the engine read
            a value more than once (`anyOf`, `oneOf`, `if`, `not`, several
            `allOf` branches or patterns, a position that cannot be split): its
            pass over large data may cost more than one step per value.
        numeric: whether this node or one reached from it compares numbers
            (`multipleOf`, `minimum` & co.): the engine then converts each int,
            at a cost that grows with its digits.
    """

    schema: Any
    validator: Any
    properties: Mapping[str, ValueNode] = attrs.field(factory=dict)
    prefix_items: tuple[ValueNode, ...] = ()
    items: ValueNode | None = None
    closed: bool = False
    integer: bool = False
    casts: bool = False
    integer_keys: tuple[str, ...] = ()
    deeper_keys: tuple[tuple[str, ValueNode], ...] = ()
    keyed: bool = False
    assertions: tuple[tuple[str, Any], ...] = ()
    children_valid: Any = None
    items_valid: Any = None
    pattern_nodes: tuple[tuple[Any, ValueNode], ...] = ()
    additional: ValueNode | None = None
    all_of: tuple[ValueNode, ...] = ()
    any_of: tuple[ValueNode, ...] = ()
    one_of: tuple[ValueNode, ...] = ()
    not_: ValueNode | None = None
    if_: ValueNode | None = None
    then: ValueNode | None = None
    else_: ValueNode | None = None
    dependent: tuple[tuple[str, ValueNode], ...] = ()
    opaque: bool = False
    unevaluated: tuple[tuple[str, ValueNode], ...] = ()
    plain: bool = True
    python_checks: bool = False
    branching: bool = False
    numeric: bool = False

    def links(self) -> list[ValueNode]:
        """Every node a value accepted here may also be read through (not `not`)."""
        found = [*self.properties.values(), *self.prefix_items]
        found.extend(node for _, node in self.pattern_nodes)
        found.extend(self.all_of)
        found.extend(self.any_of)
        found.extend(self.one_of)
        found.extend(node for _, node in self.dependent)
        found.extend(
            node
            for node in (self.items, self.additional, self.if_, self.then, self.else_)
            if node is not None
        )
        return found


def compile_schema(
    schema: Any,
    *,
    assert_formats: bool = True,
    registry: Any = None,
    exact: bool | None = None,
) -> Any:
    """Build a jsonschema-rs validator; `format` asserted (input) or annotation.

    `multipleOf` is decided on decimals wherever the schema (or, with `exact`,
    the document a registry holds, rewritten by `decimal_multiples`) uses it; a
    schema without it is built without custom keywords, which the engine checks
    faster. Nothing is ever fetched: a reference to another document fails to
    build.
    """
    options: dict[str, Any] = {}
    if exact is None and _uses_multiple_of(schema):
        schema = decimal_multiples(schema)
        exact = True
    if exact:
        options["keywords"] = {KEYWORD: DecimalMultipleOf}
        if registry is None:  # the rewritten keywords refer to `INTEGER`
            registry = jsonschema_rs.Registry(
                [integer_resource()], retriever=refuse_retrieval
            )
    if registry is not None:
        options["registry"] = registry
    return jsonschema_rs.validator_for(
        schema,
        validate_formats=assert_formats,
        ignore_unknown_formats=not assert_formats,
        retriever=refuse_retrieval,
        **options,
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
    try:
        return _Builder(schema, validator).build()
    except jsonschema_rs.ReferencingError as error:
        raise ValueError(f"a reference cannot be resolved: {error}") from error


class _Builder:
    """Builds every node of one document once (a `$ref` cycle reuses its node)."""

    def __init__(self, document: Any, validator: Any) -> None:
        self.document = document
        self.root_validator = validator
        self.exact = _uses_multiple_of(document)
        keywords: dict[str, Any] | None = (
            {KEYWORD: DecimalMultipleOf} if self.exact else None
        )
        compiled: Any = decimal_multiples(document) if self.exact else document
        resources = [(_URN, compiled)]
        if self.exact:
            resources.append(integer_resource())
        self.registry = jsonschema_rs.Registry(resources, retriever=refuse_retrieval)
        self.validators = jsonschema_rs.validator_map_for(
            compiled,
            validate_formats=True,
            ignore_unknown_formats=False,
            keywords=keywords,
            retriever=refuse_retrieval,
            registry=self.registry,
        )
        self.local_refs = not _has_nested_identifiers(document)
        self.nodes: dict[int, ValueNode] = {}
        self.built: list[ValueNode] = []

    def build(self) -> ValueNode:
        root = self.node(self.document, "")
        root.validator = self.root_validator
        _settle(self.built)
        return root

    def node(self, schema: object, pointer: str) -> ValueNode:
        """The node of `schema` at `pointer` (built once per schema object)."""
        known = self.nodes.get(id(schema))
        if known is not None:
            return known
        node = ValueNode(
            schema=schema,
            validator=self.validator(pointer),
            python_checks=self.exact,
        )
        self.nodes[id(schema)] = node
        self.built.append(node)
        if isinstance(schema, dict):
            self.fill(node, schema, pointer)
        return node

    def validator(self, pointer: str) -> Any:
        """The validator of the position at `pointer`, references resolved."""
        found = self.validators.get("#" + pointer)
        if found is not None:
            return found
        return compile_schema(
            self.reference(pointer), registry=self.registry, exact=self.exact
        )

    def reference(self, pointer: str) -> dict[str, str]:
        """A schema that stands for the position at `pointer` of the document."""
        return {"$ref": f"{_URN}#{quote(pointer, safe=_FRAGMENT_SAFE)}"}

    def fill(self, node: ValueNode, schema: dict[str, Any], pointer: str) -> None:
        """Build the children, branches and checks of a dict schema."""
        at = _At(self, schema, pointer)
        node.properties = {
            str(name): at.child(sub, "properties", name)
            for name, sub in _mapping(schema.get("properties")).items()
        }
        node.prefix_items = tuple(
            at.child(sub, "prefixItems", index)
            for index, sub in enumerate(_list(schema.get("prefixItems")))
        )
        items = schema.get("items")
        node.items = at.child(items, "items") if _is_schema(items) else None
        node.pattern_nodes = tuple(
            (
                compile_schema({"pattern": pattern}),
                at.child(sub, "patternProperties", pattern),
            )
            for pattern, sub in _mapping(schema.get("patternProperties")).items()
        )
        additional = schema.get("additionalProperties")
        node.additional = (
            at.child(additional, "additionalProperties")
            if isinstance(additional, dict)
            else None
        )
        node.all_of = tuple(
            at.child(sub, "allOf", index)
            for index, sub in enumerate(_list(schema.get("allOf")))
        )
        node.any_of = tuple(
            at.child(sub, "anyOf", index)
            for index, sub in enumerate(_list(schema.get("anyOf")))
        )
        node.one_of = tuple(
            at.child(sub, "oneOf", index)
            for index, sub in enumerate(_list(schema.get("oneOf")))
        )
        node.not_ = at.optional("not")
        node.if_ = at.optional("if")
        if node.if_ is not None:
            node.then = at.optional("then")
            node.else_ = at.optional("else")
        node.dependent = tuple(
            (str(key), at.child(sub, "dependentSchemas", key))
            for key, sub in _mapping(schema.get("dependentSchemas")).items()
        )
        node.unevaluated = tuple(
            (keyword, child)
            for keyword in ("unevaluatedProperties", "unevaluatedItems")
            if (child := at.optional(keyword)) is not None
        )
        target = self.target(schema.get("$ref"))
        if target is not None:
            node.all_of = (*node.all_of, target)
        node.opaque = (
            any(keyword in schema for keyword in _OPAQUE)
            or ("$ref" in schema and target is None)
            or ("items" in schema and not _is_schema(schema.get("items")))
        )
        node.assertions = at.assertions()
        node.children_valid = at.children_valid()
        if isinstance(items, dict):
            node.items_valid = at.compiled({"items": at.by_reference("items")})
        node.closed = additional is False
        node.integer = _says_integer(_type_of(schema, self.document))
        node.plain = not (
            node.pattern_nodes
            or node.additional is not None
            or node.all_of
            or node.any_of
            or node.one_of
            or node.if_ is not None
            or node.dependent
            or node.opaque
        )

    def target(self, reference: object) -> ValueNode | None:
        """The node a local `$ref` leads to (None if not a document pointer)."""
        if not self.local_refs or not isinstance(reference, str):
            return None
        if reference != "#" and not reference.startswith("#/"):
            return None
        pointer = unquote(reference[1:])
        found = _pointer(self.document, pointer[1:]) if pointer else self.document
        if found is None or not _is_schema(found):
            return None
        return self.node(found, pointer)


class _At:
    """The builder at one dict schema position."""

    def __init__(self, builder: _Builder, schema: dict[str, Any], pointer: str) -> None:
        self.builder = builder
        self.schema = schema
        self.pointer = pointer

    def child(self, sub: object, *tokens: object) -> ValueNode:
        path = "".join("/" + _escape(str(token)) for token in tokens)
        return self.builder.node(sub, self.pointer + path)

    def optional(self, keyword: str) -> ValueNode | None:
        sub = self.schema.get(keyword)
        return self.child(sub, keyword) if _is_schema(sub) else None

    def by_reference(self, keyword: str) -> dict[str, str]:
        return self.builder.reference(f"{self.pointer}/{_escape(keyword)}")

    def assertions(self) -> tuple[tuple[str, Any], ...]:
        """One validator per assertion keyword (`required` is read in Python)."""
        schema = self.schema
        checks: list[tuple[str, Any]] = []
        for keyword, value in schema.items():
            if keyword in _ASSERTIONS:
                checks.append((keyword, compile_schema({keyword: value})))
            elif keyword == "propertyNames" and _is_schema(value):
                part = {keyword: self.by_reference(keyword)}
                checks.append((keyword, self.compiled(part)))
            elif keyword == "contains" and _is_schema(value):
                checks.extend(self.contains(value))
        if schema.get("additionalProperties") is False:
            closure = {
                "properties": dict.fromkeys(_mapping(schema.get("properties")), True),
                "patternProperties": dict.fromkeys(
                    _mapping(schema.get("patternProperties")), True
                ),
                "additionalProperties": False,
            }
            checks.append(("additionalProperties", compile_schema(closure)))
        return tuple(checks)

    def contains(self, value: object) -> list[tuple[str, Any]]:
        """`contains` with its bounds, each bound checked (and named) on its own."""
        del value
        schema = self.schema
        reference = self.by_reference("contains")
        least = schema.get("minContains", 1)
        name = "minContains" if "minContains" in schema else "contains"
        checks = [(name, self.compiled({"contains": reference, "minContains": least}))]
        if "maxContains" in schema:
            part = {
                "contains": reference,
                "minContains": 0,
                "maxContains": schema["maxContains"],
            }
            checks.append(("maxContains", self.compiled(part)))
        return checks

    def children_valid(self) -> Any:
        """A validator of the child keywords alone, or None if it cannot be built."""
        part: dict[str, Any] = {}
        for keyword in ("properties", "patternProperties"):
            mapping = _mapping(self.schema.get(keyword))
            if mapping:
                part[keyword] = {
                    name: self.builder.reference(
                        f"{self.pointer}/{keyword}/{_escape(str(name))}"
                    )
                    for name in mapping
                }
        for keyword in ("items", "additionalProperties"):
            if isinstance(self.schema.get(keyword), dict):
                part[keyword] = self.by_reference(keyword)
        prefix = _list(self.schema.get("prefixItems"))
        if prefix:
            part["prefixItems"] = [
                self.builder.reference(f"{self.pointer}/prefixItems/{index}")
                for index in range(len(prefix))
            ]
        if not part:
            return None
        return self.compiled(part)

    def compiled(self, part: dict[str, Any]) -> Any:
        try:
            return compile_schema(
                part, registry=self.builder.registry, exact=self.builder.exact
            )
        except _BUILD_ERRORS:
            return None


def _settle(nodes: list[ValueNode]) -> None:
    """Derive `casts`, `keyed`, `branching`, `numeric` and the cast lanes."""
    for node in nodes:
        node.branching = _branches_here(node)
        node.numeric = isinstance(node.schema, dict) and bool(
            _NUMERIC & node.schema.keys()
        )
    changed = True
    while changed:
        changed = False
        for node in nodes:
            links = node.links()
            casts = node.integer or any(link.casts for link in links)
            if node.not_ is not None:
                links.append(node.not_)
            below = [*node.properties.values(), *node.prefix_items]
            if node.items is not None:
                below.append(node.items)
            keyed = node.closed or any(child.keyed for child in below)
            branching = node.branching or any(link.branching for link in links)
            numeric = node.numeric or any(link.numeric for link in links)
            if (casts, keyed, branching, numeric) != (
                node.casts,
                node.keyed,
                node.branching,
                node.numeric,
            ):
                node.casts = node.casts or casts
                node.keyed = node.keyed or keyed
                node.branching = branching
                node.numeric = numeric
                changed = True
    for node in nodes:
        node.integer_keys = tuple(
            key
            for key, child in node.properties.items()
            if child.integer and child.plain and not _casts_below(child)
        )
        node.deeper_keys = tuple(
            (key, child)
            for key, child in node.properties.items()
            if child.casts and key not in node.integer_keys
        )


_NUMERIC = frozenset(
    {"multipleOf", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"}
)


def _branches_here(node: ValueNode) -> bool:
    """Whether the engine may read a value here more than once (see `branching`)."""
    return bool(
        node.any_of
        or node.one_of
        or node.if_ is not None
        or node.not_ is not None
        or node.opaque
        or node.dependent
        or len(node.all_of) > 1
        or len(node.pattern_nodes) > 1
    )


def _casts_below(node: ValueNode) -> bool:
    """Whether a node reached from `node` has something to cast."""
    return any(link.casts for link in node.links())


def _type_of(schema: dict[str, Any], document: object) -> object:
    """The `type` of a schema, following local `$ref` chains (`#/...`)."""
    seen = 0
    node: object = schema
    while isinstance(node, dict) and "type" not in node and seen < _REF_HOPS:
        reference = node.get("$ref")
        if not isinstance(reference, str) or not reference.startswith("#/"):
            return None
        node = _pointer(document, unquote(reference[2:]))
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


def _escape(token: str) -> str:
    """A JSON pointer token."""
    return token.replace("~", "~0").replace("/", "~1")


def _says_integer(kind: object) -> bool:
    """Whether a `type` keyword admits integers but not other numbers."""
    if kind == "integer":
        return True
    return isinstance(kind, list) and "integer" in kind and "number" not in kind


def _is_schema(value: object) -> bool:
    return isinstance(value, (dict, bool))


def _mapping(value: object) -> dict[Any, Any]:
    """The value if it is a dict, else an empty one."""
    return value if isinstance(value, dict) else {}


def _list(value: object) -> list[Any]:
    """The value if it is a list, else an empty one."""
    return value if isinstance(value, list) else []


def _uses_multiple_of(schema: object) -> bool:
    """Whether any dict in the schema has a `multipleOf` key (a keyword or not)."""
    stack: list[object] = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            if "multipleOf" in node:
                return True
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    return False


def _has_nested_identifiers(schema: object) -> bool:
    """Whether a schema below the root sets its own base (`$id`, anchors)."""
    stack: list[tuple[object, bool]] = [(schema, True)]
    while stack:
        node, top = stack.pop()
        if isinstance(node, dict):
            if not top and any(keyword in node for keyword in _REFERENCE_KEYWORDS):
                return True
            stack.extend((sub, False) for sub in node.values())
        elif isinstance(node, list):
            stack.extend((sub, False) for sub in node)
    return False
