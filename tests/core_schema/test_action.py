import attrs
import pytest

from wymcp.core.schema import Action


def test_an_action_takes_its_fields_by_keyword_and_freezes_lists():
    action = Action(
        description="Create a task",
        properties={"title": {"type": "string"}},
        required=["title"],
        required_one_of=[["title"]],
        related=["list"],
        examples=[{"title": "x"}],
    )
    assert action.required == ("title",)
    assert action.required_one_of == (("title",),)
    assert action.related == ("list",)
    assert action.examples == ({"title": "x"},)
    assert action.defaults == {}
    assert action.notes is None


def test_an_unknown_field_is_refused():
    with pytest.raises(TypeError, match="example"):
        Action(description="d", properties={}, example={})  # type: ignore[call-arg]


def test_fields_are_keyword_only_and_description_and_properties_are_required():
    with pytest.raises(TypeError):
        Action("d", {})  # type: ignore[misc]
    with pytest.raises(TypeError):
        Action(description="d")  # type: ignore[call-arg]


def test_an_action_is_frozen():
    action = Action(description="d", properties={})
    with pytest.raises(attrs.exceptions.FrozenInstanceError):
        action.description = "other"  # type: ignore[misc]
