from wymcp.core.schema import Action
from wymcp.core.schema._action_checks import action_problems, json_problems


def test_json_problems_name_the_first_term_json_cannot_carry():
    assert json_problems("x", {"a": [1, 2.5, "s", None, True, (1, 2)]}) == []
    assert json_problems("x", {"a": {1: 2}}) == [
        "x holds a non-string key, which JSON cannot carry"
    ]
    assert json_problems("x", [float("inf")]) == [
        "x holds inf, which JSON cannot carry"
    ]
    assert json_problems("x", [b"bytes"]) == [
        "x holds a bytes, which JSON cannot carry"
    ]


def test_a_sound_action_has_no_problems_and_may_be_built():
    found: list[str] = []
    verdict = action_problems(
        Action(
            description="d",
            properties={"a": {}, "b": {}},
            required=["a"],
            required_one_of=[["a"], ["b"]],
            defaults={"b": 1},
            notes="n",
            related=["x"],
            examples=[{"a": 1}],
        ),
        found,
    )
    assert found == []
    assert verdict.properties
    assert verdict.defaults


def test_broken_properties_stop_the_declared_name_checks():
    found: list[str] = []
    verdict = action_problems(
        Action(description="d", properties="nope", required=["a"]),  # type: ignore[arg-type]
        found,
    )
    assert found == ["properties must be a mapping of property names to JSON Schemas"]
    assert not verdict.properties
    assert not verdict.defaults
