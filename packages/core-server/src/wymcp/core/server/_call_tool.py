"""One `tools/call` past its envelope.

The argument shape, the gates, the tool's code, and the shaping of whatever
it returned into a CallToolResult.
"""

from __future__ import annotations

import asyncio
import functools
import json
import logging
import secrets
from collections.abc import Awaitable, Coroutine, Mapping
from json.encoder import c_make_encoder, encode_basestring  # type: ignore[attr-defined]
from types import CoroutineType
from typing import Any, Final

from wymcp.core.gates import (
    Verdict,
    arguments_refusal,
    check,
    check_fast,
    unreadable_refusal,
)
from wymcp.core.schema import (
    ECHO_LIMIT,
    Tool,
    ToolError,
    ToolSpec,
    UnreadableDataError,
    action_binding,
)
from wymcp.core.server._call_deadlines import DeadlineError, Deadlines
from wymcp.core.server._client_key import client_key
from wymcp.core.server._content import Content, ToolResult
from wymcp.core.server._hint import Hint
from wymcp.core.server._jsonrpc import INVALID_PARAMS, RpcError, echo
from wymcp.core.server._middleware import CallRecord, Spans
from wymcp.core.server._off_loop import OffLoopLane
from wymcp.core.server._options import EngineOptions
from wymcp.core.server._result_limit import over_limit, text_within, too_large
from wymcp.core.server._revision import Revision
from wymcp.core.server._task_failure import TaskFailedError
from wymcp.core.server._tool_context import (
    ClientRequestError,
    MissingCapabilityError,
    ToolContext,
)
from wymcp.core.server._typed_data import ON_LOOP_VALUES, more_values_than, read_and_run

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
    spec: ToolSpec, arguments: Mapping[str, Any], record: CallRecord | None = None
) -> tuple[str | None, Any] | dict[str, Any]:
    """The action and data of a multi-action call, or its refusal result."""
    split = split_arguments(spec, arguments)
    if isinstance(split, dict):
        return _refusal(split, record)
    return split


def _refusal(refusal: dict[str, Any], record: CallRecord | None) -> dict[str, Any]:
    """The CallToolResult of a gate's refusal, its code noted in `record`."""
    if record is not None:
        record.refuse(str(refusal.get("error")))
    return {"content": [_text(_dumps(refusal))], "isError": True}


def gate_arguments(
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    *,
    strict: bool,
    record: CallRecord | None = None,
    lane: OffLoopLane | None = None,
    json_bytes: int | None = None,
    caller: tuple[object | None, str | None] = (None, None),
) -> Coroutine[Any, Any, Opened]:
    """The action and the accepted verdict of a call, or the refusal to answer.

    A refusal (of the arguments' shape or of a gate) is a CallToolResult with
    `isError`, the refusal JSON as its text. The gates run on the loop when
    they cost one engine call; their full walk is linear in the data, longer
    on a large body than the event loop may be held, so it runs in a thread
    (through the engine's `lane` for data of over `ON_LOOP_VALUES` values).
    Traced (`record.spans`), they run in a `gates` child span; untraced,
    this returns `_gate`'s coroutine itself (no extra await). `json_bytes`,
    the length of the JSON text the arguments came in if known, spares
    `check_fast` counting the data of a small one. `caller` (the principal
    and the peer) says whose turn a job on the lane takes (`client_key`).
    """
    if record is not None and record.spans is not None:
        return _traced_gate(
            spec, arguments, strict, record, lane, json_bytes=json_bytes, caller=caller
        )
    return _gate(
        spec, arguments, strict, record, lane, json_bytes=json_bytes, caller=caller
    )


async def _traced_gate(
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    strict: bool,  # noqa: FBT001 - private, positional as gate_arguments passes it
    record: CallRecord,
    lane: OffLoopLane | None,
    *,
    json_bytes: int | None,
    caller: tuple[object | None, str | None],
) -> Opened:
    assert record.spans is not None  # noqa: S101 - gate_arguments checked it
    with record.spans.child("gates"):
        return await _gate(
            spec, arguments, strict, record, lane, json_bytes=json_bytes, caller=caller
        )


async def _gate(
    spec: ToolSpec,
    arguments: Mapping[str, Any],
    strict: bool,  # noqa: FBT001 - private, positional as gate_arguments passes it
    record: CallRecord | None,
    lane: OffLoopLane | None,
    *,
    json_bytes: int | None,
    caller: tuple[object | None, str | None],
) -> Opened:
    action = arguments.get("action")
    data = arguments.get("data")
    if spec.plain is not None:  # a plain tool: its arguments are its data
        action, data = None, dict(arguments)
    elif (  # the common envelope, read as `arguments_refusal` accepts it first
        isinstance(action, str)
        and (data is None or isinstance(data, dict))
        and len(arguments) == 1 + ("data" in arguments)
    ):
        if data is None:
            data = {}
    else:  # `also` gates the data the refusal reads: off the loop, as `check`
        split = await asyncio.to_thread(_split, spec, arguments, record)
        if isinstance(split, dict):
            return split
        action, data = split
    verdict = check_fast(spec, action, data, json_bytes=json_bytes)
    if verdict is None:
        walk = functools.partial(check, spec, action, data, strict=strict)
        if lane is not None and more_values_than(data, ON_LOOP_VALUES):
            verdict = await _client_lane(lane, caller).run(walk)
        else:
            verdict = await asyncio.to_thread(walk)
    if not verdict.accepted:
        return _refusal(verdict.refusal or {}, record)
    return action, verdict


def _client_lane(
    lane: OffLoopLane, caller: tuple[object | None, str | None]
) -> OffLoopLane:
    """`lane` as `caller`'s jobs take it: made when a job comes, not per call."""
    return lane.of(functools.partial(client_key, *caller))


def _text(value: str) -> dict[str, Any]:
    return {"type": "text", "text": value}


_ENCODER: Final = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"))
"""Compact JSON (one encoder: json.dumps with options builds one per call)."""


def _dumps(value: object) -> str:
    """Compact JSON text: what `_ENCODER.encode` answers, one frame instead of two.

    `encode` runs this very C encoder (`iterencode`, one shot), fresh each time:
    its record of the containers it is in stays behind when encoding fails.
    An int or a str (what many tools return) is written as `encode` writes it,
    without making an encoder.
    """
    if value.__class__ is int:
        return repr(value)
    if isinstance(value, str):  # as `encode` itself does
        return encode_basestring(value)
    if c_make_encoder is None:  # pragma: no cover - CPython has the C encoder
        return _ENCODER.encode(value)
    encoder = c_make_encoder(
        {},  # markers: circular references are refused as `encode` refuses them
        _ENCODER.default,
        encode_basestring,
        None,  # indent
        ":",
        ",",
        False,  # noqa: FBT003 - sort_keys: c_make_encoder takes no keywords
        False,  # noqa: FBT003 - skipkeys
        True,  # noqa: FBT003 - allow_nan
    )
    return "".join(encoder(value, 0))


_GIVEN: Final = (ToolResult, Content, str, list, tuple)
"""What a tool returns as an explicit answer (`_given`), not a structured value.
A tuple made once: `A | B` in `isinstance` builds a union on every call (~4k
instructions for these five)."""
_SEQUENCES: Final = (list, tuple)
_NO_HINTS: Final = Tool.hints
"""The base class's `hints`: no hints, so a tool that keeps it is not asked."""
_NO_CONTEXT: Final = Tool.action_context
"""The base class's `action_context`: no context, so it is not asked either."""
_NO_ATTRIBUTES: Final[Mapping[str, Any]] = {}
"""The instance attributes of a tool that has no `__dict__`."""


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
        isinstance(value, _SEQUENCES)
        and value
        and all(isinstance(v, Content) for v in value)
    ):
        return [v.to_json() for v in value]
    return None


def gate_content(
    content: list[dict[str, Any]], revision: Revision
) -> list[dict[str, Any]]:
    """Blocks a revision cannot carry: a resource link without titles goes as text."""
    if revision.titles:
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
    revision: Revision,
    options: EngineOptions,
    deadlines: Deadlines,
    call_timeout: float | None,
    opened: tuple[str | None, Verdict] | None = None,
    record: CallRecord | None = None,
    json_bytes: int | None = None,
    lane: OffLoopLane | None = None,
    caller: tuple[object | None, str | None] = (None, None),
) -> dict[str, Any]:
    """Gate the arguments, run the tool and shape its answer, whatever it did.

    A tool still running after `call_timeout` seconds is cancelled through
    `deadlines` and answers `isError` with `errorType: "call_timeout"` at
    once, even if it ignores the cancellation. A result larger than the
    RESULT_LIMIT of `options` answers `errorType: "result_too_large"`.
    `opened` is the arguments' accepted verdict when the gates ran already;
    the tool gets its data as it is (the gates made it for this run). Large
    typed data is read into its class through the engine's `lane`, in
    `caller`'s turn (its principal and peer).
    `record`, when the request is observed, gets the call's outcome.
    """
    if opened is None:
        gated_call = await gate_arguments(
            spec,
            arguments,
            strict=options.strict,
            record=record,
            lane=lane,
            json_bytes=json_bytes,
            caller=caller,
        )
        if isinstance(gated_call, dict):
            return gated_call
        opened = gated_call
    action, verdict = opened
    gated = verdict.data if verdict.data is not None else {}  # this run's alone
    ctx.tool = spec.name
    ctx.action = action
    try:
        done, value = _started(
            spec,
            action,
            _dispatch(spec, action, gated, ctx, lane, caller),
            deadlines=deadlines,
            call_timeout=call_timeout,
            record=record,
        )
        if not done:
            value = await value
        result = _shape(
            spec,
            action,
            value,
            ctx,
            revision=revision,
            limit=options.result_limit,
            record=record,
        )
    except DeadlineError:
        assert call_timeout is not None  # noqa: S101 - only raised with one
        _log.warning("tool %s stopped after %gs", spec.name, call_timeout)
        result = timed_out(spec, action, call_timeout)
        _outcome(record, "call_timeout")
    except UnreadableDataError as error:  # values the schema admits, the class not
        assert action is not None  # noqa: S101 - only typed actions read a class
        result = _refusal(unreadable_refusal(spec, action, error), record)
    except ToolError as error:
        result = _refused(spec, action, error)
        _outcome(record, "tool_error")
    except (InputRequired, MissingCapabilityError, TaskFailedError):
        raise
    except Exception as error:  # noqa: BLE001 - any raise answers tool_raised
        result = raised(spec, action, error, expose=options.expose_exception_messages)
        _outcome(record, "tool_raised")
    if verdict.dropped:
        result.setdefault("_meta", {})[DROPPED_META] = list(verdict.dropped)
    return result


def _started(
    spec: ToolSpec,
    action: str | None,
    work: Awaitable[Any],
    *,
    deadlines: Deadlines,
    call_timeout: float | None,
    record: CallRecord | None,
) -> tuple[bool, Any]:
    """The tool's `work` under its CALL_TIMEOUT, traced when `record` is.

    (True, its value) when it ended on its first step, taken here (most tools
    never wait: no timer, no coroutine of `Deadlines.run`); else (False, what
    the caller awaits at once for the rest).
    """
    if call_timeout is not None:
        if work.__class__ is not CoroutineType:
            work = _awaited(work)
        # the deadline's name, "tool NAME ACTION", joined only if the work waits
        label = ("tool", spec.name, action) if action else ("tool", spec.name)
        if record is None or record.spans is None:
            return deadlines.start(work, call_timeout, label)
        work = deadlines.run(work, call_timeout, label)
    if record is not None and record.spans is not None:
        work = _traced(record.spans, work)
    return False, work


async def _traced(spans: Spans, work: Awaitable[Any]) -> Any:
    """Await the tool's code (and its deadline) in an `execute_tool` child span."""
    with spans.child("execute_tool"):
        return await work


def _outcome(record: CallRecord | None, outcome: str) -> None:
    if record is not None:
        record.outcome = outcome


def _dispatch(  # noqa: PLR0917 - the call's parts, the lane and whose turn it takes
    spec: ToolSpec,
    action: str | None,
    gated: dict[str, Any],
    ctx: ToolContext,
    lane: OffLoopLane | None,
    caller: tuple[object | None, str | None],
) -> Awaitable[Any]:
    """The tool's work on the gated data: its action (read into its class) or run."""
    if action is None:
        return spec.tool.run(gated, ctx)  # type: ignore[no-any-return]
    # one lookup of the action's binding (not a reader's, then a dispatch's)
    binding = action_binding(spec.tool, action)
    if binding is None:
        return spec.tool.run_action(action, gated, ctx)  # type: ignore[no-any-return]
    if binding.structure is None:
        return binding.run(spec.tool, gated, ctx, read=False)
    if lane is not None:
        lane = _client_lane(lane, caller)
    return read_and_run(spec, action, binding.read, gated, ctx, lane)


async def _awaited(work: Awaitable[Any]) -> Any:
    """`work` as a coroutine a deadline can step (a tool may return any awaitable)."""
    return await work


def _refused(spec: ToolSpec, action: str | None, error: ToolError) -> dict[str, Any]:
    message = str(error)
    hints = _hints(spec, action, error)
    if not hints:
        return {"content": [_text(message)], "isError": True}
    return {
        "content": [_text(_dumps({"error": message, "hints": hints}))],
        "isError": True,
    }


def _shape(
    spec: ToolSpec,
    action: str | None,
    value: object,
    ctx: ToolContext,
    *,
    revision: Revision,
    limit: int | None,
    record: CallRecord | None = None,
) -> dict[str, Any]:
    """The CallToolResult of what the tool returned; `too_large` past `limit` bytes.

    A plain value is the structured one, its JSON the text. A tool's `hints`
    and `action_context` run unless they are the base class's, which answer
    nothing.
    """
    given = (
        _given(spec, action, value)
        if value is None or isinstance(value, _GIVEN)
        else None
    )
    dumped: str | None  # the text block holding the structured value, if one does
    plain = None  # the text of the result's one plain text block, if that is all
    if given is not None:
        content, structured, has_structured, is_error, dumped = given
    else:  # a structured value
        structured, has_structured, is_error = value, True, False
        tool = spec.tool
        cls = tool.__class__  # read on the class: no bound method made per call
        own = getattr(tool, "__dict__", _NO_ATTRIBUTES)
        if (
            cls.hints is _NO_HINTS
            and cls.action_context is _NO_CONTEXT
            and "hints" not in own
            and "action_context" not in own
        ):
            plain = dumped = _dumps(value)
            content = [{"type": "text", "text": dumped}]
        else:
            content, dumped = _structured_blocks(spec, action, value, ctx)
    result: dict[str, Any] = {
        "content": content if revision.titles else gate_content(content, revision),
        "isError": is_error,
    }
    if is_error:
        _outcome(record, "tool_error")
    counted = None  # the JSON text of the structuredContent, as RESULT_LIMIT counts it
    if (
        has_structured
        and not is_error
        and spec.output_schema is not None
        and revision.carries_structured(structured)
    ):
        counted = _validated(spec, result, structured, dumped)
    if limit is not None and (plain is None or not text_within(plain, counted, limit)):
        size = over_limit(result["content"], counted, limit)
        if size is not None:
            _log.warning(
                "tool %s returned %d bytes, more than RESULT_LIMIT", spec.name, size
            )
            _outcome(record, "result_too_large")
            return too_large(spec.name, action, limit)
    return result


def _structured_blocks(
    spec: ToolSpec, action: str | None, value: object, ctx: ToolContext
) -> tuple[list[dict[str, Any]], str]:
    """The content of a structured value, its hints and context, and its text."""
    hints = _hints(spec, action, value)
    context = _context(spec, action, ctx)
    if not hints and context is None:
        dumped = _dumps(value)
        return [_text(dumped)], dumped
    extra: dict[str, Any] = {}
    if hints:
        extra["hints"] = hints
    if context is not None:
        extra["context"] = context
    if isinstance(value, dict):
        dumped = _dumps({**value, **extra})
        return [_text(dumped)], dumped
    dumped = _dumps(value)
    return [_text(dumped), _text(_dumps(extra))], dumped


def _given(
    spec: ToolSpec, action: str | None, value: object
) -> tuple[list[dict[str, Any]], Any, bool, bool, str | None] | None:
    """What an explicit answer makes, None for a value that is a structured one.

    Content, structured value, whether there is one, whether it is an error,
    and the text block holding the structured value (if one does).
    """
    if isinstance(value, ToolResult):
        content = [c.to_json() for c in value.content]
        structured, has_structured = value.structured, value.has_structured
        dumped = None
        if has_structured and not content:
            dumped = _dumps(structured)
            content = [_text(dumped)]
        if value.hint_context is not None:
            hints = _hints(spec, action, value.hint_context)
            if hints:
                content.append(_text(_dumps({"hints": hints})))
        return content, structured, has_structured, value.is_error, dumped
    if (blocks := _content_list(value)) is not None:
        return blocks, None, False, False, None
    if isinstance(value, str):
        return [_text(value)], None, False, False, None
    if value is None:
        return [], None, False, False, None
    return None


def _validated(
    spec: ToolSpec, result: dict[str, Any], structured: Any, dumped: str | None
) -> str | None:
    """Add `structuredContent` when it matches the output schema; its JSON text.

    That text is the text block holding it when there is one (about its size),
    else the value encoded. None (and a warning) when it does not match.
    """
    problems = spec.validate_output(structured)
    if problems:
        _log.warning(
            "tool %s: output does not match its output_schema: %s",
            spec.name,
            "; ".join(problems[:5]),
        )
        return None
    result["structuredContent"] = structured
    return dumped if dumped is not None else _dumps(structured)


def unknown_tool(name: object, valid: list[str]) -> RpcError:
    """-32602 for a tool this server does not have."""
    shown = echo(name) if isinstance(name, str) else ""
    return RpcError(
        INVALID_PARAMS,
        f"Unknown tool: {shown}",
        {"reason": f"Unknown tool. Valid tools: {', '.join(valid)}."},
    )
