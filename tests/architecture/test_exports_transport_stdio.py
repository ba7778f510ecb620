"""The public surface of wymcp.transport.stdio is exactly this list."""

from __future__ import annotations

import wymcp.transport.stdio


def test_the_facade_exports_run_serve_and_the_engine_builder():
    assert wymcp.transport.stdio.__all__ == ["build_stdio_engine", "run", "serve"]
    for name in wymcp.transport.stdio.__all__:
        assert callable(getattr(wymcp.transport.stdio, name))


def test_the_stdio_transport_never_imports_aiohttp():
    import subprocess
    import sys

    code = (
        "import sys, wymcp.transport.stdio as s; s.run; print('aiohttp' in sys.modules)"
    )
    done = subprocess.run(  # noqa: S603 - this interpreter, fixed code
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert done.stdout.strip() == "False"
