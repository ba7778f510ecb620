"""`Headers.of`: names folded to lower case, every value kept in arrival order."""

from __future__ import annotations

from wymcp.core.server import Headers


def test_distinct_names_index_one_value_each() -> None:
    headers = Headers.of([("Host", "a"), ("Content-Type", "application/json")])
    assert headers.index == {"host": ["a"], "content-type": ["application/json"]}
    assert headers.get("HOST") == "a"


def test_a_repeated_name_keeps_every_value_in_order_whatever_its_case() -> None:
    headers = Headers.of([("Mcp-Name", "a"), ("Host", "h"), ("MCP-NAME", "b")])
    assert headers.index == {"mcp-name": ["a", "b"], "host": ["h"]}
    assert headers.getall("mcp-name") == ["a", "b"]


def test_an_iterator_of_pairs_is_read_whole() -> None:
    pairs = [("A", "1"), ("a", "2"), ("B", "3")]
    assert Headers.of(iter(pairs)).index == {"a": ["1", "2"], "b": ["3"]}
    assert Headers.of(pair for pair in pairs[2:]).index == {"b": ["3"]}
    assert Headers.of(()).index == {}


def test_repeated_says_whether_a_name_came_twice_however_built() -> None:
    assert not Headers.of([("Host", "a"), ("Accept", "b")]).repeated
    assert Headers.of([("Host", "a"), ("HOST", "b")]).repeated
    assert Headers({"host": ["a", "b"]}).repeated  # built directly: read off the index
    assert not Headers({"host": ["a"]}).repeated
