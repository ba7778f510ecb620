"""In-process micro-benchmark: what TRACING costs per ``tools/call``.

Run: ``.venv/bin/python benchmarks/trace_micro.py [N]``. The ``calc add`` call of
``engine_micro.py`` goes through ``Engine.post`` at 2026-07-28 with tracing off
(the default: no record, OpenTelemetry never imported, checked here), then on
with the API's no-op tracer (no SDK installed as the provider), then on with the
SDK's ``TracerProvider`` and a processor that drops every span (span creation,
attributes and the ``_meta`` parent: the server's own part of any exporter).
Best-of-5 process CPU, microseconds, the calls alternating between the rows.
"""

from __future__ import annotations

import asyncio
import sys
import time

from bench_wymcp_tools import Calc
from engine_micro import _Sink, modern_exchange
from wymcp.core.server import Engine, EngineOptions, Exchange

TRACEPARENT = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"


async def _once(engine: Engine, number: int, *, parent: bool) -> float:
    sink = _Sink()
    template = modern_exchange()
    body = template.body
    if parent:
        params = {**body["params"], "_meta": {**body["params"]["_meta"]}}
        params["_meta"]["traceparent"] = TRACEPARENT
        body = {**body, "params": params}
    exchanges = [Exchange("POST", template.headers, body) for _ in range(number)]
    cpu = time.process_time()
    for exchange in exchanges:
        await engine.post(exchange, sink)
    return (time.process_time() - cpu) / number * 1e6


async def main(number: int) -> None:
    off = Engine(tools=[Calc])
    await _once(off, number, parent=True)
    loaded = sorted(m for m in sys.modules if m.startswith("opentelemetry"))
    assert not loaded, loaded  # noqa: S101 - what "off" promises
    noop = Engine(tools=[Calc], options=EngineOptions(tracing=True))
    rows: dict[str, list[float]] = {"tracing off (the default)": [], "on, no SDK": []}
    for _ in range(5):
        rows["tracing off (the default)"].append(await _once(off, number, parent=True))
        rows["on, no SDK"].append(await _once(noop, number, parent=True))

    from opentelemetry import trace  # noqa: PLC0415 - only after "off" ran
    from opentelemetry.sdk.trace import SpanProcessor, TracerProvider  # noqa: PLC0415 - the optional [otel] SDK

    provider = TracerProvider()
    provider.add_span_processor(SpanProcessor())  # receives and drops each span
    trace.set_tracer_provider(provider)
    sdk = Engine(tools=[Calc], options=EngineOptions(tracing=True))
    rows["on, SDK (3 spans, dropped)"] = []
    rows["on, SDK, no _meta parent"] = []
    for _ in range(5):
        rows["on, SDK (3 spans, dropped)"].append(await _once(sdk, number, parent=True))
        rows["on, SDK, no _meta parent"].append(await _once(sdk, number, parent=False))
    for label, samples in rows.items():
        print(f"{label:30} {min(samples):7.1f} us/call CPU")
    for engine in (off, noop, sdk):
        await engine.aclose()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]) if len(sys.argv) > 1 else 5000))
