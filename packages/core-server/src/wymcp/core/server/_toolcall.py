"""One `tools/call` past its envelope.

The argument shape, the gates, the tool's code, and the shaping of whatever
it returned into a CallToolResult.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
import secrets
from collections.abc import Awaitable, Coroutine, Mapping
from typing import Any, Final

from wymcp.core.gates import Verdict, arguments_refusal, check, check_fast
from wymcp.core.schema import ECHO_LIMIT, ToolError, ToolSpec, dispatch_action
from wymcp.core.server._content import Content, ToolResult
from wymcp.core.server._context import (
    ClientRequestError,
    MissingCapabilityError,
    ToolContext,
)
from wymcp.core.server._deadlines import DeadlineError, Deadlines
from wymcp.core.server._hint import Hint
from wymcp.core.server._jsonrpc import INVALID_PARAMS, RpcError, echo
from wymcp.core.server._result_limit import over_limit, too_large
from wymcp.core.server._revision import REVISIONS
from wymcp.core.server._task_failure import TaskFailedError

_log = logging.getLogger("wymcp.core.server")

DROPPED_META: Final = "wymcp/dropped"
"""The result `_meta` key listing what lenient mode dropped."""

_MESSAGE_LIMIT: Final = 500


class InputRequired(Exception):  # noqa: N818 - a control-flow signal, not an error
    """Raised through a tool at 2026-07-28 when it asks the client something.

    The call answers an `input_required` result.
    """

    def __init__(self, result: dict[str, Any]) -> None:
        super().__init__("input required")
        self.result = result


def is_multi_action(spec: ToolSpec) -> bool:
    """Whether the tool dispatches by `action` (else it is a plain tool)."""
    return spec.plain is None


def split_arguments(
    spec: ToolSpec, arguments: Mapping[str, Any]
) -> tuple[str, dict[str, Any]] | dict[str, Any]:
    """The action and data of a multi-action call, or its `invalid_arguments` refusal.

    A root-level mistake (no action, a stray key, a non-string action, non-object
    data) is a tool execution error the model can read, not a JSON-RPC error.
    """
    refusal = arguments_refusal(spec, arguments)
    if refusal is not None:
        return refusal
    action = arguments["action"]
    data = arguments.get("data")
    return action, data if isinstance(data, dict) else {}


Opened = tuple[str | None, Verdict] | dict[str, Any]
"""The action and accepted verdict of a call, or the refusal result to answer."""


def _split(
    spec: ToolSpec, arguments: Mapping[str, Any]
) -> tuple[str | None, Any] | dict[str, Any]:
    """The action and data of a call, or the refusal result of its arguments' shape."""
    if not is_multi_action(spec):
        return None, dict(arguments)
    split = split_arguments(spec, arguments)
    if isinstance(split, dict):
        return {"content": [_text(_dumps(split))], "isError": True}
    return split


async def open_call(
    spec: ToolSpec, arguments: Mapping[str, Any], *, strict: bool
) -> Opened:
    """The action and the accepted verdict of a call, or the refusal to answer.

    A refusal (of the arguments' shape or of a gate) is a CallToolResult with
    `isError`, the refusal JSON as its text. The gates run on the loop when
    they cost one engine call; their full walk is linear in the data, longer
    on a large body than the event loop may be held, so it runs in a thread.
    """
    split = _split(spec, arguments)
    if isinstance(split, dict):
        return split
    action, data = split
    verdict = check_fast(spec, action, data)
    if verdict is None:
        verdict = await asyncio.to_thread(check, spec, action, data, strict=strict)
    return _opened(action, verdict)


def _opened(action: str | None, verdict: Verdict) -> Opened:
    if not verdict.accepted:
        return {"content": [_text(_dumps(verdict.refusal))], "isError": True}
    return action, verdict


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


_dumps = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
"""Compact JSON text (one encoder: json.dumps with options builds one per call)."""


def _hints(spec: ToolSpec, action: str | None, hint_context: Any) -> list[Any]:
    hints = spec.tool.hints(action, hint_context)
    return [h.to_json() if isinstance(h, Hint) else h for h in hints or ()]


def _context(spec: ToolSpec, action: str | None, ctx: ToolContext) -> Any:
    context = spec.tool.action_context(action, ctx)
    if context is not None and not isinstance(context, Mapping):
        raise TypeError("action_context must return a mapping or None")
    return dict(context) if context is not None else None


def _content_list(value: object) -> list[dict[str, Any]] | None:
    if isinstance(value, Content):
        return [value.to_json()]
    if (
        isinstance(value, list | tuple)
        and value
        and all(isinstance(v, Content) for v in value)
    ):
        return [v.to_json() for v in value]
    return None


def gate_content(content: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
    """Blocks a revision cannot carry: a resource link without titles goes as text."""
    if REVISIONS[version].titles:
        return content
    return [
        _text(f"Resource: {b.get('uri')}") if b.get("type") == "resource_link" else b
        for b in content
    ]


def raised(
    spec: ToolSpec,
    action: str | None,
    error: BaseException,
    *,
    expose: bool = False,
) -> dict[str, Any]:
    """The isError answer for a tool that raised: no traceback, no secrets.

    The exception's class and a reference id go to the client; the traceback
    goes to the server log under that reference. `expose` (the setting
    EXPOSE_EXCEPTION_MESSAGES, for development) adds the message, cut. A
    `ClientRequestError` always keeps its message: wymcp wrote it about the
    client's own answer (declined, timed out, too many rounds), no secret.
    """
    reference = secrets.token_hex(4)
    kind = type(error).__name__[:ECHO_LIMIT]
    _log.error(
        "tool %s raised %s (reference %s)",
        spec.name,
        kind,
        reference,
        exc_info=(type(error), error, error.__traceback__),
    )
    payload: dict[str, Any] = {"errorType": "tool_raised", "tool": spec.name}
    if action is not None:
        payload["action"] = action
    payload["exception"] = kind
    payload["reference"] = reference
    if expose or isinstance(error, ClientRequestError):
        message = str(error)
        if len(message) > _MESSAGE_LIMIT:
            message = message[:_MESSAGE_LIMIT] + "…"
    else:
        message = (
            f"The tool raised {kind}. The server log has the details under "
            f"reference {reference}."
        )
    payload["message"] = message
    return {"content": [_text(_dumps(payload))], "isError": True}


def timed_out(spec: ToolSpec, action: str | None, timeout: float) -> dict[str, Any]:
    """The isError answer for a tool stopped after `timeout` seconds."""
    payload: dict[str, Any] = {"errorType": "call_timeout", "tool": spec.name}
    if action is not None:
        payload["action"] = action
    payload["message"] = (
        f"The call did not finish within {timeout:g} seconds (CALL_TIMEOUT) and "
        "was stopped. Retry with less work, or ask for a longer CALL_TIMEOUT."
    )
    return {"content": [_text(_dumps(payload))], "isError": True}


async def call_tool(
    spec: ToolSpec,
    arguments: dict[str, Any],
    ctx: ToolContext,
    *,
    strict: bool,
    version: str,
    deadlines: Deadlines,
    call_timeout: float | None = None,
    result_limit: int | None = None,
    expose_messages: bool = False,
    opened: tuple[str | None, Verdict] | None = None,
) -> dict[str, Any]:
    """Gate the arguments, run the tool and shape its answer.

    A tool still running after `call_timeout` seconds is cancelled through
    `deadlines` and answers `isError` with `errorType: "call_timeout"` at
    once, even if it ignores the cancellation. A result larger than
    `result_limit` bytes answers `errorType: "result_too_large"`. `opened`
    is the arguments' accepted verdict when the gates ran already.
    """
    if opened is None:
        gated_call = await open_call(spec, arguments, strict=strict)
        if isinstance(gated_call, dict):
            return gated_call
        opened = gated_call
    action, verdict = opened
    ctx.tool = spec.name
    ctx.action = action
    gated = dict(verdict.data) if verdict.data is not None else {}
    result = await _outcome(
        spec,
        action,
        gated,
        ctx,
        version=version,
        deadlines=deadlines,
        call_timeout=call_timeout,
        result_limit=result_limit,
        expose_messages=expose_messages,
    )
    if verdict.dropped:
        result.setdefault("_meta", {})[DROPPED_META] = list(verdict.dropped)
    return result


async def _outcome(
    spec: ToolSpec,
    action: str | None,
    gated: dict[str, Any],
    ctx: ToolContext,
    *,
    version: str,
    deadlines: Deadlines,
    call_timeout: float | None,
    result_limit: int | None,
    expose_messages: bool,
) -> dict[str, Any]:
    """Run the tool on gated data; its answer, whatever it did."""
    try:
        if action is not None:
            work = dispatch_action(spec.tool, action, gated, ctx)
        else:
            work = spec.tool.run(gated, ctx)
        if call_timeout is not None:
            label = f"tool {spec.name}" + (f" {action}" if action else "")
            work = deadlines.run(_coroutine(work), call_timeout, label)
        value = await work
        result, structured = _shape(spec, action, value, ctx, version)
        if result_limit is not None:
            size = over_limit(result["content"], structured, result_limit)
            if size is not None:
                _log.warning(
                    "tool %s returned %d bytes, more than RESULT_LIMIT", spec.name, size
                )
                result = too_large(spec.name, action, result_limit)
    except DeadlineError:
        assert call_timeout is not None  # noqa: S101 - only raised with one
        _log.warning("tool %s stopped after %gs", spec.name, call_timeout)
        result = timed_out(spec, action, call_timeout)
    except ToolError as error:
        result = _refused(spec, action, error)
    except (InputRequired, MissingCapabilityError, TaskFailedError):
        raise
    except Exception as error:  # noqa: BLE001 - any raise answers tool_raised
        result = raised(spec, action, error, expose=expose_messages)
    return result


def _coroutine(work: Awaitable[Any]) -> Coroutine[Any, Any, Any]:
    """`work` as a coroutine a task can run (a tool may return any awaitable)."""
    if inspect.iscoroutine(work):
        return work

    async def awaited() -> Any:
        return await work

    return awaited()


def _refused(spec: ToolSpec, action: str | None, error: ToolError) -> dict[str, Any]:
    message = str(error)
    hints = _hints(spec, action, error)
    if not hints:
        return {"content": [_text(message)], "isError": True}
    return {
        "content": [_text(_dumps({"error": message, "hints": hints}))],
        "isError": True,
    }


def _blocks(
    spec: ToolSpec, action: str | None, value: object, ctx: ToolContext
) -> tuple[list[dict[str, Any]], Any, bool]:
    """Content, structured value and whether there is one, for a plain value."""
    if (blocks := _content_list(value)) is not None:
        return blocks, None, False
    if isinstance(value, str):
        return [_text(value)], None, False
    if value is None:
        return [], None, False
    extra: dict[str, Any] = {}
    hints = _hints(spec, action, value)
    if hints:
        extra["hints"] = hints
    context = _context(spec, action, ctx)
    if context is not None:
        extra["context"] = context
    if extra and isinstance(value, dict):
        return [_text(_dumps({**value, **extra}))], value, True
    content = [_text(_dumps(value))]
    if extra:
        content.append(_text(_dumps(extra)))
    return content, value, True


def _shape(
    spec: ToolSpec,
    action: str | None,
    value: object,
    ctx: ToolContext,
    version: str,
) -> tuple[dict[str, Any], str | None]:
    """The CallToolResult, and the JSON text of its structuredContent if it has one.

    That text is the text block holding the structured value when there is
    one (about its size), else the value encoded: what RESULT_LIMIT counts.
    """
    is_error = False
    dumped: str | None = None  # a text block holding the structured value
    if isinstance(value, ToolResult):
        content = [c.to_json() for c in value.content]
        is_error = value.is_error
        structured, has_structured = value.structured, value.has_structured
        if has_structured and not content:
            dumped = _dumps(structured)
            content = [_text(dumped)]
        if value.hint_context is not None:
            hints = _hints(spec, action, value.hint_context)
            if hints:
                content.append(_text(_dumps({"hints": hints})))
    else:
        content, structured, has_structured = _blocks(spec, action, value, ctx)
        if has_structured:
            dumped = content[0]["text"]
    result: dict[str, Any] = {
        "content": gate_content(content, version),
        "isError": is_error,
    }
    if (
        has_structured
        and not is_error
        and spec.output_schema is not None
        and REVISIONS[version].carries_structured(structured)
    ):
        problems = spec.validate_output(structured)
        if problems:
            _log.warning(
                "tool %s: output does not match its output_schema: %s",
                spec.name,
                "; ".join(problems[:5]),
            )
        else:
            result["structuredContent"] = structured
            return result, dumped if dumped is not None else _dumps(structured)
    return result, None


def unknown_tool(name: object, valid: list[str]) -> RpcError:
    """-32602 for a tool this server does not have."""
    shown = echo(name) if isinstance(name, str) else ""
    return RpcError(
        INVALID_PARAMS,
        f"Unknown tool: {shown}",
        {"reason": f"Unknown tool. Valid tools: {', '.join(valid)}."},
    )
