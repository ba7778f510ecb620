"""`served_engine`'s runners: HTTP, stdio and in-process build from one function."""

from __future__ import annotations

import math
import sys

import pytest

from wymcp.conf import load_settings, served_engine
from wymcp.core.server import Engine, MemorySessionStore

SECRET = "s" * 32


def _unimportable_broker(monkeypatch):
    """The broker's modules unloaded and unimportable: building one would raise."""
    for name in [m for m in sys.modules if m.startswith("wymcp.broker.redis")]:
        monkeypatch.delitem(sys.modules, name)
    monkeypatch.setitem(sys.modules, "wymcp.broker.redis", None)


@pytest.mark.parametrize("runner", ["stdio", "in_process"])
def test_stdio_and_in_process_runners_build_without_the_broker(monkeypatch, runner):
    # one process has no other worker to share with: BROKER is not used
    _unimportable_broker(monkeypatch)
    settings = load_settings(None, BROKER="redis://127.0.0.1:1/0", STATE_SECRET=SECRET)
    engine, served = served_engine(settings, runner=runner)
    assert isinstance(engine, Engine)
    assert served is engine
    assert "wymcp.broker.redis" not in {
        name for name, module in sys.modules.items() if module is not None
    }


def test_the_stdio_session_never_expires_and_its_client_holds_every_stream():
    settings = load_settings(None, MAX_STREAMS=300, MAX_STREAMS_PER_CLIENT=5)
    engine, _ = served_engine(settings, runner="stdio")
    assert engine.options.max_streams_per_client == 300
    store = engine.options.session_store
    assert isinstance(store, MemorySessionStore)
    assert store._idle_timeout == math.inf


def test_http_and_in_process_sessions_expire_as_the_settings_say():
    settings = load_settings(None, SESSION_IDLE_TIMEOUT=120, MAX_STREAMS_PER_CLIENT=5)
    for runner in ("http", "in_process"):
        engine, served = served_engine(settings, runner=runner)  # type: ignore[arg-type]
        assert served is engine
        assert engine.options.max_streams_per_client == 5
        assert engine.options.session_idle_timeout == 120
