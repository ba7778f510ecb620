"""`multipleOf` decides on the decimal a JSON number spells, at any size and cheaply.

The official suite's cases are transcribed in `data/multiple_of_suite.json` (its
`source` names the commit); the property tests compare the gate with `Decimal`
arithmetic on the text a client sends.
"""

import json
from decimal import Decimal
from fractions import Fraction
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.core.gates import _check, check, check_fast
from wymcp.core.schema import Action, Tool, multiple_of_problem, prepare
from wymcp.core.schema._value_root import compile_schema

SUITE = json.loads(
    (Path(__file__).parent / "data" / "multiple_of_suite.json").read_text("utf-8")
)


def tool_of(schema, *, defaults=None):
    class Priced(Tool):
        name = "priced"
        description = "Numbers under multipleOf."
        actions = {  # noqa: RUF012 - the pinned declaration style
            "go": Action(
                description="Go",
                properties={"n": schema},
                defaults=defaults or {},
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    return prepare(Priced)


def suite_cases():
    for group in SUITE["cases"]:
        schema = {k: v for k, v in group["schema"].items() if k != "$schema"}
        for case in group["tests"]:
            yield pytest.param(
                schema,
                case["data"],
                case["valid"],
                id=f"{group['description']}: {case['description']}",
            )


@pytest.mark.parametrize(("schema", "data", "valid"), list(suite_cases()))
def test_the_official_suite(schema, data, valid):
    assert compile_schema(schema).is_valid(data) is valid
    assert check(tool_of(schema), "go", {"n": data}).accepted is valid


def test_the_suite_file_names_its_source():
    assert "JSON-Schema-Test-Suite" in SUITE["source"]
    assert len(list(suite_cases())) >= 12


@pytest.mark.parametrize(
    ("factor", "sent"),
    [
        (0.01, [100, 10, 1.5, 2.25, 12.34, 19.99, 0.07, 1e15, 10**30]),
        (0.1, [1, 0.5, 2.5, 0.3, 0.7, -1.1]),
        (0.0001, [0.0075]),
        (1.5, [4.5, -4.5, 3, 0]),
        (2.5, [5 * 3**50, 7.5e300]),
    ],
)
def test_exact_decimal_multiples_are_accepted(factor, sent):
    spec = tool_of({"type": "number", "multipleOf": factor})
    for value in sent:
        assert check(spec, "go", {"n": value}).accepted, value
    assert check(spec, "go", {"n": 0}).accepted


@pytest.mark.parametrize(
    ("factor", "sent"),
    [
        (0.01, [0.015, 1.005, 0.30000000000000004, 12.345]),
        (0.1, [0.05, 1.01]),
        (0.0001, [0.00751]),
        (1.5, [35, 1, 2.25]),
        (3, [2**70 + 1, 1.1060260653197888e18, 1.5]),
    ],
)
def test_non_multiples_are_refused_naming_the_factor(factor, sent):
    spec = tool_of({"type": "number", "multipleOf": factor})
    for value in sent:
        refusal = check(spec, "go", {"n": value}).refusal
        assert refusal is not None, value
        assert refusal["errors"] == [
            {"path": "data.n", "problems": [f"value is not a multiple of {factor!r}"]}
        ]


def test_a_float_default_that_is_a_decimal_multiple_registers():
    spec = tool_of({"type": "number", "multipleOf": 0.01}, defaults={"n": 1.5})
    assert check(spec, "go", {}).data == {"n": 1.5}


def test_integers_with_a_decimal_factor_are_exact_at_any_size():
    spec = tool_of({"type": "integer", "multipleOf": 0.75})  # 3/4: multiples of 3
    assert check(spec, "go", {"n": 3 * 10**40}).accepted
    assert not check(spec, "go", {"n": 3 * 10**40 + 1}).accepted


# Property tests: the text a client sends, decided as Decimal decides it.

DIGITS = st.integers(min_value=0, max_value=10**15 - 1)  # up to 15 significant


@st.composite
def number_texts(draw):
    """A JSON number text: an integer of any size, or up to 15 digits and a scale."""
    if draw(st.booleans()):
        return str(draw(st.integers(min_value=-(10**40), max_value=10**40)))
    sign = draw(st.sampled_from(["", "-"]))
    return f"{sign}{draw(DIGITS)}e{draw(st.integers(min_value=-25, max_value=25))}"


@st.composite
def factor_texts(draw):
    """A positive factor text: up to 6 digits and a scale, or an integer."""
    if draw(st.booleans()):
        return str(draw(st.integers(min_value=1, max_value=10**20)))
    digits = draw(st.integers(min_value=1, max_value=999_999))
    return f"{digits}e{draw(st.integers(min_value=-12, max_value=4))}"


def decimal_multiple(value_text, factor_text):
    quotient = Fraction(Decimal(value_text)) / Fraction(Decimal(factor_text))
    return quotient.denominator == 1


@settings(max_examples=2000, deadline=None)
@given(number_texts(), factor_texts())
def test_the_decision_is_decimal_arithmetic_on_the_sent_text(value_text, factor_text):
    value, factor = json.loads(value_text), json.loads(factor_text)
    expected = decimal_multiple(value_text, factor_text)
    assert (multiple_of_problem(value, factor) is None) is expected
    assert compile_schema({"multipleOf": factor}).is_valid(value) is expected


@settings(max_examples=300, deadline=None)
@given(number_texts(), factor_texts())
def test_the_gate_decides_as_decimal_arithmetic(value_text, factor_text):
    value, factor = json.loads(value_text), json.loads(factor_text)
    spec = tool_of({"multipleOf": factor})
    verdict = check(spec, "go", {"n": value})
    assert verdict.accepted is decimal_multiple(value_text, factor_text)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(st.integers(min_value=0, max_value=10**6), min_size=1, max_size=40),
    st.sampled_from(["0.01", "0.25", "1.5", "7", "1e-3"]),
)
def test_an_array_is_decided_item_by_item(cents, factor_text):
    # repeated and distinct items, accepted and refused, each decided as Decimal does
    texts = [f"{c}e-2" for c in cents] + [f"{c}e-3" for c in cents]
    factor = json.loads(factor_text)
    expected = [decimal_multiple(t, factor_text) for t in texts]
    spec = tool_of({"type": "array", "items": {"multipleOf": factor}})
    verdict = check(spec, "go", {"n": [json.loads(t) for t in texts]})
    assert verdict.accepted is all(expected)
    if not verdict.accepted:
        assert verdict.refusal["error_count"] == expected.count(False)


def test_the_fast_check_leaves_many_python_decisions_to_the_thread(monkeypatch):
    # check_fast runs on the event loop: past FAST_WORK numbers decided in Python it
    # answers None (the server then runs check in a worker thread), which accepts.
    # (FAST_WORK made smaller: data past SLICE units is the thread's anyway.)
    monkeypatch.setattr(_check, "FAST_WORK", 1_000)
    spec = tool_of({"type": "array", "items": {"multipleOf": 0.01}})
    many = [round(0.01 * i + 0.5, 2) for i in range(2_000)]
    assert check_fast(spec, "go", {"n": many}) is None
    assert check(spec, "go", {"n": many}).accepted
    few = many[:100]
    assert check_fast(spec, "go", {"n": few}).accepted
    integers = list(range(0, 8_000, 2))  # decided by the engine alone
    assert check_fast(spec, "go", {"n": integers}).accepted


@st.composite
def whole_number_texts(draw):
    """An integer text, or a whole number written with an exponent (a float)."""
    if draw(st.booleans()):
        return str(draw(st.integers(min_value=-(10**40), max_value=10**40)))
    return f"{draw(DIGITS)}e{draw(st.integers(min_value=0, max_value=30))}"


@settings(max_examples=1000, deadline=None)
@given(whole_number_texts(), st.integers(min_value=1, max_value=10**20))
def test_an_integer_schema_with_an_integer_factor_is_decided_by_the_engine_exactly(
    value_text, factor
):
    # "type": "integer" with an integer factor is left to the engine alone: it too
    # decides on the decimal the text spells.
    value = json.loads(value_text)
    expected = decimal_multiple(value_text, str(factor))
    schema = {"type": "integer", "multipleOf": factor}
    assert compile_schema(schema).is_valid(value) is expected
