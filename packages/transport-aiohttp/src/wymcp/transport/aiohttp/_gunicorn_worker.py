"""`GunicornWorker`: aiohttp's gunicorn worker, serving with wymcp's runner.

aiohttp's own worker builds a plain `AppRunner` (a call is not cancelled when
its client leaves; `HEADER_TIMEOUT`, `MAX_CONNECTIONS` do not apply). This one
hands it the runner `wymcp serve` uses, on the event loop `LOOP` names.
"""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.worker import GunicornWebWorker

from wymcp.conf import Settings, load_settings, loop_factory, run_checks
from wymcp.transport.aiohttp._checks import CHECKS
from wymcp.transport.aiohttp._runner import make_runner
from wymcp.transport.aiohttp._setup import get_endpoint


class GunicornWorker(GunicornWebWorker):
    """Serve a wymcp application under gunicorn as `wymcp serve` does.

    Use `gunicorn "wymcp.transport.aiohttp:create_app()" -k
    wymcp.transport.aiohttp.GunicornWorker`. The application (or an async
    factory returning one) must have wymcp set up: its settings give
    `HEADER_TIMEOUT`, `MAX_CONNECTIONS` (per worker) and `SHUTDOWN_GRACE`,
    replacing gunicorn's `--keep-alive`; calls stop when their client leaves.
    gunicorn's access log settings still apply (`--access-logfile`, and
    `--access-logformat` in aiohttp's format, as under aiohttp's worker).
    Each worker logs the problems `wymcp check` finds (W002 when
    `STATE_SECRET` is unset: workers cannot open each other's state, …) to
    gunicorn's error log. The worker runs on the loop `LOOP` names (the
    application's settings; for an async factory, `load_settings()`'s).
    """

    def load_wsgi(self) -> None:
        """Load the application, then serve it through wymcp's runner."""
        super().load_wsgi()
        loaded: object = self.wsgi  # type: ignore[has-type] # gunicorn's, untyped
        self._use_loop(_settings_of(loaded))
        self.wsgi = self._runner_factory(loaded)

    def _use_loop(self, settings: Settings) -> None:
        """Swap aiohttp's fresh loop for the kind `LOOP` names (nothing ran on it)."""
        wanted = loop_factory(settings)()
        if type(wanted) is type(self.loop):
            wanted.close()
            return
        self.loop.close()  # drops the signal handlers init_signals added to it
        self.loop = wanted
        asyncio.set_event_loop(self.loop)
        self.init_signals()

    def _runner_factory(self, loaded: object) -> Callable[[], Awaitable[web.AppRunner]]:
        access_log = self.log.access_log if self.cfg.accesslog else None
        # --access-logformat, checked as aiohttp's worker does (its default
        # becomes aiohttp's; a gunicorn-style `%(name)s` raises here, at load)
        log_format = self._get_valid_log_format(self.cfg.access_log_format)
        logger = self.log

        async def runner() -> web.AppRunner:
            app: Any = loaded
            if not isinstance(app, web.Application) and callable(app):
                app = await app()
            if isinstance(app, web.AppRunner):
                return app
            if not isinstance(app, web.Application):
                raise TypeError(
                    "GunicornWorker serves an aiohttp Application (or an async "
                    f"factory returning one), not {type(app).__name__}."
                )
            settings = get_endpoint(app).settings
            # the application's engine is built: check the rest, not build again
            for problem in run_checks(settings, built=True, checks=CHECKS):
                (logger.error if problem.is_error else logger.warning)("%s", problem)
            gc.freeze()  # what loading built lives as long as the worker (see serve)
            return make_runner(
                app,
                settings,
                logger=logger,
                access_log=access_log,
                access_log_format=log_format,
            )

        return runner


def _settings_of(loaded: object) -> Settings:
    """The settings the loaded application serves (an async factory's: the env's)."""
    if isinstance(loaded, web.Application):
        try:
            return get_endpoint(loaded).settings
        except RuntimeError:  # not set up: the runner says so when it starts
            pass
    return load_settings()
