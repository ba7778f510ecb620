from wymcp.core.gates._key_gate import unknown_keys
from wymcp.core.schema import close_schema
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
