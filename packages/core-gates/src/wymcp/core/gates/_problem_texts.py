"""wymcp's own problem texts, one per failing keyword; none quotes a sent value.

A text is built from the failing keyword and the schema (its limit, its format, its
type list), never from the engine's message, which quotes the instance.
"""

from __future__ import annotations

import json
from types import MappingProxyType
from typing import Any

from wymcp.core.gates._bound import echo

UNCHECKABLE = "value could not be checked against the schema"
UNNAMED = (
    "value does not match the schema; it is too large or too deep for its"
    " problems to be named"
)
"""A refused value the walk does not read below (past `DEPTH` levels, or an
unsplittable position's value whose engine errors would weigh too much)."""


def problem_text(error: Any) -> str:
    """The problem text of one jsonschema-rs validation error."""
    kind = error.kind
    name = str(kind.name)
    keyword = _keyword(error.schema_path, name)
    try:
        detail = kind.as_dict()
    except (ValueError, TypeError, OverflowError):
        detail = {}
    if type(kind).__name__ == "Custom":
        return echo(str(detail.get("message") or UNCHECKABLE))
    return echo(_text(keyword, name, type(kind).__name__, detail))


def keyword_text(keyword: str, schema: dict[str, Any]) -> str:
    """The problem text of an assertion keyword of `schema` that failed."""
    value = schema.get(keyword)
    name = "contains" if keyword in _CONTAINS_TEXTS else keyword
    detail: dict[str, Any] = {
        "limit": value,
        "types": value if isinstance(value, list) else [value],
        "multiple_of": value,
        "format": value,
        "options": value if isinstance(value, list) else [],
        "expected_value": value,
        "pattern": value,
    }
    return echo(_text(keyword, name, "OneOfNotValid", detail))


def _keyword(schema_path: list[Any], name: str) -> str:
    """The schema keyword that failed: the last keyword position of the schema path.

    A property name or an index after an applicator is skipped, so a property named
    like a keyword is never read as one.
    """
    keyword = name
    index = 0
    while index < len(schema_path):
        token = schema_path[index]
        keyword = str(token)
        index += 2 if token in _NAMED_KEYWORDS else 1
    return keyword


_NAMED_KEYWORDS = frozenset(
    {
        "properties",
        "patternProperties",
        "dependentSchemas",
        "dependentRequired",
        "$defs",
        "definitions",
        "prefixItems",
        "allOf",
        "anyOf",
        "oneOf",
    }
)


def _number(value: object) -> str:
    """Spell a schema number as JSON does."""
    try:
        return json.dumps(value)
    except (TypeError, ValueError):
        return str(value)


def _text(keyword: str, name: str, kind: str, detail: dict[str, Any]) -> str:  # noqa: C901, PLR0911, PLR0912 - one branch per keyword is the list of texts
    """Choose the text for a keyword."""
    limit = detail.get("limit")
    if name == "type":
        types = detail.get("types") or []
        return "value is not of type " + " or ".join(sorted(str(t) for t in types))
    if name == "required":
        return f"property '{detail.get('property', '')}' is required"
    if name in _LIMIT_TEXTS:
        return _LIMIT_TEXTS[name].format(_number(limit))
    if name == "multipleOf":
        return f"value is not a multiple of {_number(detail.get('multiple_of'))}"
    if name == "format":
        return f"value does not respect the '{detail.get('format', '')}' format"
    if name == "enum":
        options = detail.get("options") or []
        return "value must be one of the enum values: " + " or ".join(
            _number(option) for option in options
        )
    if name == "const":
        return f"value should be {_number(detail.get('expected_value'))}"
    if name == "pattern":
        return f"value does not conform to pattern /{detail.get('pattern', '')}/"
    if name in _OBJECT_KEYWORDS:
        return _OBJECT_KEYWORDS[name]
    if name == "falseSchema" and keyword in _OBJECT_KEYWORDS:
        return _OBJECT_KEYWORDS[keyword]
    if name == "oneOf":
        if kind == "OneOfMultipleValid":
            return "value matches more than one schema of oneOf"
        return "value matches no schema of oneOf"
    if name == "contains":
        return _CONTAINS_TEXTS.get(keyword, _CONTAINS_TEXTS["contains"])
    if name in _FIXED_TEXTS:
        return _FIXED_TEXTS[name]
    if name in {"backtrackLimitExceeded", "regexEngineFailure"}:
        return "value could not be checked against pattern"
    return f"value does not respect the '{keyword}' keyword"


_LIMIT_TEXTS = MappingProxyType(
    {
        "minimum": "value is lower than minimum {}",
        "maximum": "value is higher than maximum {}",
        "exclusiveMinimum": "value is not higher than exclusive minimum {}",
        "exclusiveMaximum": "value is not lower than exclusive maximum {}",
        "minLength": "value length must be at least {}",
        "maxLength": "value length must be at most {}",
        "minItems": "value should have at least {} items",
        "maxItems": "value should have at most {} items",
        "minProperties": "value must have at least {} properties",
        "maxProperties": "value must have at most {} properties",
        "additionalItems": "value has more items than the schema allows",
    }
)
_OBJECT_KEYWORDS = MappingProxyType(
    {
        "additionalProperties": (
            "value has properties additionalProperties does not allow"
        ),
        "patternProperties": "value has properties patternProperties does not allow",
        "propertyNames": "value has property names propertyNames does not allow",
        "unevaluatedProperties": (
            "value has properties unevaluatedProperties does not allow"
        ),
        "unevaluatedItems": "value has items unevaluatedItems does not allow",
    }
)
_CONTAINS_TEXTS = MappingProxyType(
    {
        "contains": "value must contain an item matching contains",
        "minContains": "value has fewer items matching contains than minContains",
        "maxContains": "value has more items matching contains than maxContains",
    }
)
_FIXED_TEXTS = MappingProxyType(
    {
        "uniqueItems": "value must contain unique items",
        "anyOf": "value matches no schema of anyOf",
        "not": "value must not match the schema of not",
        "falseSchema": "no value is allowed here",
        "contentEncoding": "value does not respect contentEncoding",
        "contentMediaType": "value does not respect contentMediaType",
        "referencing": "the schema's reference could not be resolved",
    }
)
