"""`Headers`: names folded to lower case, every value kept in arrival order.

`Headers.of` copies pairs into a dict; `Headers.view` reads a case-insensitive
multidict (aiohttp's request headers) in place, and must read the same.
"""

from __future__ import annotations

import pytest
from multidict import CIMultiDict, CIMultiDictProxy

from wymcp.core.server import Headers
from wymcp.transport.aiohttp._endpoint import _UNIQUE_KEYS, request_headers


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


PAIRS = [
    [],
    [("Host", "a"), ("Content-Type", "application/json")],
    [("Mcp-Name", "a"), ("Host", "h"), ("MCP-NAME", "b"), ("mcp-name", "c")],
    [("Mcp-Param-Region", "eu"), ("mcp-param-region", "us"), ("Accept", "x")],
]


@pytest.mark.parametrize("pairs", PAIRS)
def test_a_view_of_a_multidict_reads_as_the_index_of_the_same_pairs(
    pairs: list[tuple[str, str]],
) -> None:
    built = Headers.of(pairs)
    viewed = request_headers(CIMultiDictProxy(CIMultiDict(pairs)))
    assert viewed.index == built.index
    assert list(viewed.index.items()) == list(built.index.items())  # first-came order
    assert len(viewed.index) == len(built.index)
    assert bool(viewed.index) == bool(built.index)
    assert viewed.repeated == built.repeated
    for name in ("host", "HOST", "mcp-name", "Mcp-Param-Region", "origin"):
        assert viewed.getall(name) == built.getall(name)
        assert viewed.get(name) == built.get(name)
        assert viewed.index.get(name.lower()) == built.index.get(name.lower())
        assert (name.lower() in viewed.index) == (name.lower() in built.index)


def test_the_transport_views_headers_only_where_the_multidict_allows() -> None:
    """multidict before 7 lists each spelling in `keys()`: its headers are copied.

    With multidict 6.9 (the lowest aiohttp 3.14.4 admits) the view saw no
    repeated name in `[("Mcp-Name", "a"), ("mcp-name", "b")]`; the transport
    must not hand the engine such a view.
    """
    unique = len(CIMultiDict((("a", ""), ("A", ""))).keys()) == 1
    assert unique == _UNIQUE_KEYS
    assert (request_headers == Headers.view) == unique
    pairs = [("Mcp-Name", "a"), ("mcp-name", "b")]
    assert request_headers(CIMultiDictProxy(CIMultiDict(pairs))).repeated


def test_a_view_looks_names_up_in_any_case_and_hands_out_new_lists() -> None:
    index = Headers.view(CIMultiDictProxy(CIMultiDict([("Host", "a")]))).index
    assert index["host"] == index["HoSt"] == ["a"]
    index["host"].append("b")  # a reader's list is its own: the headers do not change
    assert index["host"] == ["a"]
    with pytest.raises(KeyError):
        index["origin"]
