"""RFC 6570 URI templates: matching a URI against one and reading its values.

Supported expressions: `{var}`, `{+var}`, `{#var}`, `{.var}`, `{/var}`,
`{;var}`, `{?a,b}` and `{&a,b}` (levels 1-3, no explode or prefix). Matching
takes time linear in the URI: no regex backtracks over it (docs/security.md).
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Final
from urllib.parse import unquote

import attrs

_EXPRESSION = re.compile(r"\{([+#./;?&]?)([A-Za-z0-9_.,%]+)\}")
_VAR = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_EXCLUDED = re.compile(r"[/?#&=,]")
"""What a simple expression's value cannot hold (`{+var}`/`{#var}` hold all)."""

MATCH_LIMIT: Final = 65_536
"""Longest URI (in characters) a template is matched against; a longer URI
matches no template, so its cost stays bounded whatever the template."""


class TemplateError(ValueError):
    """A template this module cannot read."""


@attrs.frozen
class Text:
    """Text the URI must hold verbatim."""

    text: str


@attrs.frozen
class Slot:
    """One variable: `reserved` ones hold any text, others no `/?#&=,`."""

    name: str
    reserved: bool


@attrs.frozen
class Maybe:
    """Tokens the URI may hold or leave out (a query pair, a `;` name's `=`)."""

    tokens: tuple[Token, ...]


Token = Text | Slot | Maybe


class _Spans:
    """A set of URI positions as sorted, disjoint, non-adjacent closed intervals."""

    __slots__ = ("his", "los")

    def __init__(self, los: list[int], his: list[int]) -> None:
        self.los = los
        self.his = his

    @classmethod
    def of(cls, pairs: list[tuple[int, int]]) -> _Spans:
        """Merge (lo, hi) pairs sorted by lo into a set."""
        los: list[int] = []
        his: list[int] = []
        for lo, hi in pairs:
            if his and lo <= his[-1] + 1:
                his[-1] = max(his[-1], hi)
            else:
                los.append(lo)
                his.append(hi)
        return cls(los, his)

    def pairs(self) -> list[tuple[int, int]]:
        """The intervals as (lo, hi) pairs."""
        return list(zip(self.los, self.his, strict=True))

    def __contains__(self, position: int) -> bool:
        index = bisect_right(self.los, position) - 1
        return index >= 0 and position <= self.his[index]

    def first_from(self, position: int) -> int | None:
        """The smallest member at or after `position`."""
        index = bisect_left(self.his, position)
        if index == len(self.his):
            return None
        return max(self.los[index], position)

    def last_until(self, limit: int) -> int | None:
        """The largest member at or before `limit`."""
        index = bisect_right(self.los, limit) - 1
        if index < 0:
            return None
        return min(self.his[index], limit)

    def union(self, other: _Spans) -> _Spans:
        """Both sets together."""
        pairs = sorted([*self.pairs(), *other.pairs()])
        return _Spans.of(pairs)


class _Scan:
    """One URI being matched, and where its excluded characters are."""

    def __init__(self, uri: str) -> None:
        self.uri = uri
        self._excluded: list[int] | None = None

    @property
    def excluded(self) -> list[int]:
        if self._excluded is None:
            self._excluded = [m.start() for m in _EXCLUDED.finditer(self.uri)]
        return self._excluded

    def run_start(self, position: int) -> int:
        """Where the run of non-excluded characters ending at `position` starts."""
        index = bisect_left(self.excluded, position) - 1
        return 0 if index < 0 else self.excluded[index] + 1

    def run_end(self, position: int) -> int:
        """Where the run of non-excluded characters starting at `position` ends."""
        index = bisect_left(self.excluded, position)
        excluded = self.excluded
        return excluded[index] if index < len(excluded) else len(self.uri)

    def before_literal(self, text: str, after: _Spans) -> _Spans:
        """Positions where `text` starts and ends at a member of `after`."""
        uri, size = self.uri, len(text)
        pairs: list[tuple[int, int]] = []
        for lo, hi in after.pairs():
            found = uri.find(text, max(lo - size, 0), hi)
            while found != -1:
                pairs.append((found, found))
                found = uri.find(text, found + 1, hi)
        return _Spans.of(pairs)

    def before_slot(self, slot: Slot, after: _Spans) -> _Spans:
        """Positions from which `slot`'s value can end at a member of `after`."""
        if not after.his:
            return after
        if slot.reserved:
            return _Spans([0], [after.his[-1]])
        return _Spans.of([(self.run_start(lo), hi) for lo, hi in after.pairs()])


@attrs.frozen
class _Plan:
    """Where each token may start so that the rest of the template matches."""

    starts: list[_Spans]
    inner: dict[int, _Plan]


def _plan(tokens: tuple[Token, ...], tail: _Spans, scan: _Scan) -> _Plan:
    starts = [tail] * (len(tokens) + 1)
    inner: dict[int, _Plan] = {}
    for index in range(len(tokens) - 1, -1, -1):
        token, after = tokens[index], starts[index + 1]
        if isinstance(token, Text):
            starts[index] = scan.before_literal(token.text, after)
        elif isinstance(token, Slot):
            starts[index] = scan.before_slot(token, after)
        else:
            inner[index] = _plan(token.tokens, after, scan)
            starts[index] = inner[index].starts[0].union(after)
    return _Plan(starts, inner)


def _read(
    tokens: tuple[Token, ...],
    plan: _Plan,
    scan: _Scan,
    position: int,
    values: dict[str, str],
) -> int:
    """Walk a planned match, giving each variable its preferred value.

    A reserved variable takes the shortest text, a simple one the longest,
    that lets the rest match (what a backtracking regex would pick); an
    optional part is taken when it can be.
    """
    for index, token in enumerate(tokens):
        after = plan.starts[index + 1]
        if isinstance(token, Text):
            position += len(token.text)
        elif isinstance(token, Slot):
            if token.reserved:
                end = after.first_from(position)
            else:
                end = after.last_until(scan.run_end(position))
            if end is None or end < position:  # pragma: no cover - planned
                raise AssertionError("a planned match has no value")
            values[token.name] = scan.uri[position:end]
            position = end
        elif position in plan.inner[index].starts[0]:
            position = _read(token.tokens, plan.inner[index], scan, position, values)
    return position


@attrs.frozen
class UriTemplate:
    """A compiled template: its text, variable names and tokens."""

    text: str
    variables: tuple[str, ...]
    tokens: tuple[Token, ...]

    @classmethod
    def compile(cls, text: str) -> UriTemplate:
        """Compile `text`, raising TemplateError for what is not supported."""
        tokens: list[Token] = []
        variables: list[str] = []
        position = 0
        for match in _EXPRESSION.finditer(text):
            tokens.append(Text(text[position : match.start()]))
            operator, names = match.group(1), match.group(2).split(",")
            for name in names:
                if not _VAR.fullmatch(name) or name in variables:
                    raise TemplateError(f"bad or repeated variable {name!r}")
                variables.append(name)
            tokens.extend(_expression(operator, names))
            position = match.end()
        rest = text[position:]
        if "{" in rest or "}" in rest:
            raise TemplateError("unbalanced or unsupported expression")
        tokens.append(Text(rest))
        return cls(text, tuple(variables), _joined(tokens))

    def match(self, uri: str) -> dict[str, str] | None:
        """The variables' values if `uri` matches, else None.

        Linear in `len(uri)`; a URI longer than `MATCH_LIMIT` matches nothing.
        """
        if len(uri) > MATCH_LIMIT:
            return None
        scan = _Scan(uri)
        end = len(uri)
        plan = _plan(self.tokens, _Spans([end], [end]), scan)
        if 0 not in plan.starts[0]:
            return None
        values: dict[str, str] = {}
        _read(self.tokens, plan, scan, 0, values)
        return {name: unquote(value) for name, value in values.items()}


def _joined(tokens: list[Token]) -> tuple[Token, ...]:
    """Adjacent literals as one, empty ones dropped."""
    out: list[Token] = []
    for token in tokens:
        if isinstance(token, Text):
            if not token.text:
                continue
            if out and isinstance(out[-1], Text):
                out[-1] = Text(out[-1].text + token.text)
                continue
        out.append(token)
    return tuple(out)


def _expression(operator: str, names: list[str]) -> list[Token]:
    tokens: list[Token] = []
    if operator in ("", "+", "#"):
        reserved = operator != ""
        tokens.append(Text("#" if operator == "#" else ""))
        for index, name in enumerate(names):
            if index:
                tokens.append(Text(","))
            tokens.append(Slot(name, reserved=reserved))
    elif operator in (".", "/"):
        for name in names:
            tokens += [Text(operator), Slot(name, reserved=False)]
    elif operator == ";":
        for name in names:
            tokens += [
                Text(f";{name}"),
                Maybe((Text("="),)),
                Slot(name, reserved=False),
            ]
    else:
        for index, name in enumerate(names):
            separator = operator if index == 0 else "&"
            pair = _joined([Text(f"{separator}{name}="), Slot(name, reserved=False)])
            tokens.append(Maybe(pair))
    return tokens
