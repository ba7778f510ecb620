"""System checks over loaded settings, each with a stable id (`wymcp check`).

Errors (`wymcp.E…`) stop the server; warnings (`wymcp.W…`) point at a risk.
"""

from __future__ import annotations

import importlib.util
import ipaddress
from collections.abc import Callable
from typing import TYPE_CHECKING, Literal

from wymcp.conf._engine import build_engine
from wymcp.conf._problems import ERROR, UNKNOWN_NAME, WARNING, CheckMessage, echo_limit
from wymcp.conf._publish_size import tools_list_report
from wymcp.conf._served import broker_missing
from wymcp.conf._settings import Settings

if TYPE_CHECKING:
    from wymcp.core.server import Engine

UNSERVABLE_DECLARATION = "wymcp.E006"
STATE_SECRET_NOT_SET = "wymcp.W002"  # noqa: S105 - a check id, not a secret
REMOTE_HOST_NOT_ALLOWED = "wymcp.W003"
HOST_CHECK_DISABLED = "wymcp.W004"
NO_TOOLS = "wymcp.W005"
RESOURCE_NOT_SET = "wymcp.W006"
OFFLINE_ACCESS_LISTED = "wymcp.W007"
STREAMS_TAKE_ALL_CONNECTIONS = "wymcp.W012"
BROKER_WITHOUT_STATE_SECRET = "wymcp.E008"  # noqa: S105 - a check id, not a secret
METRICS_CLIENT_MISSING = "wymcp.E011"
TRACING_API_MISSING = "wymcp.E013"
LOOP_MISSING = "wymcp.E014"
BODY_OVER_MEMORY_BUDGET = "wymcp.W013"
TASK_RESULTS_OVER_BUDGET = "wymcp.W016"

Serving = Literal["stdio", "http"]
"""How the one process about to serve the settings serves them (see W002)."""


def _is_loopback(host: str) -> bool:
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
    return published_size(settings, engine)[1]


def published_size(
    settings: Settings, engine: Engine
) -> tuple[list[str], list[CheckMessage]]:
    """The size lines of `engine`'s `tools/list` and W017 when over the budget.

    Measured at the newest of `PROTOCOL_VERSIONS` (the most fields).
    """
    version = max(settings.PROTOCOL_VERSIONS)
    return tools_list_report(engine, version, settings.TOOLS_LIST_BUDGET)


def _auth_warnings(settings: Settings) -> list[CheckMessage]:
    if settings.AUTH is None:
        return []
    found: list[CheckMessage] = []
    if settings.AUTH_RESOURCE is None:
        found.append(
            CheckMessage(
                WARNING,
                RESOURCE_NOT_SET,
                "AUTH is set but AUTH_RESOURCE is not, so the resource identifier "
                "in the metadata is derived from each request's Host header.",
                'Set AUTH_RESOURCE = "https://mcp.example.com/mcp", the audience '
                "your authorization server issues tokens for.",
            )
        )
    if (
        "offline_access"
        in settings.AUTH_SCOPES_SUPPORTED + settings.AUTH_REQUIRED_SCOPES
    ):
        found.append(
            CheckMessage(
                WARNING,
                OFFLINE_ACCESS_LISTED,
                "offline_access is listed in AUTH_SCOPES_SUPPORTED or "
                "AUTH_REQUIRED_SCOPES; MCP servers should not advertise it.",
                "Remove offline_access; clients ask the authorization server for "
                "refresh tokens themselves.",
            )
        )
    return found


def run_checks(settings: Settings, *, built: bool = False) -> list[CheckMessage]:
    """Return every problem with `settings`: errors first, each with its id.

    Checking the declarations builds an engine, which is then dropped; a
    command that serves uses `engine_for_command`, which builds just one.
    `built=True` says the caller has already built the engine from these
    settings, so the declarations are known to be servable and are not
    built again.
    """
    found = settings_problems(settings)
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
    """E010, E011, E014: a setting needs an optional extra that is not installed."""
    found: list[CheckMessage] = []
    if settings.BROKER is not None:
        missing = broker_missing(settings.BROKER)
        if missing is not None:
            found.append(missing)
    if settings.METRICS and importlib.util.find_spec("prometheus_client") is None:
        found.append(
            CheckMessage(
                ERROR,
                METRICS_CLIENT_MISSING,
                "METRICS is on but the prometheus_client package is not installed.",
                'Install it: pip install "wymcp-transport-aiohttp[metrics]".',
            )
        )
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
    settings: Settings, *, serving: Serving | None = None
) -> list[CheckMessage]:
    """Every problem found without building the engine (unsorted).

    `serving` names the one process about to serve these settings: "stdio"
    (`wymcp stdio`) or "http" (`wymcp serve`). W002 is then left out where no
    other process can be handed its sealed state: over stdio, and over HTTP
    on a loopback HOST. `wymcp check` and `GunicornWorker` pass nothing.
    """
    found = [unknown_name_warning(name) for name in settings.unknown]
    secret_set = settings.is_overridden("STATE_SECRET") or bool(settings.STATE_SECRETS)
    alone = serving == "stdio" or (serving == "http" and _is_loopback(settings.HOST))
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
    if not _is_loopback(settings.HOST) and not settings.ALLOWED_HOSTS:
        found.append(
            CheckMessage(
                WARNING,
                REMOTE_HOST_NOT_ALLOWED,
                f"HOST {settings.HOST[: echo_limit()]!r} is not a loopback address, "
                "but only "
                "loopback Host headers are allowed, so remote clients get 403.",
                "List the names clients use in ALLOWED_HOSTS, e.g. "
                '["mcp.example.com"].',
            )
        )
    if "*" in settings.ALLOWED_HOSTS or "*" in settings.ALLOWED_ORIGINS:
        found.append(
            CheckMessage(
                WARNING,
                HOST_CHECK_DISABLED,
                'ALLOWED_HOSTS or ALLOWED_ORIGINS holds "*", which turns off the '
                "protection against DNS rebinding.",
                "List the exact hosts and origins instead.",
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
    if settings.MAX_STREAMS >= settings.MAX_CONNECTIONS:
        found.append(
            CheckMessage(
                WARNING,
                STREAMS_TAKE_ALL_CONNECTIONS,
                f"MAX_STREAMS ({settings.MAX_STREAMS}) is not below MAX_CONNECTIONS "
                f"({settings.MAX_CONNECTIONS}), so open streams can take every "
                "connection and every other client gets 503.",
                "Keep MAX_STREAMS well below MAX_CONNECTIONS (the defaults are "
                "500 and 1000).",
            )
        )
    budget = settings.BODY_MEMORY_BUDGET
    if budget is not None and budget < settings.BODY_LIMIT:
        found.append(
            CheckMessage(
                WARNING,
                BODY_OVER_MEMORY_BUDGET,
                f"BODY_MEMORY_BUDGET ({budget}) is below BODY_LIMIT "
                f"({settings.BODY_LIMIT}), so a body between the two is always "
                "answered 503.",
                "Keep BODY_MEMORY_BUDGET at least BODY_LIMIT (the defaults are "
                "both 4 MiB).",
            )
        )
    return found + _task_budget_warnings(settings) + _auth_warnings(settings)


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
