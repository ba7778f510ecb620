import json

from wymcp.core.gates import render_path


def test_paths_start_at_data_and_spell_indexes_and_keys():
    assert render_path(()) == "data"
    assert render_path(("items", 3, "qty")) == "data.items[3].qty"
    assert render_path(("a.b",)) == 'data["a.b"]'
    assert render_path(("0",)) == 'data["0"]'
    assert render_path(("_ok", "with space", "ü")) == ('data._ok["with space"]["ü"]')
    assert render_path(("x",), "arguments") == "arguments.x"


def test_quotes_and_control_characters_are_escaped():
    assert render_path(('say "hi"',)) == 'data["say \\"hi\\""]'
    assert render_path(("\n",)) == 'data["\\n"]'


def test_a_long_path_is_cut_at_the_echo_bound():
    assert len(render_path(("k" * 10_000,))) == 120
    deep = render_path(tuple(["key"] * 1000))
    assert len(deep) == 120
    assert deep.endswith("…")


def test_bidi_and_invisible_characters_are_escaped():
    """A raw U+202E would reorder the refusal's text around it when shown."""
    assert render_path(("a\u202eb",)) == 'data["a\\u202eb"]'
    tokens = ("\u200b", "\u2066x\u2069", "\ufeff", "\u2028", "\U000e0041")
    rendered = render_path(tokens)
    assert rendered == (
        'data["\\u200b"]["\\u2066x\\u2069"]["\\ufeff"]["\\u2028"]["\\U000e0041"]'
    )
    # visible non-ASCII stays as it is; a long run of overrides is cut
    assert render_path(("ü\u05d0",)) == 'data["ü\u05d0"]'
    long = render_path(("\u202e" * 1000,))
    assert "\u202e" not in long
    assert long.endswith("…")
    assert len(json.dumps(long)) <= 182
