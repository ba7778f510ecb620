from wymcp.core.schema import Tool, prepare


class Report(Tool):
    name = "report"
    description = "Report."
    output_schema = {  # noqa: RUF012 - the pinned declaration style
        "type": "object",
        "properties": {"count": {"type": "integer"}},
        "required": ["count"],
    }

    async def run(self, arguments, ctx):
        return {"count": 1}


class Silent(Tool):
    name = "silent"
    description = "No output schema."

    async def run(self, arguments, ctx):
        return None


def test_validate_output_names_each_problem_by_its_location():
    spec = prepare(Report)
    assert spec.output_schema == Report.output_schema
    assert spec.validate_output({"count": 1}) == []
    assert spec.validate_output({}) == ['/: required ("count" is a required property)']
    assert spec.validate_output({"count": "x"})[0].startswith("/count: type")


def test_without_an_output_schema_everything_is_valid():
    spec = prepare(Silent)
    assert spec.output_schema is None
    assert spec.validate_output(object()) == []


def test_a_value_the_engine_cannot_read_is_a_problem_not_an_error():
    assert prepare(Report).validate_output({"count": {1, 2}}) == [
        "the value cannot be checked as JSON: ValueError"
    ]
