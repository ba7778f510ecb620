"""`wymcp stats URL`: the most refused (tool, action, gate) of a running server.

It reads the server's metrics (`METRICS`) whole and parses only the two
counters it prints, in one linear pass that jumps from one of their lines to
the next (`str.find`), all within `--timeout`, so a tool author sees which
actions models get wrong, and how.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import re
import sys
import time
import urllib.parse
from collections.abc import Sequence
from decimal import Decimal, InvalidOperation
from typing import Final, TextIO

import aiohttp

from wymcp.cli._http_arguments import TOKEN_VARIABLE
from wymcp.core.server import ECHO_LIMIT

_MOST_BYTES: Final = 64 * 1024 * 1024
"""The largest metrics text read (a server with every series stays far below)."""
_LONGEST_LINE: Final = 64 * 1024
"""The longest sample line of the two counters parsed (a real one is < 1 KiB)."""
_MOST_LABELS: Final = 16
"""The most labels on such a line (the server writes 3)."""
_LONGEST_VALUE: Final = 64
"""The longest sample value or timestamp read (a float is < 30 characters)."""
_PREFIX: Final = "wymcp_tool_"
"""The start both counters' lines share: the scan jumps from one to the next."""
_CHECK_EVERY: Final = 1024
"""Sample lines parsed between two looks at the clock."""
_COUNT: Final = re.compile(r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
"""A count as Prometheus writes it: no sign, no `_`, no NaN or Inf (then whole)."""
_LARGEST: Final = Decimal(sys.float_info.max)
"""The largest count read: what a counter (a float) can hold."""
_REFUSALS: Final = "wymcp_tool_refusals_total"
_CALLS: Final = "wymcp_tool_calls_total"


class StatsError(Exception):
    """Why the stats could not be read (printed, exit status 1)."""


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print the top refusals of the server at `args.url`; return the exit status."""
    try:
        token = args.token or os.environ.get(TOKEN_VARIABLE) or None
        deadline = time.monotonic() + args.timeout
        text = asyncio.run(_fetch(args.url, token, seconds=args.timeout))
        calls, rows = refusals(text, deadline=deadline)
    except StatsError as exc:
        print(f"wymcp stats: {exc}", file=err)
        return 1
    for line in report(calls, rows, max(1, args.top)):
        print(line, file=out)
    return 0


async def _fetch(url: str, token: str | None, *, seconds: float) -> str:
    try:
        parts = urllib.parse.urlsplit(url)
        usable = parts.scheme in {"http", "https"} and parts.hostname is not None
    except ValueError:
        usable = False
    if not usable:
        raise StatsError(
            f"{url[:ECHO_LIMIT]!r} is not an http:// or https:// URL"
            " (e.g. http://127.0.0.1:8000/metrics)"
        )
    headers = {"Accept": "text/plain"}
    if token:
        headers["Authorization"] = f"Bearer {token}"
    try:
        async with (
            aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=seconds)) as http,
            http.get(url, headers=headers) as response,
        ):
            if response.status != 200:  # noqa: PLR2004 - the one success
                hint = " (pass --token)" if response.status == 401 else ""  # noqa: PLR2004 - HTTP 401, named by its number
                raise StatsError(
                    f"the server answered {response.status} at that URL{hint}; "
                    "is METRICS on and METRICS_PATH this URL's path?"
                )
            body = bytearray()
            # to the end: `read(n)` returns what is buffered, not n bytes;
            # the session's total timeout bounds the whole read
            async for chunk in response.content.iter_chunked(1024 * 1024):
                body += chunk
                if len(body) > _MOST_BYTES:
                    raise StatsError("the metrics are larger than 64 MiB; not read")
    except TimeoutError:
        raise StatsError(
            f"cannot read {_cut(url)}: no whole answer within {seconds:g} s"
        ) from None
    except aiohttp.ClientError as exc:
        raise StatsError(f"cannot read {_cut(url)}: {_cut(str(exc))}") from None
    return body.decode("utf-8", "replace")


Row = tuple[int, str, str, str]
"""A refusal count and its tool, action and gate."""


def refusals(
    text: str, *, deadline: float | None = None
) -> tuple[dict[tuple[str, str], int], list[Row]]:
    """The tools/call per (tool, action) and the refusals, most first.

    The scan finds each line that starts like the two counters (`str.find`,
    C speed) and never splits the text, so it holds no more than the text;
    only their samples are parsed (each line at most `_LONGEST_LINE`
    characters and `_MOST_LABELS` labels). Time is linear in the text; past
    `deadline` (a `time.monotonic()` value) it stops with StatsError. A
    series given twice is summed; a value that is not a count is refused.
    """
    calls: dict[tuple[str, str], int] = {}
    refused: dict[tuple[str, str, str], int] = {}
    number, counted_to, parsed = 1, 0, 0
    start = 0 if text.startswith(_PREFIX) else _next_line(text, 0)
    while start >= 0:
        name = _CALLS if text.startswith(_CALLS, start) else _REFUSALS
        after = start + len(name)
        end = text.find("\n", start, after + _LONGEST_LINE + 1)
        if text.startswith(name, start) and text[after : after + 1] in {"{", " "}:
            number += text.count("\n", counted_to, start)
            counted_to = start
            _check(deadline, parsed := parsed + 1)
            line = text[after : end if end >= 0 else after + _LONGEST_LINE + 1]
            try:
                labels, value = _sample(line)
            except ValueError as exc:
                raise StatsError(
                    f"the answer is not Prometheus text (line {number}: {exc})"
                ) from None
            key = (labels.get("tool", ""), labels.get("action", ""))
            if name == _CALLS:
                calls[key] = calls.get(key, 0) + value
            else:
                row = (*key, labels.get("gate", ""))
                refused[row] = refused.get(row, 0) + value
        start = _next_line(text, start)
    rows = [(value, *key) for key, value in refused.items() if value]
    rows.sort(key=lambda row: (-row[0], row[1], row[2], row[3]))
    return calls, rows


def _next_line(text: str, at: int) -> int:
    """The start of the next line after `at` that begins like a counter, or -1."""
    found = text.find("\n" + _PREFIX, at)
    return found + 1 if found >= 0 else -1


def _check(deadline: float | None, parsed: int) -> None:
    if (
        deadline is not None
        and not parsed % _CHECK_EVERY
        and time.monotonic() > deadline
    ):
        raise StatsError("the metrics were not parsed within --timeout")


_ESCAPES: Final = {"\\": "\\", '"': '"', "n": "\n"}


def _sample(rest: str) -> tuple[dict[str, str], int]:
    """The labels and value of a sample line after its name (ValueError: why not)."""
    if len(rest) > _LONGEST_LINE:
        raise ValueError(f"a sample line longer than {_LONGEST_LINE} characters")
    labels, at = _labels(rest) if rest.startswith("{") else ({}, 0)
    fields = rest[at:].split()
    if (
        not fields
        or len(fields) > 2  # noqa: PLR2004 - a value and a timestamp
        or any(len(field) > _LONGEST_VALUE for field in fields)
    ):
        raise ValueError("a sample has no value (or more than a value and a time)")
    return labels, _count(fields[0])


def _count(field: str) -> int:
    """The whole, finite, non-negative number `field` writes (ValueError: not one).

    prometheus_client writes a counter as a float (`1234567.0`,
    `1.234567e+06`): read exactly (`Decimal`), it is a count if whole and
    within a float's range. At most `_LONGEST_VALUE` characters: bounded work.
    """
    try:
        value = Decimal(field) if _COUNT.fullmatch(field) else None
    except InvalidOperation:  # an exponent past what Decimal holds
        value = None
    if value is None or value > _LARGEST or value != value.to_integral_value():
        raise ValueError(f"the value {_cut(field)} is not a count")
    return int(value)


def _labels(rest: str) -> tuple[dict[str, str], int]:
    """The `{...}` labels at the start of `rest` and the index past them."""
    labels: dict[str, str] = {}
    at = 1
    while True:
        at = _skip_spaces(rest, at)
        if rest.startswith("}", at):
            return labels, at + 1
        if len(labels) == _MOST_LABELS:
            raise ValueError(f"more than {_MOST_LABELS} labels")
        equals = rest.find("=", at)
        label = rest[at:equals].strip() if equals > 0 else ""
        if not label.isidentifier() or not rest.startswith('"', equals + 1):
            raise ValueError('a label is not name="value"')
        value, at = _quoted(rest, equals + 2)
        labels[label] = value
        at = _skip_spaces(rest, at)
        if rest.startswith(",", at):
            at += 1
        elif not rest.startswith("}", at):
            raise ValueError("labels are not separated by commas")


def _skip_spaces(text: str, at: int) -> int:
    while text.startswith(" ", at):
        at += 1
    return at


def _quoted(text: str, at: int) -> tuple[str, int]:
    """The label value starting at `at` (after its quote) and the index past it.

    Each quote and backslash is found once (a search goes on from the last),
    so a value full of escapes is read in linear time.
    """
    parts: list[str] = []
    quote = text.find('"', at)
    while True:
        if quote < 0:
            raise ValueError("a label value has no closing quote")
        slash = text.find("\\", at, quote)
        if slash < 0:
            parts.append(text[at:quote])
            return "".join(parts), quote + 1
        parts.append(text[at:slash])
        escaped = text[slash + 1 : slash + 2]
        parts.append(_ESCAPES.get(escaped, "\\" + escaped))
        at = slash + 2
        if quote < at:
            quote = text.find('"', at)


def report(
    calls: dict[tuple[str, str], int], rows: Sequence[Row], top: int
) -> list[str]:
    """The table: refusals, their share of the action's calls, tool, action, gate."""
    total = sum(calls.values())
    refused = sum(row[0] for row in rows)
    lines = [f"tools/call: {total}, refused by a gate or middleware: {refused}"]
    if not rows:
        lines.append("no refusals")
        return lines
    lines.append(f"{'refused':>8}  {'share':>6}  tool  action  gate")
    for count, tool, action, gate in rows[:top]:
        made = calls.get((tool, action), 0)
        share = f"{100 * count / made:5.1f}%" if made else "     -"
        lines.append(
            f"{count:>8}  {share:>6}  {_cut(tool)}  {_cut(action)}  {_cut(gate)}"
        )
    if len(rows) > top:
        lines.append(f"... and {len(rows) - top} more rows (--top)")
    return lines


def _cut(text: str) -> str:
    r"""A server's text for a terminal: printable, at most ECHO_LIMIT characters.

    A control or format character is shown escaped (`\x1b`, `\u202e`), never sent.
    """
    shown = "".join(
        c if c.isprintable() else c.encode("unicode_escape").decode("ascii")
        for c in text[:ECHO_LIMIT]
    )
    return shown or "-"
