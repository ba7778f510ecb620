import json

from wymcp.core.gates._bound import echo, first, path_key, token_key


def test_echo_leaves_short_texts_alone_and_cuts_long_ones_at_120():
    assert echo("short") == "short"
    assert echo("x" * 120) == "x" * 120
    cut = echo("x" * 121)
    assert cut == "x" * 119 + "…"


def test_echo_cuts_sooner_when_characters_need_escaping():
    for char in ("\x00", "😀", '"'):
        cut = echo(char * 500)
        assert len(json.dumps(cut)) <= 182


def test_digit_tokens_sort_as_indexes_before_keys():
    tokens = ["b", "10", 2, "9", "a", 0, "007"]
    assert sorted(tokens, key=token_key) == [0, 2, "007", "9", "10", "a", "b"]


def test_a_prefix_sorts_before_its_extensions():
    paths = [("a", "b"), ("a",), ("a", 1), ("b",)]
    assert sorted(paths, key=path_key) == [("a",), ("a", 1), ("a", "b"), ("b",)]


def test_first_keeps_ten_distinct_paths_and_counts_them_all():
    paths = [(i,) for i in range(30, 0, -1)] + [(1,)]
    kept, count = first(paths)
    assert kept == [(i,) for i in range(1, 11)]
    assert count == 30


def test_huge_digit_tokens_sort_without_conversion():
    big = "9" * 100_000
    assert sorted([big, "1"], key=token_key) == ["1", big]
