import json

import pytest

from wymcp.core.gates import Verdict, _check, check, check_fast
from wymcp.core.schema import Action, ConfigurationError, Tool, prepare

ITEM = {
    "type": "object",
    "properties": {
        "sku": {"type": "string", "minLength": 1},
        "qty": {"type": "integer", "minimum": 1},
    },
    "required": ["sku", "qty"],
}


class Orders(Tool):
    name = "orders"
    description = "Take orders."
    actions = {  # noqa: RUF012 - the pinned declaration style
        "place": Action(
            description="Place an order",
            properties={
                "customer": {"type": "string", "minLength": 1},
                "items": {"type": "array", "items": ITEM},
                "note": {"type": "string"},
                "rush": {"type": "boolean"},
                "when": {"type": "string", "format": "date"},
            },
            required=["customer", "items"],
            defaults={"rush": False},
        ),
        "find": Action(
            description="Find an order",
            properties={
                "id": {"type": "integer"},
                "customer": {"type": "string"},
                "day": {"type": "string"},
            },
            required_one_of=[["id"], ["customer", "day"]],
            defaults={"customer": "anyone"},
        ),
        "bare": Action(description="Take nothing", properties={}),
    }

    async def run_action(self, action, data, ctx):
        return data


class Lookup(Tool):
    name = "lookup"
    description = "Look something up."
    input_schema = {  # noqa: RUF012 - the pinned declaration style
        "type": "object",
        "properties": {
            "query": {"type": "string"},
            "limit": {"type": "integer", "maximum": 50},
        },
        "required": ["query"],
    }

    async def run(self, arguments, ctx):
        return arguments


def order(**extra):
    return {"customer": "c", "items": [{"sku": "a", "qty": 1}], **extra}


def test_an_accepted_call_carries_the_data_with_defaults_merged_after():
    verdict = check(Orders, "place", order())
    assert verdict == Verdict(
        accepted=True,
        data={"rush": False, "customer": "c", "items": [{"sku": "a", "qty": 1}]},
    )


def test_sent_data_wins_over_a_default():
    assert check(Orders, "place", order(rush=True)).data["rush"] is True


def test_whole_floats_become_integers_at_any_depth_without_touching_the_input():
    sent = {
        "customer": "c",
        "items": [{"sku": "a", "qty": 2.0}, {"sku": "b", "qty": 3}],
    }
    verdict = check(Orders, "place", sent)
    assert verdict.accepted
    qty = verdict.data["items"][0]["qty"]
    assert qty == 2
    assert type(qty) is int
    assert type(sent["items"][0]["qty"]) is float
    assert check(Orders, "find", {"id": 7.0}).data["id"] == 7


def test_a_fractional_float_where_the_schema_says_integer_is_refused():
    verdict = check(Orders, "find", {"id": 7.5})
    assert verdict.refusal["errors"] == [
        {"path": "data.id", "problems": ["value is not of type integer"]}
    ]


def test_data_none_means_an_empty_object():
    assert check(Orders, "bare", None).data == {}


def test_the_order_is_unknown_action_first():
    assert check(Orders, "nope", {"bogus": 1}).refusal["error"] == "unknown_action"


def test_unknown_keys_come_before_missing_required_fields():
    refusal = check(Orders, "place", {"bogus": 1}).refusal
    assert refusal["error"] == "unknown_params"


def test_missing_required_fields_come_before_missing_groups_and_values():
    refusal = check(Orders, "place", {"customer": 5}).refusal
    assert refusal["error"] == "missing_required_fields"
    assert refusal["missing"] == ["items"]


def test_missing_groups_come_before_values():
    refusal = check(Orders, "find", {"day": 5}).refusal
    assert refusal["error"] == "missing_required_group"


def test_defaults_never_satisfy_a_group():
    refusal = check(Orders, "find", {"day": "monday"}).refusal
    assert refusal["error"] == "missing_required_group"
    verdict = check(Orders, "find", {"customer": "x", "day": "monday"})
    assert verdict.accepted


def test_defaults_never_satisfy_required():
    class Defaulted(Orders):
        name = "defaulted"

    refusal = check(Defaulted, "place", {"items": []}).refusal
    assert refusal["missing"] == ["customer"]


def test_values_are_checked_as_sent_before_defaults():
    refusal = check(Orders, "place", order(rush="yes")).refusal
    assert refusal["errors"] == [
        {"path": "data.rush", "problems": ["value is not of type boolean"]}
    ]


def test_format_is_asserted():
    refusal = check(Orders, "place", order(when="tomorrow")).refusal
    assert refusal["errors"] == [
        {"path": "data.when", "problems": ["value does not respect the 'date' format"]}
    ]
    assert check(Orders, "place", order(when="2026-07-28")).accepted


def test_unknown_keys_are_found_in_nested_objects_and_array_items():
    sent = {"customer": "c", "items": [{"sku": "a", "qty": 1, "color": "red"}]}
    refusal = check(Orders, "place", sent).refusal
    assert refusal["unknown"] == ["data.items[0].color"]


def test_a_nested_required_key_refuses_the_whole_call():
    sent = {"customer": "c", "items": [{"sku": "a", "qty": 1}, {"sku": "b"}]}
    refusal = check(Orders, "place", sent).refusal
    assert refusal["error"] == "invalid_values"
    assert refusal["errors"] == [
        {"path": "data.items[1]", "problems": ["property 'qty' is required"]}
    ]


def test_every_offending_path_is_reported_in_one_answer():
    sent = {"customer": "", "items": [{"sku": "", "qty": 0}], "note": 5}
    refusal = check(Orders, "place", sent).refusal
    assert [entry["path"] for entry in refusal["errors"]] == [
        "data.customer",
        "data.items[0].qty",
        "data.items[0].sku",
        "data.note",
    ]
    assert refusal["error_count"] == 4


def test_lenient_mode_drops_unknown_keys_and_says_so():
    sent = {"customer": "c", "items": [{"sku": "a", "qty": 1, "color": "red"}], "x": 1}
    verdict = check(Orders, "place", sent, strict=False)
    assert verdict.accepted
    assert verdict.dropped == ("data.items[0].color", "data.x")
    assert verdict.data == {
        "rush": False,
        "customer": "c",
        "items": [{"sku": "a", "qty": 1}],
    }
    assert sent["items"][0]["color"] == "red"


def test_lenient_mode_still_refuses_other_problems_and_reports_the_drops():
    verdict = check(Orders, "place", {"x": 1}, strict=False)
    assert verdict.refusal["error"] == "missing_required_fields"
    assert verdict.dropped == ("data.x",)


def test_lenient_mode_bounds_the_dropped_list():
    sent = {f"k{i:03}": i for i in range(25)} | order()
    verdict = check(Orders, "place", sent, strict=False)
    assert verdict.accepted
    assert len(verdict.dropped) == 11
    assert verdict.dropped[-1] == "and 15 more"


def test_a_plain_tool_gates_its_whole_arguments():
    assert check(Lookup, None, {"query": "q", "limit": 5.0}).data == {
        "query": "q",
        "limit": 5,
    }
    refusal = check(Lookup, None, {"query": "q", "other": 1}).refusal
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown"] == ["arguments.other"]
    assert refusal["action"] is None
    assert refusal["help"] == 'help {tool: "lookup"}'
    assert check(Lookup, None, {}).refusal["missing"] == ["query"]
    refusal = check(Lookup, None, {"query": "q", "limit": 51}).refusal
    assert refusal["errors"] == [
        {"path": "arguments.limit", "problems": ["value is higher than maximum 50"]}
    ]


def test_a_plain_tool_called_with_an_action_is_an_unknown_action():
    refusal = check(Lookup, "search", {}).refusal
    assert refusal["error"] == "unknown_action"
    assert refusal["valid_actions"] == []


def test_a_multi_action_tool_called_without_an_action_names_the_valid_ones():
    refusal = check(Orders, None, {}).refusal
    assert refusal["error"] == "unknown_action"
    assert refusal["action"] is None
    assert refusal["message"] == (
        "Tool 'orders' needs an action. Valid actions: bare, find, place."
    )


def test_data_that_is_not_an_object_is_refused_at_the_root():
    for sent in ([1], "x", 3, True):
        refusal = check(Orders, "bare", sent).refusal
        assert refusal["errors"] == [
            {"path": "data", "problems": ["value is not of type object"]}
        ]


def test_a_tool_never_prepared_meets_the_registration_checks():
    class Broken(Tool):
        name = "broken"
        description = "d"
        actions = {"a": Action(description="", properties={})}  # noqa: RUF012 - the pinned declaration style

        async def run_action(self, action, data, ctx):
            return None

    with pytest.raises(ConfigurationError):
        check(Broken, "a", {})


def test_check_accepts_a_spec_a_class_and_an_instance_alike():
    spec = prepare(Orders)
    for tool in (spec, Orders, spec.tool):
        assert check(tool, "bare", {}).accepted


def test_a_huge_integer_is_read_and_bounded():
    verdict = check(Lookup, None, {"query": "q", "limit": 10**301})
    assert verdict.refusal["errors"] == [
        {"path": "arguments.limit", "problems": ["value is higher than maximum 50"]}
    ]
    assert check(Lookup, None, {"query": "q", "limit": -(10**301)}).accepted


def test_values_json_cannot_carry_are_refused_not_raised():
    for value in (float("nan"), float("inf"), {1, 2}, b"x", object()):
        verdict = check(Lookup, None, {"query": value})
        assert not verdict.accepted
        json.dumps(verdict.refusal)


def test_non_string_keys_are_refused_not_raised():
    verdict = check(Orders, "bare", {1: 2})
    assert verdict.refusal["error"] == "unknown_params"
    assert verdict.refusal["unknown"] == ['data["1"]']


def test_data_nested_deeper_than_the_engine_reads_is_refused_not_raised():
    class Deep(Tool):
        name = "deep"
        description = "d"
        input_schema = {  # noqa: RUF012 - the pinned declaration style
            "type": "object",
            "properties": {
                "tree": {
                    "anyOf": [
                        {"type": "array", "items": {"$ref": "#"}},
                        {"type": "integer"},
                    ]
                }
            },
        }

        async def run(self, arguments, ctx):
            return arguments

    tree: list = []
    node = tree
    for _ in range(5000):
        node.append([])
        node = node[0]
    verdict = check(Deep, None, {"tree": tree})
    assert not verdict.accepted
    assert verdict.refusal["errors"] == [
        {
            "path": "arguments.tree",
            "problems": [
                "value is not of type integer",
                "value matches no schema of anyOf",
            ],
        },
        {"path": "arguments.tree[0]", "problems": ["value is not of type object"]},
    ]


def test_a_walk_deeper_than_python_recurses_is_refused_and_said_partial():
    class Deep(Tool):
        name = "deep"
        description = "d"
        input_schema = {  # noqa: RUF012 - the pinned declaration style
            "type": "object",
            "properties": {
                "tree": {
                    "anyOf": [
                        {"type": "array", "items": {"$ref": "#/properties/tree"}},
                        {"type": "integer"},
                    ]
                }
            },
        }

        async def run(self, arguments, ctx):
            return arguments

    tree: list = []
    node = tree
    for _ in range(5000):
        node.append([])
        node = node[0]
    node.append("x")
    refusal = check(Deep, None, {"tree": tree}).refusal
    assert refusal["errors"][0]["path"] == "arguments.tree"
    assert "(counting stopped early)" in refusal["message"]


def test_check_fast_accepts_what_check_accepts_and_leaves_the_rest_to_it():
    from wymcp.core.gates import check_fast

    sent = {"customer": "c", "items": [{"sku": "s", "qty": 2.0}]}
    fast = check_fast(Orders, "place", sent)
    assert fast is not None
    assert fast == check(Orders, "place", sent)
    assert type(fast.data["items"][0]["qty"]) is int
    assert check_fast(Orders, "place", {"customer": "c", "items": ["x"]}) is None
    assert check_fast(Orders, "place", {"customer": "c"}) is None
    assert check_fast(Orders, "nope", {}) is None
    assert check_fast(Orders, "place", [1]) is None


def test_check_fast_leaves_a_long_cast_to_the_thread(monkeypatch):
    # 3,000 keys to cast under patternProperties: past FAST_WORK on the loop
    # (made smaller: data past SLICE units is the thread's anyway), so check_fast
    # answers None and check (the worker thread's) casts them all.
    monkeypatch.setattr(_check, "FAST_WORK", 1_000)

    class Counters(Tool):
        name = "counters"
        description = "d"
        actions = {  # noqa: RUF012 - the pinned declaration style
            "set": Action(
                description="Set counters",
                properties={
                    "m": {
                        "type": "object",
                        "patternProperties": {"^k": {"type": "integer"}},
                    }
                },
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    many = {"m": {f"k{i}": 2.0 for i in range(3_000)}}
    assert check_fast(Counters, "set", many) is None
    assert set(check(Counters, "set", many).data["m"].values()) == {2}
    assert all(type(v) is int for v in check(Counters, "set", many).data["m"].values())
    ints = {"m": {f"k{i}": 2 for i in range(3_000)}}
    assert check_fast(Counters, "set", ints).accepted  # nothing to cast: no work


def _go_tool(properties):
    class Plain(Tool):
        name = "plain"
        description = "d"
        actions = {  # noqa: RUF012 - the pinned declaration style
            "go": Action(description="Go", properties=properties)
        }

        async def run_action(self, action, data, ctx):
            return data

    return Plain


def test_check_fast_enters_no_budget_where_nothing_can_spend_one():
    # No integer to cast, no decimal multipleOf, small data: check_fast enters no
    # budget of its own (they cost ~10k instructions a call), so an outer budget
    # of nothing left would raise at the first unit spent; none is, and it accepts.
    from wymcp.core.gates._engine_reads import read_budget
    from wymcp.core.schema import work_budget

    tool = _go_tool(
        {
            "a": {"type": "number", "minimum": 0},
            "b": {"anyOf": [{"type": "string"}, {"type": "array"}]},
            "c": {"type": "object", "properties": {"d": {"type": "boolean"}}},
        }
    )
    data = {"a": 1.5, "b": ["x", 2.0, {"y": 3.0}], "c": {"d": True}}
    size = len(json.dumps(data))
    with work_budget(0), read_budget(0):
        fast = check_fast(tool, "go", data, json_bytes=size)
    assert fast is not None
    assert fast == check(tool, "go", data)


def test_check_fast_still_bounds_a_small_body_s_decimal_multiple_of(monkeypatch):
    # A small body under a decimal multipleOf and nothing to cast: the engine calls
    # back into Python per number, so the budget is still entered and bounds it.
    monkeypatch.setattr(_check, "FAST_WORK", 10)
    tool = _go_tool({"n": {"type": "array", "items": {"multipleOf": 0.01}}})
    data = {"n": [round(0.01 * i + 0.5, 2) for i in range(50)]}
    size = len(json.dumps(data))
    assert check_fast(tool, "go", data, json_bytes=size) is None
    assert check(tool, "go", data).accepted
    assert check_fast(tool, "go", {"n": data["n"][:5]}, json_bytes=size).accepted


def test_the_flat_cast_lane_reads_items_that_are_not_objects():
    # items that may be objects (one integer key) or anything else: a whole float
    # at the key is cast beside a string, a list and null, in check_fast and check
    tool = _go_tool(
        {"xs": {"type": "array", "items": {"properties": {"n": {"type": "integer"}}}}}
    )
    cases = [
        (["s", [1.0], None, {"n": 2.0}, {}], ["s", [1.0], None, {"n": 2}, {}]),
        ([{"n": 1}, {"n": 2.0}], [{"n": 1}, {"n": 2}]),
        ([{"n": 1}, "s", 1.5], [{"n": 1}, "s", 1.5]),
    ]
    for sent, read in cases:
        data = {"xs": sent}
        fast = check_fast(tool, "go", data, json_bytes=len(json.dumps(data)))
        assert fast == check(tool, "go", data)
        assert fast.data == {"xs": read}
        assert [type(x.get("n")) for x in fast.data["xs"] if type(x) is dict] == [
            type(x.get("n")) for x in read if type(x) is dict
        ]
