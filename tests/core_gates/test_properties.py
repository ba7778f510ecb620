"""Property tests: the oracle's decisions, no raise, small refusals."""

import json
import re
from decimal import Decimal
from fractions import Fraction
from urllib.parse import quote

import jsonschema
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from wymcp.core.gates import _value_gate, check
from wymcp.core.gates._value_gate import value_errors
from wymcp.core.schema import Action, Tool, close_properties, prepare

SETTINGS = settings(
    max_examples=100,
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
)
NAMES = st.sampled_from(["a", "b", "c", "0", "a.b", "x y", "xa"])
JSON_SCALARS = (
    st.none()
    | st.booleans()
    | st.integers(min_value=-(10**20), max_value=10**20)
    | st.floats(min_value=-1e12, max_value=1e12)
    | st.integers(min_value=2**53, max_value=2**70)
    | st.floats(min_value=2.0**53, max_value=2.0**70)
    | st.sampled_from([1.1060260653197889e18, 2.0**60 * 3, 3 * 2**64 + 1])
    | st.sampled_from([2.0, 0.0, -3.0])
    | st.text(max_size=8)
    | st.sampled_from(["2026-07-28", "tomorrow", "abc", "a", ""])
)
JSON_VALUES = st.recursive(
    JSON_SCALARS,
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(NAMES | st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


def leaf_schemas():
    return st.one_of(
        st.builds(
            lambda extra: {"type": "string", **extra},
            st.fixed_dictionaries(
                {},
                optional={
                    "minLength": st.integers(0, 3),
                    "maxLength": st.integers(0, 5),
                    "pattern": st.sampled_from(["^a", "b$", "^[a-z]*$"]),
                    "format": st.just("date"),
                    "enum": st.just(["a", "abc", "2026-07-28"]),
                },
            ),
        ),
        st.builds(
            lambda kind, extra: {"type": kind, **extra},
            st.sampled_from(["integer", "number"]),
            st.fixed_dictionaries(
                {},
                optional={
                    "minimum": st.integers(-5, 5),
                    "maximum": st.integers(-5, 100),
                    "exclusiveMinimum": st.integers(-5, 5),
                    "multipleOf": st.integers(1, 4),
                },
            ),
        ),
        st.sampled_from(
            [
                {"type": "boolean"},
                {"type": "null"},
                {"type": ["integer", "null"]},
                {},
                {"const": 2},
                {"not": {"type": "string"}},
            ]
        ),
    )


def schemas():
    return st.recursive(
        leaf_schemas(),
        lambda inner: st.one_of(
            st.builds(
                lambda props, req, more: {
                    "type": "object",
                    "properties": props,
                    "required": [k for k in req if k in props],
                    **more,
                },
                st.dictionaries(NAMES, inner, max_size=3),
                st.lists(NAMES, max_size=2, unique=True),
                st.fixed_dictionaries(
                    {},
                    optional={
                        "additionalProperties": st.booleans(),
                        "minProperties": st.integers(0, 2),
                    },
                ),
            ),
            st.builds(
                lambda items, more: {"type": "array", "items": items, **more},
                inner,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "maxItems": st.integers(0, 3),
                        "minItems": st.integers(0, 2),
                        "uniqueItems": st.booleans(),
                    },
                ),
            ),
            st.builds(
                lambda branches: {"anyOf": branches},
                st.lists(inner, min_size=1, max_size=2),
            ),
            st.builds(
                lambda branches: {"allOf": branches},
                st.lists(inner, min_size=1, max_size=2),
            ),
            st.builds(
                lambda branches: {"oneOf": branches},
                st.lists(inner, min_size=1, max_size=2),
            ),
            st.builds(
                lambda first, rest, more: {
                    "type": "array",
                    "prefixItems": [first],
                    "items": rest,
                    **more,
                },
                inner,
                inner,
                st.fixed_dictionaries(
                    {},
                    optional={
                        "contains": inner,
                        "minContains": st.integers(0, 2),
                        "maxContains": st.integers(1, 2),
                    },
                ),
            ),
            st.builds(
                lambda test, then, otherwise: {
                    "if": test,
                    "then": then,
                    "else": otherwise,
                },
                inner,
                inner,
                inner,
            ),
            st.builds(
                lambda dependent, names: {
                    "type": "object",
                    "dependentSchemas": {"a": dependent},
                    "propertyNames": names,
                },
                inner,
                st.sampled_from([{"maxLength": 2}, {"pattern": "^[a-c]"}, {}]),
            ),
            st.builds(lambda negated: {"not": negated}, inner),
            st.builds(
                lambda props, patterned, extra: {
                    "type": "object",
                    "properties": props,
                    "patternProperties": {"^x": patterned},
                    "dependentRequired": {"a": ["b"]},
                    **extra,
                },
                st.dictionaries(NAMES, inner, max_size=2),
                inner,
                st.fixed_dictionaries({}, optional={"additionalProperties": inner}),
            ),
        ),
        max_leaves=6,
    )


def make_tool(properties, required, groups=()):
    class Generated(Tool):
        name = "generated"
        description = "Generated."
        actions = {  # noqa: RUF012 - the pinned declaration style
            "go": Action(
                description="Go",
                properties=properties,
                required=required,
                required_one_of=[[name] for name in groups],
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    return Generated


def guided(schema):
    """Values shaped like the schema (objects, arrays, branches), so many pass."""
    if not isinstance(schema, dict):
        return JSON_VALUES
    if "properties" in schema:
        return st.fixed_dictionaries(
            {},
            optional={key: guided(sub) for key, sub in schema["properties"].items()},
        )
    if schema.get("type") == "array":
        return st.lists(guided(schema.get("items")), max_size=4)
    branches = schema.get("anyOf") or schema.get("allOf")
    if branches:
        return st.one_of([guided(branch) for branch in branches])
    return JSON_SCALARS


def closed_root(properties, required):
    return {
        "type": "object",
        "properties": close_properties(properties),
        "additionalProperties": False,
        "required": required,
    }


def references(names):
    """A schema that reaches a sibling property's schema through `$ref`."""
    pointers = st.sampled_from(
        [
            f"#/properties/{quote(name.replace('~', '~0').replace('/', '~1'))}"
            for name in names
        ]
    )
    return st.one_of(
        st.builds(lambda pointer: {"$ref": pointer}, pointers),
        st.builds(
            lambda pointer: {"type": "array", "items": {"$ref": pointer}}, pointers
        ),
        st.builds(
            lambda pointer: {"additionalProperties": {"$ref": pointer}}, pointers
        ),
        st.builds(
            lambda pointer: {"anyOf": [{"$ref": pointer}, {"type": "null"}]},
            pointers,
        ),
    )


@st.composite
def tools_and_data(draw):
    properties = draw(st.dictionaries(NAMES, schemas(), max_size=3))
    if properties and draw(st.booleans()):
        properties["r"] = draw(references(sorted(properties)))
    names = sorted(properties)
    required = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    groups = draw(st.lists(st.sampled_from(names), unique=True)) if names else []
    groups = [name for name in groups if name not in required]
    arbitrary = st.dictionaries(NAMES, JSON_VALUES, max_size=4) | st.fixed_dictionaries(
        dict.fromkeys(properties, JSON_VALUES)
    )
    if draw(st.booleans()):
        data = draw(guided({"properties": properties}))
    else:
        data = draw(arbitrary)
    return properties, required, groups, data


def _decimal(number):
    """The decimal JSON writes for a number (a float: its shortest repr)."""
    return (
        Fraction(number) if isinstance(number, int) else Fraction(Decimal(repr(number)))
    )


def _decimal_multiple_of(validator, factor, instance, schema):
    """`multipleOf` on the decimals JSON carries, as wymcp decides it."""
    del schema
    if not validator.is_type(instance, "number"):
        return
    if (_decimal(instance) / _decimal(factor)).denominator != 1:
        yield jsonschema.ValidationError("not a multiple")


DecimalOracle = jsonschema.validators.extend(
    jsonschema.Draft202012Validator, {"multipleOf": _decimal_multiple_of}
)


def oracle_accepts(properties, required, groups, data):
    validator = DecimalOracle(
        closed_root(properties, required),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    )
    grouped = not groups or any(name in data for name in groups)
    return grouped and validator.is_valid(data)


def request_dependent_size(refusal):
    part = {
        k: v for k, v in refusal.items() if k not in {"input_schema", "valid_actions"}
    }
    return len(json.dumps(part).encode())


@SETTINGS
@given(tools_and_data())
def test_the_gates_decide_as_the_oracle_does(case):
    properties, required, groups, data = case
    verdict = check(make_tool(properties, required, groups), "go", data)
    assert verdict.accepted == oracle_accepts(properties, required, groups, data), (
        verdict.refusal
    )


@SETTINGS
@given(tools_and_data(), st.booleans())
def test_check_never_raises_and_every_refusal_is_small_json(case, strict):
    properties, required, groups, data = case
    verdict = check(make_tool(properties, required, groups), "go", data, strict=strict)
    assert verdict.accepted == (verdict.refusal is None)
    if verdict.refusal is not None:
        assert json.loads(json.dumps(verdict.refusal)) == verdict.refusal
        assert request_dependent_size(verdict.refusal) <= 4096


@SETTINGS
@given(JSON_VALUES, st.text(max_size=3) | st.none())
def test_check_never_raises_on_any_json_data_or_action(data, action):
    verdict = check(make_tool({"a": {"type": "integer"}}, ["a"]), action, data)
    assert verdict.accepted == (verdict.refusal is None)


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.text(min_size=100, max_size=300)
        | st.text(alphabet="\x00\x01😀", min_size=100, max_size=300),
        min_size=11,
        max_size=15,
        unique=True,
    )
)
def test_a_refusal_stays_under_4_kib_whatever_keys_are_sent(keys):
    tool = make_tool({"a": {"type": "object", "properties": {}}}, [])
    for sent in (dict.fromkeys(keys, 1), {"a": dict.fromkeys(keys, 1)}):
        refusal = check(tool, "go", sent).refusal
        assert refusal["unknown_count"] == len(keys)
        assert request_dependent_size(refusal) <= 4096
    refusal = check(tool, "".join(keys), {}).refusal
    assert request_dependent_size(refusal) <= 4096


def test_a_hundred_thousand_wrong_items_give_a_small_refusal():
    tool = make_tool({"values": {"type": "array", "items": {"type": "number"}}}, [])
    refusal = check(tool, "go", {"values": ["x"] * 100_000}).refusal
    assert refusal["error_count"] == 100_000
    assert len(refusal["errors"]) == 10
    assert [entry["path"] for entry in refusal["errors"]][-1] == "data.values[9]"
    assert request_dependent_size(refusal) <= 4096


@settings(max_examples=25, deadline=None)
@given(
    st.lists(
        st.text(alphabet='\x00"😀\\', min_size=100, max_size=300),
        min_size=11,
        max_size=15,
        unique=True,
    )
)
def test_invalid_values_at_sent_keys_stay_under_4_kib(keys):
    tool = make_tool(
        {"m": {"type": "object", "additionalProperties": {"type": "integer"}}}, []
    )
    refusal = check(tool, "go", {"m": dict.fromkeys(keys, "x")}).refusal
    assert refusal["error_count"] == len(keys)
    assert request_dependent_size(refusal) <= 4096


def pruned(schema, value):
    """The oracle's lenient reading: drop keys a closed key set does not declare."""
    if not isinstance(schema, dict):
        return value
    if isinstance(value, dict):
        properties = schema.get("properties", {})
        patterns = list(schema.get("patternProperties", {}))
        kept = {
            key: sub
            for key, sub in value.items()
            if schema.get("additionalProperties") is not False
            or key in properties
            or any(re.search(pattern, key) for pattern in patterns)
        }
        return {
            key: pruned(properties[key], sub) if key in properties else sub
            for key, sub in kept.items()
        }
    if isinstance(value, list):
        prefix = schema.get("prefixItems", [])
        return [
            pruned(prefix[index] if index < len(prefix) else schema.get("items"), item)
            for index, item in enumerate(value)
        ]
    return value


@SETTINGS
@given(tools_and_data())
def test_lenient_mode_decides_as_the_oracle_does_on_the_pruned_data(case):
    properties, required, groups, data = case
    verdict = check(make_tool(properties, required, groups), "go", data, strict=False)
    root = {"type": "object", "properties": close_properties(properties)}
    root["additionalProperties"] = False
    expected = oracle_accepts(properties, required, groups, pruned(root, data))
    assert verdict.accepted == expected, verdict.refusal


def walks(data, path):
    """Whether every token of `path` is the instance's own: a key or an index."""
    node = data
    for token in path:
        if isinstance(node, list):
            if type(token) is not int or not 0 <= token < len(node):
                return False
            node = node[token]
        elif isinstance(node, dict):
            if type(token) is not str or token not in node:
                return False
            node = node[token]
        else:
            return False
    return True


@SETTINGS
@given(tools_and_data())
def test_every_refused_path_is_the_instances_own_keys_and_indexes(case):
    properties, required, groups, data = case
    root = prepare(make_tool(properties, required, groups)).actions["go"].root
    report = value_errors(root, data)
    accepted = jsonschema.Draft202012Validator(
        closed_root(properties, []),
        format_checker=jsonschema.Draft202012Validator.FORMAT_CHECKER,
    ).is_valid(data)
    assert (report is None) == accepted
    if report is not None:
        assert report.count >= len(report.entries) >= 1
        for path, problems in report.entries:
            assert walks(data, path), path
            assert 1 <= len(problems) <= 11


def same_values(sent, read):
    """Equal value for value; a float may only have become the int it writes.

    A whole float past 2**53 becomes the int of its shortest repr's digits
    (the number as JSON carries it), not of its binary value.
    """
    if isinstance(sent, dict):
        return (
            isinstance(read, dict)
            and sent.keys() == read.keys()
            and all(same_values(sent[key], read[key]) for key in sent)
        )
    if isinstance(sent, list):
        return (
            isinstance(read, list)
            and len(sent) == len(read)
            and all(same_values(a, b) for a, b in zip(sent, read, strict=True))
        )
    if type(sent) is float and type(read) is int:
        return sent.is_integer() and int(Decimal(repr(sent))) == read
    return type(sent) is type(read) and sent == read


@SETTINGS
@given(tools_and_data())
@example(({"a": {"type": ["integer", "null"]}}, [], [], {"a": 2.029728783913171e16}))
def test_accepted_data_is_the_sent_data_with_only_whole_floats_cast(case):
    properties, required, groups, data = case
    verdict = check(make_tool(properties, required, groups), "go", data)
    if verdict.accepted:
        assert same_values(data, verdict.data)


@st.composite
def many_items(draw):
    schema = draw(schemas())
    values = draw(st.lists(guided(schema) | JSON_VALUES, min_size=11, max_size=30))
    return {"xs": {"type": "array", "items": schema}}, {"xs": values}


@SETTINGS
@given(many_items())
def test_the_counting_lane_counts_what_the_full_walk_counts(case):
    properties, data = case
    root = prepare(make_tool(properties, [])).actions["go"].root
    report = value_errors(root, data)
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(_value_gate, "FIRST", 10**9)
        full = value_errors(root, data)
    assert (report is None) == (full is None)
    if report is not None:
        assert report.count == full.count
        assert report.entries == full.entries[:10]
