"""RFC 6570 template matching."""

from __future__ import annotations

import pytest

from wymcp.core.server._uri_template import TemplateError, UriTemplate


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
