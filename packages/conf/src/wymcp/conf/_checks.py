"""System checks over loaded settings, each with a stable id (`wymcp check`).

Errors (`wymcp.E…`) stop the server; warnings (`wymcp.W…`) point at a risk.
These are conf's own; each package passes its own checks in (see `Check`).
"""

from __future__ import annotations

import importlib.util
import ipaddress
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING, Literal, TypeAlias

from wymcp.conf._engine import build_engine
from wymcp.conf._path_clash import metrics_path_problems
from wymcp.conf._problems import ERROR, UNKNOWN_NAME, WARNING, CheckMessage, echo_limit
from wymcp.conf._publish_size import tools_list_report
from wymcp.conf._rate_rule_names import rate_rule_name_warnings
from wymcp.conf._served import broker_missing
from wymcp.conf._settings import Settings

if TYPE_CHECKING:
    from wymcp.core.server import Engine

UNSERVABLE_DECLARATION = "wymcp.E006"
STATE_SECRET_NOT_SET = "wymcp.W002"  # noqa: S105 - a check id, not a secret
NO_TOOLS = "wymcp.W005"
BROKER_WITHOUT_STATE_SECRET = "wymcp.E008"  # noqa: S105 - a check id, not a secret
TRACING_API_MISSING = "wymcp.E013"
LOOP_MISSING = "wymcp.E014"
TASK_RESULTS_OVER_BUDGET = "wymcp.W016"

Serving = Literal["stdio", "http"]
"""How the one process about to serve the settings serves them (see W002)."""

Check: TypeAlias = Callable[[Settings, Serving | None], list[CheckMessage]]
"""One system check: the problems it finds in the settings (none: `[]`).

conf runs its own; each package hands the commands and workers that compose
it its own (`wymcp.transport.aiohttp.CHECKS`), which pass them to
`run_checks` and `engine_for_command` as `checks`: no registry is global.
"""


def is_loopback(host: str) -> bool:
    """Whether `host` (a HOST value) is `localhost` or a loopback address."""
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


def unknown_name_warning(name: str) -> CheckMessage:
    """The warning for an UPPERCASE name (or `WYMCP_` variable) that is no setting."""
    return CheckMessage(
        WARNING,
        UNKNOWN_NAME,
        f"{name[: echo_limit()]} is not a wymcp setting; wymcp ignores it.",
        "Remove it, or ignore this warning if your own code reads it.",
    )


def unservable(exc: Exception) -> CheckMessage:
    """The error for declarations the engine refused to build (`exc` says why)."""
    from wymcp.core.schema import ConfigurationError  # noqa: PLC0415 - see build_engine

    if isinstance(exc, ConfigurationError):
        return CheckMessage(
            ERROR,
            UNSERVABLE_DECLARATION,
            f"TOOLS, RESOURCES or PROMPTS cannot be served: {str(exc)[:2000]}",
            "Fix the declarations named above.",
        )
    return CheckMessage(
        ERROR,
        UNSERVABLE_DECLARATION,
        "TOOLS, RESOURCES or PROMPTS cannot be served: building the server "
        f"raised {type(exc).__name__}: {str(exc)[:500]}",
        "Each entry must be a wymcp Tool, Resource or Prompt (a class, an "
        "instance or a dotted path to one).",
    )


def _declaration_problems(
    settings: Settings, build: Callable[[Settings], Engine]
) -> list[CheckMessage]:
    try:
        engine = build(settings)
    except Exception as exc:  # noqa: BLE001 - anything a declaration raises
        return [unservable(exc)]
    warnings = rate_rule_name_warnings(settings.RATE_LIMITS, engine)
    return published_size(settings, engine)[1] + warnings


def published_size(
    settings: Settings, engine: Engine
) -> tuple[list[str], list[CheckMessage]]:
    """The size lines of `engine`'s `tools/list` and W017 when over the budget.

    Measured at the newest of `PROTOCOL_VERSIONS` (the most fields).
    """
    version = max(settings.PROTOCOL_VERSIONS)
    return tools_list_report(engine, version, settings.TOOLS_LIST_BUDGET)


def run_checks(
    settings: Settings, *, built: bool = False, checks: Iterable[Check] = ()
) -> list[CheckMessage]:
    """Return every problem with `settings`: errors first, each with its id.

    conf's own checks run, then `checks` (each package's, see `Check`).

    Checking the declarations builds an engine, which is then dropped; a
    command that serves uses `engine_for_command`, which builds just one.
    `built=True` says the caller has already built the engine from these
    settings, so the declarations are known to be servable and are not
    built again.
    """
    found = settings_problems(settings, checks=checks)
    if not built and (settings.TOOLS or settings.RESOURCES or settings.PROMPTS):
        found += _declaration_problems(settings, build_engine)
    return in_order(found)


def in_order(problems: list[CheckMessage]) -> list[CheckMessage]:
    """Errors first, then by id."""
    return sorted(problems, key=lambda problem: (not problem.is_error, problem.id))


def _tracing_problems(settings: Settings) -> list[CheckMessage]:
    """E013: TRACING on without the OpenTelemetry API (the `[otel]` extra)."""
    if not settings.TRACING or importlib.util.find_spec("opentelemetry") is not None:
        return []
    return [
        CheckMessage(
            ERROR,
            TRACING_API_MISSING,
            "TRACING is on but the opentelemetry-api package is not installed.",
            'Install it: pip install "wymcp-core-server[otel]".',
        )
    ]


def _missing_packages(settings: Settings) -> list[CheckMessage]:
    """E010, E014: a setting needs an optional extra that is not installed."""
    found: list[CheckMessage] = []
    if settings.BROKER is not None:
        missing = broker_missing(settings.BROKER)
        if missing is not None:
            found.append(missing)
    if settings.LOOP == "uvloop" and importlib.util.find_spec("uvloop") is None:
        found.append(
            CheckMessage(
                ERROR,
                LOOP_MISSING,
                'LOOP is "uvloop" but the uvloop package is not installed.',
                'Install it: pip install "wymcp-transport-aiohttp[uvloop]", or set '
                'LOOP = "asyncio".',
            )
        )
    return found


def settings_problems(
    settings: Settings,
    *,
    serving: Serving | None = None,
    checks: Iterable[Check] = (),
) -> list[CheckMessage]:
    """Every problem found without building the engine, unsorted: conf's, `checks`.

    `serving` names the one process about to serve these settings: "stdio"
    (`wymcp stdio`) or "http" (`wymcp serve`). W002 is then left out where no
    other process can be handed its sealed state: over stdio, and over HTTP
    on a loopback HOST. `wymcp check` and `GunicornWorker` pass nothing.
    """
    found = [unknown_name_warning(name) for name in settings.unknown]
    secret_set = settings.is_overridden("STATE_SECRET") or bool(settings.STATE_SECRETS)
    alone = serving == "stdio" or (serving == "http" and is_loopback(settings.HOST))
    if not secret_set and settings.BROKER is not None:
        found.append(
            CheckMessage(
                ERROR,
                BROKER_WITHOUT_STATE_SECRET,
                "BROKER is set but neither STATE_SECRETS nor STATE_SECRET is, so "
                "each worker seals request state with its own random key and the "
                "others cannot open it.",
                "Set STATE_SECRETS = [os.environ['WYMCP_STATE_SECRET']] (32 bytes "
                "or more, the same on every worker and host).",
            )
        )
    found += _missing_packages(settings)
    found += metrics_path_problems(settings)
    found.extend(_tracing_problems(settings))
    if not secret_set and settings.BROKER is None and not alone:
        found.append(
            CheckMessage(
                WARNING,
                STATE_SECRET_NOT_SET,
                "STATE_SECRET is not set, so each process makes its own random key "
                "and request state sealed by one worker fails in another.",
                "Set STATE_SECRET (32 bytes or more, the same in every worker) for "
                "multi-worker deployments.",
            )
        )
    if not settings.TOOLS:
        found.append(
            CheckMessage(
                WARNING,
                NO_TOOLS,
                "TOOLS is empty: the server offers only the built-in help tool.",
                'Add your tools, e.g. TOOLS = ["myapp.tools.Tasks"].',
            )
        )
    found += _task_budget_warnings(settings)
    for check in checks:
        found += check(settings, serving)
    return found


def _task_budget_warnings(settings: Settings) -> list[CheckMessage]:
    """W016: a result the tool may return that its task could never keep."""
    each = settings.TASK_MEMORY_BUDGET_PER_PRINCIPAL
    total = settings.TASK_MEMORY_BUDGET
    fits = min(each, total)
    if fits - 2048 >= settings.RESULT_LIMIT:
        return []
    smaller = (
        "TASK_MEMORY_BUDGET_PER_PRINCIPAL" if each <= total else "TASK_MEMORY_BUDGET"
    )
    return [
        CheckMessage(
            WARNING,
            TASK_RESULTS_OVER_BUDGET,
            f"{smaller} ({fits}) does not hold a result of RESULT_LIMIT "
            f"({settings.RESULT_LIMIT}) bytes, so a task whose result is near the "
            "limit ends failed instead.",
            "Keep RESULT_LIMIT below TASK_MEMORY_BUDGET_PER_PRINCIPAL and that "
            "at most TASK_MEMORY_BUDGET (the defaults are 16, 32 and 256 MiB).",
        )
    ]
