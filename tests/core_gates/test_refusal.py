import json

from wymcp.core.gates import check, help_pointer
from wymcp.core.schema import Action, Tool


class Widgets(Tool):
    name = "widgets"
    description = "Manage widgets"
    actions = {  # noqa: RUF012 - the pinned declaration style
        "locate": Action(
            description="Locate a widget",
            properties={"path": {"type": "string"}, "depth": {"type": "integer"}},
            required=["path"],
            defaults={"depth": 1},
        ),
        "identify": Action(
            description="Identify a widget",
            properties={
                "id": {"type": "string"},
                "name": {"type": "string"},
                "color": {"type": "string"},
            },
            required_one_of=[["id"], ["name", "color"]],
        ),
        "bare": Action(description="Nothing", properties={}),
        "count": Action(
            description="Count",
            properties={"n": {"type": "integer", "maximum": 100}},
        ),
    }

    async def run_action(self, action, data, ctx):
        return data


LOCATE_SCHEMA = {
    "properties": {"path": {"type": "string"}, "depth": {"type": "integer"}},
    "required": ["path"],
    "defaults": {"depth": 1},
}


def test_help_pointers_are_copyable_calls():
    assert help_pointer("widgets") == 'help {tool: "widgets"}'
    assert (
        help_pointer("widgets", "create") == 'help {tool: "widgets", action: "create"}'
    )


def test_unknown_action():
    assert check(Widgets, "nope", {}).refusal == {
        "error": "unknown_action",
        "message": (
            "Unknown action 'nope' for tool 'widgets'. Valid actions: bare, count,"
            " identify, locate."
        ),
        "tool": "widgets",
        "action": "nope",
        "valid_actions": ["bare", "count", "identify", "locate"],
        "help": 'help {tool: "widgets"}',
    }


def test_missing_required_fields():
    assert check(Widgets, "locate", {}).refusal == {
        "error": "missing_required_fields",
        "message": "Required fields missing: path.",
        "tool": "widgets",
        "action": "locate",
        "missing": ["path"],
        "input_schema": LOCATE_SCHEMA,
        "help": 'help {tool: "widgets", action: "locate"}',
    }


def test_missing_required_group():
    assert check(Widgets, "identify", {"name": "n"}).refusal == {
        "error": "missing_required_group",
        "message": (
            "At least one of these field groups must be fully present:"
            " (id) OR (name + color)."
        ),
        "tool": "widgets",
        "action": "identify",
        "required_one_of": [["id"], ["name", "color"]],
        "input_schema": {
            "properties": {
                "id": {"type": "string"},
                "name": {"type": "string"},
                "color": {"type": "string"},
            },
            "required": [],
            "defaults": {},
            "required_one_of": [["id"], ["name", "color"]],
        },
        "help": 'help {tool: "widgets", action: "identify"}',
    }


def test_unknown_params():
    assert check(Widgets, "bare", {"bogus": 1}).refusal == {
        "error": "unknown_params",
        "message": (
            "Unknown parameter(s) for action 'bare': data.bogus. These are rejected"
            " rather than silently ignored."
        ),
        "tool": "widgets",
        "action": "bare",
        "unknown": ["data.bogus"],
        "unknown_count": 1,
        "input_schema": {"properties": {}, "required": [], "defaults": {}},
        "help": 'help {tool: "widgets", action: "bare"}',
    }


def test_unknown_params_are_bounded_to_ten_in_path_order_with_a_count():
    sent = {f"k{i}": i for i in range(25)}
    refusal = check(Widgets, "bare", sent).refusal
    assert refusal["unknown"] == [
        "data.k0",
        "data.k1",
        "data.k10",
        "data.k11",
        "data.k12",
        "data.k13",
        "data.k14",
        "data.k15",
        "data.k16",
        "data.k17",
    ]
    assert refusal["unknown_count"] == 25
    assert refusal["message"].startswith(
        "Unknown parameter(s) for action 'bare': data.k0, data.k1, data.k10 and 22"
        " more."
    )


def test_invalid_values():
    assert check(Widgets, "count", {"n": 101}).refusal == {
        "error": "invalid_values",
        "message": "Invalid value(s) for action 'count' at data.n; see errors.",
        "tool": "widgets",
        "action": "count",
        "errors": [
            {"path": "data.n", "problems": ["value is higher than maximum 100"]}
        ],
        "error_count": 1,
        "input_schema": {
            "properties": {"n": {"type": "integer", "maximum": 100}},
            "required": [],
            "defaults": {},
        },
        "help": 'help {tool: "widgets", action: "count"}',
    }


def test_every_refusal_is_json():
    for action, data in [
        ("nope", {}),
        ("locate", {}),
        ("identify", {}),
        ("bare", {"x": 1}),
        ("count", {"n": "x"}),
    ]:
        refusal = check(Widgets, action, data).refusal
        assert json.loads(json.dumps(refusal)) == refusal


def test_an_echoed_action_name_is_cut():
    refusal = check(Widgets, "x" * 10_000, {}).refusal
    assert len(refusal["action"]) == 120
    assert refusal["action"].endswith("…")
    assert len(refusal["message"]) < 300


def test_a_non_string_action_is_an_unknown_action():
    refusal = check(Widgets, 5, {}).refusal  # type: ignore[arg-type]
    assert refusal["action"] == "<int>"
    refusal = check(Widgets, object(), {}).refusal  # type: ignore[arg-type]
    assert refusal["action"] == "<object>"


def test_a_partial_count_is_said_in_the_message():
    class Combined(Tool):
        name = "combined"
        description = "d"
        actions = {  # noqa: RUF012 - the pinned declaration style
            "a": Action(
                description="d",
                properties={
                    "v": {
                        "allOf": [{"items": {"type": "number"}}],
                        "unevaluatedItems": False,
                    }
                },
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    # Too many values to ask the engine about: each item is still counted, but
    # what only the engine could say of `unevaluatedItems` is not named.
    refusal = check(Combined, "a", {"v": ["x"] * 2000}).refusal
    assert refusal["error_count"] == 2001
    assert refusal["message"] == (
        "Invalid value(s) for action 'a' at data.v, data.v[0], data.v[1] and 1998"
        " more (counting stopped early); see errors."
    )


# one round for the model: unknown_params also says what is missing and meant ---------


class Bookmarks(Tool):
    name = "bookmarks"
    description = "Keep bookmarks"
    actions = {  # noqa: RUF012 - the pinned declaration style
        "add": Action(
            description="Add a bookmark",
            properties={
                "url": {"type": "string", "format": "uri"},
                "title": {"type": "string", "minLength": 1},
                "tags": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": {"label": {"type": "string"}},
                    },
                },
                "meta": {
                    "type": "object",
                    "properties": {"source": {"type": "string"}},
                },
            },
            required=["url", "title"],
        ),
        "list": Action(description="List bookmarks", properties={}),
    }

    async def run_action(self, action, data, ctx):
        return data


def request_part(refusal: dict) -> int:
    """The bytes of a refusal that depend on the request (not the declaration)."""
    kept = {
        k: v for k, v in refusal.items() if k not in ("input_schema", "valid_actions")
    }
    return len(json.dumps(kept).encode())


def test_a_typo_costs_one_round_missing_and_did_you_mean_ride_along():
    refusal = check(Bookmarks, "add", {"titel": "x", "url": 5}).refusal
    assert refusal["error"] == "unknown_params"
    assert refusal["unknown"] == ["data.titel"]
    assert refusal["unknown_count"] == 1
    assert refusal["missing"] == ["title"]
    assert refusal["did_you_mean"] == {"data.titel": "data.title"}
    assert list(refusal) == [
        "error",
        "message",
        "tool",
        "action",
        "unknown",
        "unknown_count",
        "missing",
        "did_you_mean",
        "also",
        "input_schema",
        "help",
    ]
    assert refusal["also"] == {
        "invalid_values": {
            "errors": [
                {"path": "data.url", "problems": ["value is not of type string"]}
            ],
            "error_count": 1,
        }
    }


def test_missing_keeps_declaration_order_and_is_left_out_when_empty():
    refusal = check(Bookmarks, "add", {"x": 1}).refusal
    assert refusal["missing"] == ["url", "title"]
    assert "did_you_mean" not in refusal
    refusal = check(Bookmarks, "add", {"url": "u", "title": "t", "x": 1}).refusal
    assert "missing" not in refusal
    assert "did_you_mean" not in refusal


def test_did_you_mean_looks_at_the_keys_allowed_at_that_path():
    refusal = check(
        Bookmarks,
        "add",
        {
            "url": "https://x.test",
            "title": "t",
            "tags": [{"label": "a"}, {"lable": "b"}],
            "meta": {"sorce": "s", "zzz": 1},
        },
    ).refusal
    assert refusal["unknown"] == [
        "data.meta.sorce",
        "data.meta.zzz",
        "data.tags[1].lable",
    ]
    assert refusal["did_you_mean"] == {
        "data.meta.sorce": "data.meta.source",
        "data.tags[1].lable": "data.tags[1].label",
    }


def test_did_you_mean_never_suggests_a_key_already_sent():
    refusal = check(Bookmarks, "add", {"url": "u", "title": "t", "titel": "x"}).refusal
    assert refusal["unknown"] == ["data.titel"]
    assert "did_you_mean" not in refusal


def test_the_seed_order_holds_values_are_not_reported_beside_unknown_keys():
    refusal = check(Bookmarks, "add", {"titel": "", "url": 5}).refusal
    assert refusal["error"] == "unknown_params"
    assert "errors" not in refusal


def test_a_hostile_unknown_key_refusal_stays_under_4_kib():
    many = {f"k{i}": i for i in range(100_000)}
    refusal = check(Bookmarks, "add", many).refusal
    assert refusal["unknown_count"] == 100_000
    assert len(refusal["unknown"]) == 10
    assert request_part(refusal) < 4096
    long_keys = {ch * 60_000: 1 for ch in "abcdefghijklmnopqrstuvwxyz"}
    refusal = check(Bookmarks, "add", long_keys).refusal
    assert refusal["unknown_count"] == 26
    assert "did_you_mean" not in refusal
    assert request_part(refusal) < 4096


def test_did_you_mean_is_bounded_to_ten_entries_and_4_kib():
    class Wide(Tool):
        name = "wide"
        description = "d"
        actions = {  # noqa: RUF012 - the pinned declaration style
            "go": Action(
                description="d",
                properties={
                    f"{'p' * 50}{i:02d}": {"type": "integer"} for i in range(40)
                },
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    sent = {f"{'p' * 50}{i:02d}x": 1 for i in range(40)}
    refusal = check(Wide, "go", sent).refusal
    assert refusal["unknown_count"] == 40
    assert 0 < len(refusal["did_you_mean"]) <= 10
    for wrong, right in refusal["did_you_mean"].items():
        assert wrong == right + "x"
    assert request_part(refusal) < 4096
    control = "\u0001" * 50
    quoted = {f"{control}{i:02d}": 1 for i in range(40)}
    refusal = check(Wide, "go", quoted).refusal
    assert request_part(refusal) < 4096


def test_suggesting_costs_the_ten_kept_keys_only(monkeypatch):
    """Doubling the unknown keys does not add distance computations (no timing)."""
    import wymcp.core.gates._did_you_mean as module

    calls = []
    real = module.distance

    def counted(a, b, limit, budget):
        calls.append(a)
        return real(a, b, limit, budget)

    monkeypatch.setattr(module, "distance", counted)
    check(Bookmarks, "add", {f"titel{i}": 1 for i in range(1000)})
    small = len(calls)
    calls.clear()
    check(Bookmarks, "add", {f"titel{i}": 1 for i in range(2000)})
    assert 0 < len(calls) <= small
