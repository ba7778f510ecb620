from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.core.schema import (
    HeaderAnnotation,
    header_annotation_problems,
    header_annotations,
)


def schema(**properties):
    return {"type": "object", "properties": properties}


def test_annotations_are_read_along_properties_chains():
    read = header_annotations(
        schema(
            region={"type": "string", "x-mcp-header": "Region"},
            target={
                "type": "object",
                "properties": {"id": {"type": "integer", "x-mcp-header": "Target-Id"}},
            },
            flag={"type": "boolean", "x-mcp-header": "Flag"},
            plain={"type": "string"},
        )
    )
    assert read == (
        HeaderAnnotation("Flag", ("flag",), "boolean"),
        HeaderAnnotation("Region", ("region",), "string"),
        HeaderAnnotation("Target-Id", ("target", "id"), "integer"),
    )


def test_valid_annotations_have_no_problems():
    assert (
        header_annotation_problems(
            schema(region={"type": "string", "x-mcp-header": "Region"})
        )
        == []
    )


def test_a_header_must_be_a_token():
    for bad in ["", "Two Words", "a:b", "ü", 5]:
        problems = header_annotation_problems(
            schema(p={"type": "string", "x-mcp-header": bad})
        )
        assert problems == [
            "property 'p': x-mcp-header must be a non-empty RFC 9110 token"
        ]


def test_headers_are_unique_case_insensitively():
    problems = header_annotation_problems(
        schema(
            a={"type": "string", "x-mcp-header": "Region"},
            b={"type": "string", "x-mcp-header": "REGION"},
        )
    )
    assert len(problems) == 1
    assert "repeats the header" in problems[0]


def test_only_single_primitive_types_may_be_annotated():
    for kind in ["number", "object", "array", ["string", "null"], None]:
        node = {"x-mcp-header": "H"}
        if kind is not None:
            node["type"] = kind
        problems = header_annotation_problems(schema(p=node))
        assert problems == [
            (
                "property 'p': x-mcp-header needs a single 'type' of string,"
                " integer or boolean"
            )
        ]


def test_annotations_off_a_properties_chain_are_refused():
    annotated = {"type": "string", "x-mcp-header": "H"}
    for where in [
        {"type": "object", "x-mcp-header": "Root"},
        schema(list={"type": "array", "items": annotated}),
        schema(choice={"anyOf": [annotated]}),
        {"type": "object", "$defs": {"d": annotated}},
        schema(nested={"allOf": [schema(deep=annotated)]}),
    ]:
        problems = header_annotation_problems(where)
        assert len(problems) == 1
        assert "only a chain of 'properties' keys" in problems[0]
        assert header_annotations(where) == ()


def test_a_property_named_like_the_annotation_is_not_one():
    assert (
        header_annotation_problems(schema(**{"x-mcp-header": {"type": "string"}})) == []
    )


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: (
        st.lists(inner, max_size=3)
        | st.dictionaries(
            st.sampled_from(
                ["properties", "items", "anyOf", "type", "x-mcp-header", "a"]
            ),
            inner,
            max_size=4,
        )
    ),
    max_leaves=15,
)


@settings(max_examples=200, deadline=None)
@given(JSON)
def test_reading_and_checking_any_json_never_raises(schema):
    problems = header_annotation_problems(schema)
    assert all(isinstance(problem, str) for problem in problems)
    for annotation in header_annotations(schema):
        assert annotation.type in {"string", "integer", "boolean"}
