"""RFC 6570 URI templates: matching a URI against one and reading its values.

Supported expressions: `{var}`, `{+var}`, `{#var}`, `{.var}`, `{/var}`,
`{;var}`, `{?a,b}` and `{&a,b}` (levels 1-3, no explode or prefix).
"""

from __future__ import annotations

import re
from urllib.parse import unquote

import attrs

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.,%]+)\}")
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_SIMPLE = "[^/?#&=,]*"
_RESERVED = ".*?"


class TemplateError(ValueError):
    """A template this module cannot read."""


@attrs.frozen
class UriTemplate:
    """A compiled template: its text, variable names and matching regex."""

    text: str
    variables: tuple[str, ...]
    pattern: re.Pattern[str]

    @classmethod
    def compile(cls, text: str) -> UriTemplate:
        """Compile `text`, raising TemplateError for what is not supported."""
        parts: list[str] = []
        variables: list[str] = []
        position = 0
        for match in _EXPRESSION.finditer(text):
            parts.append(re.escape(text[position : match.start()]))
            operator, names = match.group(1), match.group(2).split(",")
            for name in names:
                if not _VAR.fullmatch(name) or name in variables:
                    raise TemplateError(f"bad or repeated variable {name!r}")
                variables.append(name)
            parts.append(_expression(operator, names))
            position = match.end()
        rest = text[position:]
        if "{" in rest or "}" in rest:
            raise TemplateError("unbalanced or unsupported expression")
        parts.append(re.escape(rest))
        return cls(text, tuple(variables), re.compile("".join(parts)))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values if `uri` matches, else None."""
        found = self.pattern.fullmatch(uri)
        if found is None:
            return None
        return {
            name: unquote(value)
            for name, value in found.groupdict().items()
            if value is not None
        }


def _group(name: str, body: str) -> str:
    return f"(?P<{name}>{body})"


def _expression(operator: str, names: list[str]) -> str:
    if operator in ("", "+", "#"):
        prefix = "#" if operator == "#" else ""
        body = _SIMPLE if operator == "" else _RESERVED
        return re.escape(prefix) + ",".join(_group(n, body) for n in names)
    if operator in (".", "/"):
        return "".join(re.escape(operator) + _group(n, _SIMPLE) for n in names)
    if operator == ";":
        return "".join(f";{re.escape(n)}=?" + _group(n, _SIMPLE) for n in names)
    first = operator
    pieces = []
    for index, name in enumerate(names):
        sep = first if index == 0 else "&"
        pieces.append(
            f"(?:{re.escape(sep)}{re.escape(name)}=" + _group(name, _SIMPLE) + ")?"
        )
    return "".join(pieces)
