"""`GunicornWorker`: aiohttp's gunicorn worker, serving with wymcp's runner.

aiohttp's own worker builds a plain `AppRunner`, so a call is not cancelled
when its client leaves, and `HEADER_TIMEOUT` and `MAX_CONNECTIONS` do not
apply. This worker hands aiohttp's worker the runner `wymcp serve` uses (the
worker accepts an async factory that returns an `AppRunner`).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from aiohttp import web
from aiohttp.worker import GunicornWebWorker

from wymcp.conf import run_checks
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
    gunicorn's error log.
    """

    def load_wsgi(self) -> None:
        """Load the application, then serve it through wymcp's runner."""
        super().load_wsgi()
        loaded: object = self.wsgi  # type: ignore[has-type] # gunicorn's, untyped
        self.wsgi = self._runner_factory(loaded)

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
            for problem in run_checks(settings, built=True):
                (logger.error if problem.is_error else logger.warning)("%s", problem)
            return make_runner(
                app,
                settings,
                logger=logger,
                access_log=access_log,
                access_log_format=log_format,
            )

        return runner
