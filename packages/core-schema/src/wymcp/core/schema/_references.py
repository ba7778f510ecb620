"""Where a schema's references lead: registration refuses any that leaves the schema.

wymcp never fetches a schema: a `$ref` to another document (`http://...`, a
relative file name) is refused before the engine compiles anything, and the
engine's retriever (`refuse_retrieval`) refuses whatever would still reach it.
"""

from __future__ import annotations

from typing import NoReturn
from urllib.parse import urldefrag, urljoin

from wymcp.core.schema._echo_limit import ECHO_LIMIT

_REFERENCES = ("$ref", "$dynamicRef", "$recursiveRef")
_DATA = frozenset({"enum", "const", "default", "examples"})
"""Keywords whose values are data, not schemas: a `$ref` key there is a value."""
_NAMED = frozenset(
    {"properties", "patternProperties", "$defs", "definitions", "dependentSchemas"}
)
"""Keywords whose values map names to schemas (a name there is not a keyword)."""


def outside_references(schema: object, *, named: bool = False) -> list[str]:
    """The references of `schema` leading to a document it does not hold, in order.

    With `named`, `schema` maps names to schemas (an action's `properties`).
    A reference resolves against the `$id` in scope (RFC 3986); it stays inside
    when it lands on the document itself or on a resource a `$id` declares in it.
    """
    declared: set[str] = {""}
    found: list[tuple[str, str]] = []
    stack: list[tuple[object, str, bool]] = [(schema, "", named)]
    while stack:
        node, base, names = stack.pop()
        if isinstance(node, list):
            stack.extend((item, base, False) for item in reversed(node))
        elif isinstance(node, dict) and names:  # names to schemas, no keywords
            stack.extend((value, base, False) for value in reversed(node.values()))
        elif isinstance(node, dict):
            identifier = node.get("$id")
            if isinstance(identifier, str):
                base = urldefrag(urljoin(base, identifier)).url
                declared.add(base)
            for keyword in _REFERENCES:
                reference = node.get(keyword)
                if isinstance(reference, str):
                    found.append((urldefrag(urljoin(base, reference)).url, reference))
            stack.extend(
                (value, base, key in _NAMED)
                for key, value in reversed(node.items())
                if key not in _DATA and isinstance(value, (dict, list))
            )
    return [reference for target, reference in found if target not in declared]


def outside_problem(where: str, reference: str) -> str:
    """The registration problem of one reference that leaves the schema."""
    shown = reference if len(reference) <= ECHO_LIMIT else reference[:ECHO_LIMIT] + "…"
    return (
        f"{where}: the reference {shown!r} leads outside the schema, and wymcp never"
        " fetches a schema; put it under $defs and refer to it as '#/$defs/name'"
    )


def refuse_retrieval(uri: str, /) -> NoReturn:
    """The engine's retriever: every document outside the schema is refused."""
    shown = uri if len(uri) <= ECHO_LIMIT else uri[:ECHO_LIMIT] + "…"
    raise ValueError(f"wymcp never fetches a schema ({shown})")
