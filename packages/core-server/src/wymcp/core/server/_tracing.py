"""OpenTelemetry spans of each request (`TRACING`), after the MCP semantic conventions.

Imported only when an engine is made with tracing on: `opentelemetry-api`
(the `[otel]` extra) is never imported otherwise. The parent is the trace
context in `params._meta`, else the HTTP `traceparent` header.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any, Final

from opentelemetry import context as otel_context
from opentelemetry import propagate, trace
from opentelemetry.trace import Link, SpanKind, Status, StatusCode

from wymcp.core.server._call_deadlines import DeadlineError
from wymcp.core.server._jsonrpc import RpcError

if TYPE_CHECKING:
    from wymcp.core.server._call import Call
    from wymcp.core.server._middleware import CallRecord, Next, Result

_CARRIED: Final = {"traceparent": 128, "tracestate": 512, "baggage": 8192}
"""The `_meta` keys (and HTTP headers) read as trace context, with the longest
value read: a longer one is ignored, so the propagators parse bounded text."""
_ID_CHARS: Final = 128
"""How much of a request id or resource URI an attribute keeps."""
_RESOURCE_METHODS: Final = frozenset(
    {"resources/read", "resources/subscribe", "resources/unsubscribe"}
)


def _carrier(values: Callable[[str], object]) -> dict[str, str]:
    """The trace-context entries `values` gives, each a bounded string."""
    carrier: dict[str, str] = {}
    for key, longest in _CARRIED.items():
        value = values(key)
        if isinstance(value, str) and len(value) <= longest:
            carrier[key] = value
    return carrier


def _header(call: Call) -> Callable[[str], object]:
    index = call.headers.index

    def one(name: str) -> object:
        values = index.get(name)
        return values[0] if values is not None and len(values) == 1 else None

    return one


class Tracing:
    """Makes the span of each request and its children, on the global provider.

    The tracer is taken from `opentelemetry.trace` when the engine is made: a
    provider set later (by your LIFESPAN or `opentelemetry-instrument`) is
    used from then on, through the API's proxy.
    """

    def __init__(self, known_prompt: Callable[[str], bool]) -> None:
        self._tracer = trace.get_tracer("wymcp")
        self._known_prompt = known_prompt

    def _parent(self, call: Call) -> tuple[otel_context.Context | None, list[Link]]:
        """The parent context: `_meta`'s, else the HTTP header's; links to the rest."""
        links: list[Link] = []
        ambient = trace.get_current_span().get_span_context()
        if ambient.is_valid:
            links.append(Link(ambient))
        meta = call.meta
        from_meta = _carrier(meta.get) if meta else {}
        from_http = _carrier(_header(call)) if call.headers.index else {}
        parent = propagate.extract(from_meta) if "traceparent" in from_meta else None
        if "traceparent" in from_http:
            http = propagate.extract(from_http)
            if parent is None:
                parent = http
            else:
                linked = trace.get_current_span(http).get_span_context()
                if linked.is_valid:
                    links.append(Link(linked))
        return parent, links

    def _name_and_attributes(
        self, record: CallRecord, call: Call
    ) -> tuple[str, dict[str, Any]]:
        method = call.method
        attributes: dict[str, Any] = {
            "mcp.method.name": method,
            "mcp.protocol.version": call.version,
        }
        if record.session is not None:
            attributes["mcp.session.id"] = record.session
        if call.id is not None:
            attributes["jsonrpc.request.id"] = str(call.id)[:_ID_CHARS]
        if call.peer is not None:
            attributes["client.address"] = call.peer
        name = method
        params = call.params
        if method == "tools/call":
            name = _tool(record, attributes)
        elif method == "prompts/get":
            prompt = params.get("name")
            if isinstance(prompt, str) and self._known_prompt(prompt):
                attributes["gen_ai.prompt.name"] = prompt
                name = f"{method} {prompt}"
        elif method in _RESOURCE_METHODS:
            uri = params.get("uri")
            if isinstance(uri, str):
                attributes["mcp.resource.uri"] = uri[:_ID_CHARS]
        return name, attributes

    async def run(self, record: CallRecord, call: Call, handler: Next) -> Result:
        """Await `handler` inside the request's span; its outcome as `error.type`."""
        parent, links = self._parent(call)
        name, attributes = self._name_and_attributes(record, call)
        span = self._tracer.start_span(
            name,
            context=parent,
            kind=SpanKind.SERVER,
            attributes=attributes,
            links=links,
        )
        record.spans = _RequestSpans(self._tracer, record)
        token = otel_context.attach(trace.set_span_in_context(span, parent))
        try:
            result = await handler()
            if record.outcome != "ok":
                _failed(span, record.outcome, None)
        except RpcError as error:
            span.set_attribute("rpc.response.status_code", str(error.code))
            # the outcome, not the message: it may quote the request (a name)
            _failed(span, record.outcome, record.outcome)
            raise
        except BaseException:
            _failed(span, record.outcome, None)
            raise
        finally:
            otel_context.detach(token)
            span.end()
        return result


def _tool(record: CallRecord, attributes: dict[str, Any]) -> str:
    """The span name of a `tools/call`; its tool and action in `attributes`.

    A tool the catalogue lacks is not named: the span name and the attributes
    stay within the catalogue's names, whatever a client sends.
    """
    attributes["gen_ai.operation.name"] = "execute_tool"
    if not record.known_tool or record.tool is None:
        return "tools/call"
    attributes["gen_ai.tool.name"] = record.tool
    if record.known_action and record.action is not None:
        attributes["wymcp.action"] = record.action
    return f"tools/call {record.tool}"


def _failed(span: trace.Span, outcome: str, message: str | None) -> None:
    span.set_attribute("error.type", "_OTHER" if outcome == "ok" else outcome)
    span.set_status(Status(StatusCode.ERROR, message))


def _class_name(error: BaseException) -> str:
    """The exception's class, as `error.type` names one (module-qualified).

    CALL_TIMEOUT's stop is the conventions' `timeout`.
    """
    if isinstance(error, DeadlineError):
        return "timeout"
    cls = type(error)
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


class _RequestSpans:
    """The children of one request's span (`CallRecord.spans`)."""

    def __init__(self, tracer: trace.Tracer, record: CallRecord) -> None:
        self._tracer = tracer
        self._record = record

    @contextmanager
    def child(self, kind: str) -> Iterator[object]:
        """`gates {tool}` or `execute_tool {tool}`.

        Its `error.type` is the class of what the code raised (the conventions'
        rule for exceptions), else the refusal it left (a gate's code).
        """
        record = self._record
        attributes: dict[str, Any] = {}
        name = kind
        if record.known_tool and record.tool is not None:
            attributes["gen_ai.tool.name"] = record.tool
            name = f"{kind} {record.tool}"
        if kind == "execute_tool":
            attributes["gen_ai.operation.name"] = "execute_tool"
        with self._tracer.start_as_current_span(
            name,
            kind=SpanKind.INTERNAL,
            attributes=attributes,
            record_exception=False,
            set_status_on_exception=False,
        ) as span:
            try:
                yield span
            except BaseException as error:
                _failed(span, _class_name(error), None)
                raise
            if record.outcome != "ok":
                _failed(span, record.outcome, None)

    def inject(self, meta: dict[str, Any]) -> None:
        """Put the current span's context in `meta` (`traceparent`, `tracestate`)."""
        propagate.inject(meta)
