"""`wymcp list URL` and `wymcp call URL TOOL [ACTION] --data JSON`, printed for people.

A refusal prints its message, paths, problems and the keys it guesses were
meant (`did_you_mean`); `--json` prints the raw
result instead. The exit status is 1 for `isError`, a JSON-RPC error, or a
server that cannot be reached.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import urllib.parse
from collections.abc import Mapping, Sequence
from typing import Any, Final, TextIO

from wymcp.cli._operator_client import OperatorClient, OperatorError
from wymcp.core.server import ECHO_LIMIT

_CUT: Final = ECHO_LIMIT
_REFUSAL_LISTS: Final = (
    ("unknown", "unknown"),
    ("missing", "missing"),
    ("valid_actions", "valid actions"),
)


_CONTROLS: Final = {
    code: "\ufffd" for code in [*range(32), *range(127, 160)] if chr(code) not in "\t\n"
}


def _say(text: str, stream: TextIO) -> None:
    """Print a line, control characters (a terminal's escapes) shown as U+FFFD."""
    print(text.translate(_CONTROLS), file=stream)


def _headers(raw: Sequence[str]) -> dict[str, str]:
    headers: dict[str, str] = {}
    for line in raw:
        name, colon, value = line.partition(":")
        if not colon or not name.strip():
            raise OperatorError(f"--header {line[:_CUT]!r} is not 'Name: value'")
        headers[name.strip()] = value.strip()
    return headers


def _check_url(url: str) -> None:
    try:
        parts = urllib.parse.urlsplit(url)
        usable = parts.scheme in {"http", "https"} and parts.hostname is not None
    except ValueError:  # e.g. an unclosed [IPv6 bracket
        usable = False
    if not usable:
        raise OperatorError(
            f"{url[:_CUT]!r} is not an http:// or https:// URL"
            " (e.g. http://127.0.0.1:8000/mcp)"
        )


def run(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """Run `list` or `call`; return the exit status."""
    try:
        _check_url(args.url)
        client = OperatorClient(
            args.url,
            protocol=args.protocol,
            headers=_headers(args.header),
            timeout=args.timeout,
        )
        if args.command == "list":
            return asyncio.run(_list(client, args.json, out))
        return asyncio.run(_call(client, args, out, err))
    except OperatorError as exc:
        _say(f"wymcp {args.command}: {exc}", err)
        return 1


def _line(text: object) -> str:
    """The first line of a description, cut for a terminal."""
    first = str(text or "").strip().splitlines()[0] if str(text or "").strip() else ""
    return first if len(first) <= _CUT else first[: _CUT - 1] + "…"


def _actions(tool: Mapping[str, Any]) -> list[str]:
    schema = tool.get("inputSchema")
    properties = schema.get("properties") if isinstance(schema, dict) else None
    action = properties.get("action") if isinstance(properties, dict) else None
    values = action.get("enum") if isinstance(action, dict) else None
    return [str(value) for value in values] if isinstance(values, list) else []


async def _list(client: OperatorClient, raw: bool, out: TextIO) -> int:  # noqa: FBT001 - the parsed --raw flag, passed on
    async with client:
        tools = await client.list_all("tools/list", "tools")
        resources = await client.list_all("resources/list", "resources", optional=True)
        templates = await client.list_all(
            "resources/templates/list", "resourceTemplates", optional=True
        )
        prompts = await client.list_all("prompts/list", "prompts", optional=True)
    if raw:
        listing = {
            "tools": tools,
            "resources": resources,
            "resourceTemplates": templates,
            "prompts": prompts,
        }
        _say(json.dumps(listing, indent=2, ensure_ascii=False), out)
        return 0
    _say(f"tools ({len(tools)}):", out)
    for tool in tools:
        _say(f"  {_line(tool.get('name'))}  {_line(tool.get('description'))}", out)
        if actions := _actions(tool):
            _say(f"    actions: {', '.join(actions)}", out)
    _say(f"resources ({len(resources)}):", out)
    for item in resources:
        _say(f"  {_line(item.get('uri'))}  {_line(item.get('name'))}", out)
    _say(f"resource templates ({len(templates)}):", out)
    for item in templates:
        _say(f"  {_line(item.get('uriTemplate'))}  {_line(item.get('name'))}", out)
    _say(f"prompts ({len(prompts)}):", out)
    for prompt in prompts:
        names = [
            str(argument.get("name")) + ("" if argument.get("required") else "?")
            for argument in prompt.get("arguments") or []
            if isinstance(argument, dict)
        ]
        _say(
            f"  {_line(prompt.get('name'))}({', '.join(names)})"
            f"  {_line(prompt.get('description'))}",
            out,
        )
    return 0


def _arguments(args: argparse.Namespace) -> dict[str, Any]:
    try:
        data = json.loads(args.data)
    except ValueError as exc:
        raise OperatorError(f"--data is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise OperatorError("--data must be a JSON object")
    if args.action is None:
        return data
    return {"action": args.action, "data": data}


async def _call(
    client: OperatorClient, args: argparse.Namespace, out: TextIO, err: TextIO
) -> int:
    arguments = _arguments(args)
    async with client:
        reply = await client.call_tool(args.tool, arguments)
    answer = reply.response or {}
    error = answer.get("error")
    if isinstance(error, dict):
        if args.json:
            _say(json.dumps(answer, indent=2, ensure_ascii=False), out)
        _say(f"wymcp call: JSON-RPC {reply.error_text}", err)
        return 1
    result = answer.get("result")
    if not isinstance(result, dict):
        _say("wymcp call: the answer has neither result nor error", err)
        return 1
    if args.json:
        _say(json.dumps(result, indent=2, ensure_ascii=False), out)
        return 1 if result.get("isError") or _asks(result) else 0
    if _asks(result):
        asked = sorted(
            str(request.get("method"))
            for request in (result.get("inputRequests") or {}).values()
            if isinstance(request, dict)
        )
        _say(
            f"wymcp call: the tool asks the client for input ({', '.join(asked)});"
            " `wymcp call` cannot answer. Use a client that can.",
            err,
        )
        return 1
    if result.get("isError"):
        print_failure(result, err)
        return 1
    _say(_success_text(result), out)
    return 0


def _asks(result: Mapping[str, Any]) -> bool:
    return result.get("resultType") == "input_required"


def _texts(result: Mapping[str, Any]) -> list[str]:
    return [
        str(block.get("text", ""))
        for block in result.get("content") or []
        if isinstance(block, dict) and block.get("type") == "text"
    ]


def _success_text(result: Mapping[str, Any]) -> str:
    if "structuredContent" in result:
        return json.dumps(result["structuredContent"], indent=2, ensure_ascii=False)
    texts = _texts(result)
    if len(texts) == 1:
        try:
            return json.dumps(json.loads(texts[0]), indent=2, ensure_ascii=False)
        except ValueError:
            return texts[0]
    return "\n".join(texts)


def _refusal(result: Mapping[str, Any]) -> dict[str, Any] | None:
    texts = _texts(result)
    if len(texts) != 1:
        return None
    try:
        payload = json.loads(texts[0])
    except ValueError:
        return None
    if isinstance(payload, dict) and "error" in payload and "message" in payload:
        return payload
    return None


def _print_keys(refusal: Mapping[str, Any], err: TextIO) -> None:
    """The keys a refusal lists (unknown, missing, valid actions), and its guesses."""
    for key, label in _REFUSAL_LISTS:
        values = refusal.get(key)
        if isinstance(values, list) and values:
            _say(f"  {label}: {', '.join(str(value) for value in values)}", err)
    suggested = refusal.get("did_you_mean")
    if isinstance(suggested, dict) and suggested:
        pairs = ", ".join(f"{sent} -> {meant}" for sent, meant in suggested.items())
        _say(f"  did you mean: {pairs}", err)


def print_failure(result: Mapping[str, Any], err: TextIO) -> None:
    """Print an `isError` result: a refusal field by field, a tool error as text."""
    refusal = _refusal(result)
    if refusal is None:
        text = "\n".join(_texts(result))
        _say(f"tool error: {text[:4000]}", err)
        return
    _say(f"refused ({refusal['error']}): {refusal['message']}", err)
    _print_keys(refusal, err)
    for count in ("unknown_count", "error_count"):
        listed = refusal.get("unknown" if count == "unknown_count" else "errors")
        total = refusal.get(count)
        if isinstance(total, int) and isinstance(listed, list) and total > len(listed):
            _say(f"  ({total} in all; the first {len(listed)} are shown)", err)
    groups = refusal.get("required_one_of")
    if isinstance(groups, list) and groups:
        alternatives = " OR ".join(
            "(" + " + ".join(str(name) for name in group) + ")"
            for group in groups
            if isinstance(group, list)
        )
        _say(f"  one of: {alternatives}", err)
    for entry in refusal.get("errors") or []:
        if isinstance(entry, dict):
            problems = "; ".join(str(p) for p in entry.get("problems") or [])
            _say(f"  {entry.get('path')}: {problems}", err)
    if isinstance(refusal.get("help"), str):
        _say(f"  see: {refusal['help']}", err)
