"""`wymcp stats URL`: the most refused (tool, action, gate) of a running server.

It reads the server's metrics (`METRICS`) with prometheus_client's parser, so
a tool author sees which actions models get wrong, and how.
"""

from __future__ import annotations

import argparse
import asyncio
import urllib.parse
from collections.abc import Sequence
from typing import Final, TextIO

import aiohttp

from wymcp.core.server import ECHO_LIMIT

_MOST_BYTES: Final = 64 * 1024 * 1024
"""The largest metrics text read (a server with every series stays far below)."""
_REFUSALS: Final = "wymcp_tool_refusals"
_CALLS: Final = "wymcp_tool_calls"


class StatsError(Exception):
    """Why the stats could not be read (printed, exit status 1)."""


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Print the top refusals of the server at `args.url`; return the exit status."""
    try:
        text = asyncio.run(_fetch(args.url, args.token, seconds=args.timeout))
        calls, rows = refusals(text)
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
                hint = " (pass --token)" if response.status == 401 else ""  # noqa: PLR2004
                raise StatsError(
                    f"the server answered {response.status} at that URL{hint}; "
                    "is METRICS on and METRICS_PATH this URL's path?"
                )
            body = await response.content.read(_MOST_BYTES + 1)
    except (aiohttp.ClientError, TimeoutError) as exc:
        raise StatsError(f"cannot read {url[:ECHO_LIMIT]}: {exc}") from None
    if len(body) > _MOST_BYTES:
        raise StatsError("the metrics are larger than 64 MiB; not read")
    return body.decode("utf-8", "replace")


Row = tuple[float, str, str, str]
"""A refusal count and its tool, action and gate."""


def refusals(text: str) -> tuple[dict[tuple[str, str], float], list[Row]]:
    """The tools/call per (tool, action) and the refusals, most first."""
    try:
        from prometheus_client.parser import (  # noqa: PLC0415 - the optional extra
            text_string_to_metric_families,
        )
    except ImportError:
        raise StatsError(
            "reading metrics needs prometheus_client: pip install "
            "'wymcp-transport-aiohttp[metrics]'"
        ) from None
    calls: dict[tuple[str, str], float] = {}
    rows: list[Row] = []
    try:
        for family in text_string_to_metric_families(text):
            for sample in family.samples:
                labels = sample.labels
                key = (labels.get("tool", ""), labels.get("action", ""))
                if sample.name == f"{_CALLS}_total":
                    calls[key] = calls.get(key, 0.0) + sample.value
                elif sample.name == f"{_REFUSALS}_total" and sample.value:
                    rows.append((sample.value, *key, labels.get("gate", "")))
    except ValueError as exc:
        raise StatsError(f"the answer is not Prometheus text: {exc}") from None
    rows.sort(key=lambda row: (-row[0], row[1], row[2], row[3]))
    return calls, rows


def report(
    calls: dict[tuple[str, str], float], rows: Sequence[Row], top: int
) -> list[str]:
    """The table: refusals, their share of the action's calls, tool, action, gate."""
    total = sum(calls.values())
    refused = sum(row[0] for row in rows)
    lines = [f"tools/call: {total:g}, refused by a gate or middleware: {refused:g}"]
    if not rows:
        lines.append("no refusals")
        return lines
    lines.append(f"{'refused':>8}  {'share':>6}  tool  action  gate")
    for count, tool, action, gate in rows[:top]:
        made = calls.get((tool, action), 0.0)
        share = f"{100 * count / made:5.1f}%" if made else "     -"
        lines.append(
            f"{count:>8g}  {share:>6}  {_cut(tool)}  {_cut(action)}  {_cut(gate)}"
        )
    if len(rows) > top:
        lines.append(f"... and {len(rows) - top} more rows (--top)")
    return lines


def _cut(text: str) -> str:
    """A label value for a terminal: printable, at most ECHO_LIMIT characters."""
    shown = "".join(c if c.isprintable() else "\ufffd" for c in text[:ECHO_LIMIT])
    return shown or "-"
