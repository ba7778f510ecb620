"""RFC 6570 template matching."""

from __future__ import annotations

import re
import time
from urllib.parse import unquote

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from wymcp.core.server._uri_template import MATCH_LIMIT, TemplateError, UriTemplate


@pytest.mark.parametrize(
    ("template", "uri", "values"),
    [
        ("test://template/{id}/data", "test://template/123/data", {"id": "123"}),
        ("test://template/{id}/data", "test://template/a%20b/data", {"id": "a b"}),
        ("test://template/{id}/data", "test://template/1/2/data", None),
        ("file:///{+path}", "file:///a/b/c.txt", {"path": "a/b/c.txt"}),
        ("x://{a,b}", "x://1,2", {"a": "1", "b": "2"}),
        ("x://y{/seg}", "x://y/z", {"seg": "z"}),
        ("x://y{.ext}", "x://y.json", {"ext": "json"}),
        ("x://y{;p}", "x://y;p=1", {"p": "1"}),
        ("x://y{#frag}", "x://y#top", {"frag": "top"}),
        ("x://s{?q,n}", "x://s?q=a&n=2", {"q": "a", "n": "2"}),
        ("x://s{?q,n}", "x://s?q=a", {"q": "a"}),
        ("x://s{?q}{&n}", "x://s?q=a&n=b", {"q": "a", "n": "b"}),
        ("x://plain", "x://plain", {}),
        ("x://plain", "x://other", None),
    ],
)
def test_match(template, uri, values):
    assert UriTemplate.compile(template).match(uri) == values


@pytest.mark.parametrize(
    "template", ["x://{a", "x://a}", "x://{a}/{a}", "x://{1a}", "x://{a*}"]
)
def test_unsupported_templates_are_refused(template):
    with pytest.raises(TemplateError):
        UriTemplate.compile(template)


# ----------------------------------------------------------- linear matching


def _best_time(template: UriTemplate, uri: str, repeats: int = 3) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        template.match(uri)
        best = min(best, time.perf_counter() - start)
    return best


NEAR_MISSES = [
    # (template, repeated unit, last character): the URI almost matches
    ("x://{+a}/{+b}/z", "/", "y"),
    ("x://{+a,b}/end", ",", "!"),
    ("x://{#a}-{b}.{c}-z", "-.", "y"),
    ("x://{a}-{b}-{c}-z", "-", "y"),
]


def test_matching_a_near_miss_uri_takes_linear_time():
    """Quadrupling a near-miss URI at most about quadruples the work.

    A backtracking regex took 16 times longer here (a 40 KB URI held the
    event loop for 12 s); slack absorbs a busy machine.
    """
    small, large = 4_000, 16_000
    times = {}
    for size in (small, large):
        total = 0.0
        for text, unit, last in NEAR_MISSES:
            template = UriTemplate.compile(text)
            uri = "x://" + unit * (size // len(unit)) + last
            assert template.match(uri) is None
            total += _best_time(template, uri)
        times[size] = total
    assert times[large] / times[small] < 9, times


def test_a_uri_past_the_match_limit_matches_no_template():
    template = UriTemplate.compile("file:///{+path}")
    assert template.match("file:///" + "a" * 100) == {"path": "a" * 100}
    assert template.match("file:///" + "a" * MATCH_LIMIT) is None


# ------------------------------------------- same values as the regex it replaced


def _oracle(text: str) -> re.Pattern[str]:
    """The backtracking regex the matcher replaced: the reference semantics."""
    simple, reserved = "[^/?#&=,]*", ".*?"
    parts: list[str] = []
    position = 0
    for found in re.finditer(r"\{([+#./;?&]?)([A-Za-z0-9_.,%]+)\}", text):
        parts.append(re.escape(text[position : found.start()]))
        operator, names = found.group(1), found.group(2).split(",")
        group = "(?P<{}>{})".format
        if operator in ("", "+", "#"):
            body = simple if operator == "" else reserved
            prefix = "#" if operator == "#" else ""
            parts.append(re.escape(prefix) + ",".join(group(n, body) for n in names))
        elif operator in (".", "/"):
            parts.append("".join(re.escape(operator) + group(n, simple) for n in names))
        elif operator == ";":
            parts.append("".join(f";{n}=?" + group(n, simple) for n in names))
        else:
            parts.append(
                "".join(
                    f"(?:{re.escape(operator if i == 0 else '&')}{n}="
                    + group(n, simple)
                    + ")?"
                    for i, n in enumerate(names)
                )
            )
        position = found.end()
    parts.append(re.escape(text[position:]))
    return re.compile("".join(parts), re.DOTALL)


_EXPRESSIONS = st.sampled_from(
    ["{a}", "{b}", "{+c}", "{#d}", "{.e}", "{/f}", "{;g}", "{?h,i}", "{&j}", "{k,l}"]
)
_LITERALS = st.sampled_from(["", "x", "-", "/", ".", ",", "a=", "?", "#"])
_URI_TEXT = st.text(alphabet="xa-/.,=?#&;%2", max_size=14)


@st.composite
def _templates(draw: st.DrawFn) -> str:
    pieces = draw(st.lists(st.tuples(_LITERALS, _EXPRESSIONS), max_size=4))
    used: set[str] = set()
    text = ""
    for literal, expression in pieces:
        names = set(re.findall(r"[a-z]", expression.strip("{}+#./;?&")))
        if names & used:
            continue
        used |= names
        text += literal + expression
    return text + draw(_LITERALS)


@settings(max_examples=400, deadline=None)
@given(template=_templates(), uri=_URI_TEXT)
def test_the_values_are_those_the_backtracking_regex_picked(template, uri):
    found = _oracle(template).fullmatch(uri)
    expected = (
        None
        if found is None
        else {k: unquote(v) for k, v in found.groupdict().items() if v is not None}
    )
    assert UriTemplate.compile(template).match(uri) == expected
