from wymcp.core.gates import check
from wymcp.core.gates._key_gate import unknown_keys
from wymcp.core.schema import Action, Tool, close_schema, prepare
from wymcp.core.schema._value_root import build_value_root


def root():
    return build_value_root(
        close_schema(
            {
                "type": "object",
                "properties": {
                    "items": {
                        "type": "array",
                        "items": {"type": "object", "properties": {"sku": {}}},
                    },
                    "pair": {"prefixItems": [{"properties": {"a": {}}}]},
                    "tags": {"patternProperties": {"^t_": {}}},
                    "free": {"type": "object"},
                    "choice": {"anyOf": [{"properties": {"x": {}}}]},
                },
            }
        )
    )


def test_unknown_keys_are_found_along_properties_items_and_prefix_items():
    found, _ = unknown_keys(
        root(),
        {
            "top": 1,
            "items": [{"sku": 1, "color": 2}, "not an object", {"size": 3}],
            "pair": [{"a": 1, "b": 2}, {"c": 3}],
            "tags": {"t_ok": 1, "bad": 2},
            "free": {"anything": 1},
            "choice": {"y": 1},
        },
        drop=False,
    )
    assert found.count == 5
    assert found.kept == [
        ("items", 0, "color"),
        ("items", 2, "size"),
        ("pair", 0, "b"),
        ("tags", "bad"),
        ("top",),
    ]


def test_dropping_copies_only_what_changes():
    sent = {"items": [{"sku": 1, "color": 2}, {"sku": 2}], "free": {"x": 1}}
    found, pruned = unknown_keys(root(), sent, drop=True)
    assert found.kept == [("items", 0, "color")]
    assert pruned == {"items": [{"sku": 1}, {"sku": 2}], "free": {"x": 1}}
    assert sent["items"][0] == {"sku": 1, "color": 2}
    assert pruned["items"][1] is sent["items"][1]
    assert pruned["free"] is sent["free"]


def test_without_drop_the_data_is_returned_as_is():
    sent = {"x": 1}
    found, same = unknown_keys(root(), sent, drop=False)
    assert found.kept == [("x",)]
    assert same is sent


def test_no_closed_key_set_means_no_walk():
    open_root = build_value_root({"type": "object"})
    sent = {"x": [1, 2]}
    found, same = unknown_keys(open_root, sent, drop=True)
    assert found.count == 0
    assert same is sent


def test_the_walk_meets_paths_in_path_order_and_keeps_ten():
    sent = {"items": [{"b": 1, "a": 2, "10": 3, "9": 4} for _ in range(5)], "z": 1}
    found, _ = unknown_keys(root(), sent, drop=False)
    assert found.count == 21
    assert found.kept == [
        ("items", 0, "9"),
        ("items", 0, "10"),
        ("items", 0, "a"),
        ("items", 0, "b"),
        ("items", 1, "9"),
        ("items", 1, "10"),
        ("items", 1, "a"),
        ("items", 1, "b"),
        ("items", 2, "9"),
        ("items", 2, "10"),
    ]


# One regex dialect: the key gate reads patternProperties as the engine does.


def _patterned():

    class Counters(Tool):
        name = "counters"
        description = "Counters under keys without spaces."
        actions = {  # noqa: RUF012 - the pinned declaration style
            "set": Action(
                description="Set counters",
                properties={
                    "m": {
                        "type": "object",
                        "patternProperties": {"^\\S+$": {"type": "integer"}},
                    },
                    "n": {"type": "integer"},
                },
            )
        }

        async def run_action(self, action, data, ctx):
            return data

    return prepare(Counters)


def test_a_key_the_engine_matches_is_known_whatever_else_is_wrong():
    # ECMA 262's \S matches U+001C; Python's re counts it as a space. The key was
    # accepted alone and called unknown once another value was wrong.
    spec = _patterned()
    key = "a\u001cb"
    assert check(spec, "set", {"m": {key: 1}}).accepted
    refusal = check(spec, "set", {"m": {key: 1}, "n": "x"}).refusal
    assert refusal["error"] == "invalid_values"
    assert [e["path"] for e in refusal["errors"]] == ["data.n"]
    lenient = check(spec, "set", {"m": {key: 1}, "n": 2}, strict=False)
    assert lenient.data == {"m": {key: 1}, "n": 2}
    assert lenient.dropped == ()
    assert check(spec, "set", {"m": {"a b": 1}}).refusal["unknown"] == ['data.m["a b"]']


def test_a_pattern_pythons_re_cannot_read_still_closes_the_key_set():
    found, _ = unknown_keys(
        build_value_root(
            close_schema(
                {
                    "type": "object",
                    "properties": {"w": {"patternProperties": {"^\\p{L}+$": {}}}},
                }
            )
        ),
        {"w": {"émile": 1, "42": 2}},
        drop=False,
    )
    assert found.kept == [("w", "42")]
