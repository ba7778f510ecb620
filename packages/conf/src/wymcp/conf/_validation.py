"""Check and convert one raw setting value, collecting every problem.

Each setting has a converter that turns what a settings module wrote into the
value `Settings` stores (dotted paths imported, lists made tuples, a secret
made bytes) or raises `Invalid` naming the setting and the fix.
"""

from __future__ import annotations

import difflib
import importlib
import math
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any
from urllib.parse import urlsplit

from wymcp.conf import _defaults
from wymcp.conf._check_message import ERROR, WARNING, CheckMessage

SETTING_NAMES: tuple[str, ...] = tuple(
    sorted(name for name in vars(_defaults) if name.isupper())
)
"""Every setting wymcp knows, in alphabetical order."""

WRONG_TYPE = "wymcp.E001"
MISSPELT_NAME = "wymcp.E002"
UNIMPORTABLE_PATH = "wymcp.E003"
INVALID_VALUE = "wymcp.E004"
UNKNOWN_NAME = "wymcp.W001"

_MIN_SECRET_BYTES = 32
_MAX_BROKER_URL = 2048
_MAX_PORT = 65535
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
_HOST_ENTRY = re.compile(rf"\*|{_HOST}(?::(?:\*|[0-9]{{1,5}}))?")
_ORIGIN_ENTRY = re.compile(rf"\*|https?://{_HOST}(?::(?:\*|[0-9]{{1,5}}))?")
_PATH = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")
_SCOPE = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")


class Invalid(Exception):  # noqa: N818 - a problem report, not a crash
    """One setting's value cannot be used."""

    def __init__(self, problem_id: str, message: str, hint: str) -> None:
        super().__init__(message)
        self.problem = CheckMessage(ERROR, problem_id, message, hint)


def _short(value: object) -> str:
    """Name a value's type for a message, never quoting the value itself."""
    return type(value).__name__


def import_string(setting: str, dotted: str) -> object:
    """Import `pkg.mod.attr` for `setting`; raise `Invalid` naming what is missing."""
    if not _DOTTED.fullmatch(dotted):
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {dotted[:120]!r}, which is not a dotted path.",
            "Write it as 'package.module.Name'.",
        )
    module_name, _, attr = dotted.rpartition(".")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {dotted!r}, but module {module_name!r} cannot be "
            f"imported ({type(exc).__name__}: {str(exc)[:200]}).",
            "Check the spelling and that the package is installed.",
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module raised; report it
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {dotted!r}, but importing {module_name!r} raised "
            f"{type(exc).__name__}: {str(exc)[:200]}.",
            f"Fix the error in {module_name}.",
        ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {dotted!r}, but module {module_name!r} has no "
            f"attribute {attr!r}.",
            f"Define {attr} in {module_name} or correct the path.",
        ) from None


def _sequence(setting: str, value: object) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be a list or a tuple, not {_short(value)}.",
            f"Write {setting} = [...].",
        )
    return tuple(value)


def _objects(setting: str, value: object) -> tuple[object, ...]:
    items = _sequence(setting, value)
    resolved: list[object] = []
    problems: list[CheckMessage] = []
    for item in items:
        try:
            resolved.append(
                import_string(setting, item) if isinstance(item, str) else item
            )
        except Invalid as exc:
            problems.append(exc.problem)
    if problems:
        raise _Many(problems)
    return tuple(resolved)


class _Many(Exception):  # noqa: N818 - several problem reports at once
    def __init__(self, problems: list[CheckMessage]) -> None:
        super().__init__(problems[0].message)
        self.problems = problems


def _integer(setting: str, value: object, *, low: int, high: int | None) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be an integer, not {_short(value)}.",
            f"Write {setting} = {getattr(_defaults, setting)!r}, for example.",
        )
    if value < low or (high is not None and value > high):
        bounds = f"between {low} and {high}" if high is not None else f"at least {low}"
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be {bounds}.",
            f"Write {setting} = {getattr(_defaults, setting)!r}, for example.",
        )
    return value


def _seconds(setting: str, value: object, *, allow_zero: bool = False) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be a number of seconds, not {_short(value)}.",
            f"Write {setting} = {getattr(_defaults, setting)!r}, for example.",
        )
    if not math.isfinite(value) or not (value >= 0 if allow_zero else value > 0):
        limit = "zero or more" if allow_zero else "more than zero"
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be a finite number of seconds, {limit}.",
            f"Write {setting} = {getattr(_defaults, setting)!r}, for example.",
        )
    return float(value)


def _boolean(setting: str, value: object) -> bool:
    if not isinstance(value, bool):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be True or False, not {_short(value)}.",
            f"Write {setting} = True or {setting} = False.",
        )
    return value


def _text(setting: str, value: object, *, optional: bool = False) -> str | None:
    if value is None and optional:
        return None
    if not isinstance(value, str):
        allowed = "a string or None" if optional else "a string"
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be {allowed}, not {_short(value)}.",
            f'Write {setting} = "...".',
        )
    if not value.strip() and not optional:
        raise Invalid(
            INVALID_VALUE, f"{setting} must not be empty.", f'Write {setting} = "...".'
        )
    return value


def _required_text(setting: str, value: object) -> str:
    text = _text(setting, value)
    assert text is not None  # noqa: S101 - _text returns a str unless optional
    return text


def _path(setting: str, value: object) -> str:
    text = _required_text(setting, value)
    if not _PATH.fullmatch(text):
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be a URL path starting with '/', without a query, "
            "a fragment or spaces.",
            f'Write {setting} = "/mcp", for example.',
        )
    return text


def _patterns(
    setting: str, value: object, pattern: re.Pattern[str], example: str
) -> tuple[str, ...]:
    items = _sequence(setting, value)
    for item in items:
        if not isinstance(item, str):
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must list strings, not {_short(item)}.",
                f'Write {setting} = ["{example}"].',
            )
        if not pattern.fullmatch(item):
            raise Invalid(
                INVALID_VALUE,
                f"{setting} holds {item[:120]!r}, which is not a valid entry.",
                f'Write entries like "{example}", or "*" for any.',
            )
    return tuple(item.lower() for item in items)


def _validator(setting: str, value: object) -> object | None:
    """Resolve AUTH into an object with `async validate(token)`, or None."""
    if value is None:
        return None
    resolved = import_string(setting, value) if isinstance(value, str) else value
    if isinstance(resolved, type):
        try:
            resolved = resolved()
        except Exception as exc:  # noqa: BLE001 - the user's class raised; report it
            raise Invalid(
                INVALID_VALUE,
                f"{setting} names the class {resolved.__qualname__[:120]}, but "
                f"making one with no arguments raised {type(exc).__name__}: "
                f"{str(exc)[:200]}.",
                f"Give {setting} an instance instead, e.g. "
                f"{setting} = JwtValidator(issuer=..., audience=..., key=...).",
            ) from None
    if callable(getattr(resolved, "validate", None)):
        return resolved
    if callable(resolved):
        from wymcp.conf._callable_validator import (  # noqa: PLC0415 - only with AUTH
            CallableValidator,
        )

        return CallableValidator(resolved)
    raise Invalid(
        WRONG_TYPE,
        f"{setting} must be None, a token validator (an object with "
        f"`async validate(token)`), a callable, or a dotted path to one, "
        f"not {_short(resolved)}.",
        f'Write {setting} = "package.module.validator".',
    )


_MAX_URL = 2000


def _url(setting: str, value: object, *, optional: bool = False) -> str | None:
    text = _text(setting, value, optional=optional)
    if text is None:
        return None
    try:
        parts = urlsplit(text) if len(text) <= _MAX_URL and text.isprintable() else None
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in {"http", "https"}
        or not parts.hostname
        or parts.fragment
        or any(c in text for c in ' "#<>\\')
    ):
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be an absolute http(s) URL without a fragment.",
            f'Write {setting} = "https://auth.example.com", for example.',
        )
    return text


def _urls(setting: str, value: object) -> tuple[str, ...]:
    items = _sequence(setting, value)
    urls = tuple(_url(setting, item) for item in items)
    return tuple(url for url in urls if url is not None)


def _scopes(setting: str, value: object) -> tuple[str, ...]:
    items = _sequence(setting, value)
    for item in items:
        if not isinstance(item, str) or not _SCOPE.fullmatch(item):
            shown = repr(item[:60]) if isinstance(item, str) else _short(item)
            raise Invalid(
                INVALID_VALUE,
                f"{setting} holds {shown}, which is not an OAuth scope (visible "
                'ASCII without spaces, " or \\).',
                f'Write {setting} = ["tasks:read"], for example.',
            )
    return tuple(dict.fromkeys(items))


def _optional_seconds(setting: str, value: object) -> float | None:
    return None if value is None else _seconds(setting, value)


def _versions(setting: str, value: object) -> tuple[str, ...]:
    items = _sequence(setting, value)
    known = _defaults.PROTOCOL_VERSIONS
    for item in items:
        if not isinstance(item, str) or item not in known:
            shown = repr(item[:40]) if isinstance(item, str) else _short(item)
            raise Invalid(
                INVALID_VALUE,
                f"{setting} holds {shown}, which is not a revision wymcp serves.",
                f"Choose among {', '.join(known)}.",
            )
    if not items or len(set(items)) != len(items):
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must name at least one revision, each once.",
            f"Choose among {', '.join(known)}.",
        )
    return tuple(sorted(items, reverse=True))


_CONTENT_CODINGS = ("deflate", "gzip")


def _codings(setting: str, value: object) -> tuple[str, ...]:
    items = _sequence(setting, value)
    for item in items:
        if not isinstance(item, str) or item not in _CONTENT_CODINGS:
            shown = repr(item[:40]) if isinstance(item, str) else _short(item)
            raise Invalid(
                INVALID_VALUE,
                f"{setting} holds {shown}, which is not a coding wymcp inflates.",
                f"Choose among {', '.join(_CONTENT_CODINGS)}, or () for none.",
            )
    return tuple(sorted(set(items)))


def _secret(setting: str, value: object) -> bytes | None:
    if value is None:
        return None
    if isinstance(value, str):
        value = value.encode("utf-8")
    if not isinstance(value, bytes):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be a string, bytes or None, not {_short(value)}.",
            f"Write {setting} = os.environ['WYMCP_STATE_SECRET'], for example.",
        )
    if len(value) < _MIN_SECRET_BYTES:
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be at least {_MIN_SECRET_BYTES} bytes long.",
            'Generate one with: python -c "import secrets; '
            'print(secrets.token_urlsafe(32))"',
        )
    return value


def _secrets(setting: str, value: object) -> tuple[bytes, ...]:
    keys: list[bytes] = []
    problems: list[CheckMessage] = []
    for index, item in enumerate(_sequence(setting, value)):
        try:
            key = _secret(f"{setting}[{index}]", item)
        except Invalid as exc:
            problems.append(exc.problem)
            continue
        if key is None:
            problems.append(
                Invalid(
                    WRONG_TYPE,
                    f"{setting}[{index}] must be a string or bytes, not None.",
                    f"Write {setting} = [os.environ['WYMCP_STATE_SECRET']].",
                ).problem
            )
        else:
            keys.append(key)
    if problems:
        raise _Many(problems)
    return tuple(keys)


_BROKER_URL = re.compile(r"(?:redis|rediss|unix)://[^\s]*")


def _broker(setting: str, value: object) -> str | None:
    text = _text(setting, value, optional=True)
    if text is None:
        return None
    if len(text) > _MAX_BROKER_URL or not _BROKER_URL.fullmatch(text):
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be None or a Redis URL (redis://, rediss:// or "
            "unix://) without spaces.",
            f'Write {setting} = "redis://127.0.0.1:6379/0", or None for '
            "sessions kept in each process.",
        )
    return text


_MIN_TASK_LEASE = 0.5


def _task_lease(setting: str, value: object) -> float:
    seconds = _seconds(setting, value)
    if seconds < _MIN_TASK_LEASE:
        raise Invalid(
            INVALID_VALUE,
            f"{setting} must be at least {_MIN_TASK_LEASE} seconds (a lease is "
            "renewed every third of it).",
            f"Write {setting} = {_defaults.TASK_LEASE!r}, for example.",
        )
    return seconds


def _lifespan(setting: str, value: object) -> object | None:
    """Resolve LIFESPAN into a callable (a context manager factory), or None."""
    if value is None:
        return None
    resolved = import_string(setting, value) if isinstance(value, str) else value
    if not callable(resolved):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be None, an async context manager factory or a "
            f"dotted path to one, not {_short(resolved)}.",
            f'Write {setting} = "package.module.lifespan", where lifespan is an '
            "@asynccontextmanager taking the settings.",
        )
    return resolved


Converter = Callable[[str, object], object]

CONVERTERS: Mapping[str, Converter] = {
    "ACCESS_LOG": _boolean,
    "ALLOWED_HOSTS": lambda s, v: _patterns(s, v, _HOST_ENTRY, "example.com:8000"),
    "ALLOWED_ORIGINS": lambda s, v: _patterns(
        s, v, _ORIGIN_ENTRY, "https://example.com"
    ),
    "AUTH": _validator,
    "AUTH_AUTHORIZATION_SERVERS": _urls,
    "AUTH_REQUIRED_SCOPES": _scopes,
    "AUTH_RESOURCE": lambda s, v: _url(s, v, optional=True),
    "AUTH_SCOPES_SUPPORTED": _scopes,
    "BODY_LIMIT": lambda s, v: _integer(s, v, low=1, high=None),
    "BODY_MEMORY_BUDGET": lambda s, v: (
        None if v is None else _integer(s, v, low=1, high=None)
    ),
    "BODY_TIMEOUT": _seconds,
    "CALL_TIMEOUT": _optional_seconds,
    "RESULT_LIMIT": lambda s, v: _integer(s, v, low=1024, high=None),
    "EXPOSE_EXCEPTION_MESSAGES": _boolean,
    "TASK_TTL": _seconds,
    "TASK_POLL_INTERVAL": lambda s, v: _integer(s, v, low=1, high=3_600_000),
    "MAX_TASKS": lambda s, v: _integer(s, v, low=1, high=None),
    "MAX_TASKS_PER_PRINCIPAL": lambda s, v: _integer(s, v, low=1, high=None),
    "TASK_LEASE": _task_lease,
    "HEADER_TIMEOUT": _seconds,
    "HOST": _required_text,
    "INSTRUCTIONS": lambda s, v: _text(s, v, optional=True),
    "JSON_DEPTH_LIMIT": lambda s, v: _integer(s, v, low=2, high=10_000),
    "KEEPALIVE_INTERVAL": _seconds,
    "LIFESPAN": _lifespan,
    "MAX_CONNECTIONS": lambda s, v: _integer(s, v, low=1, high=None),
    "MAX_SESSIONS": lambda s, v: _integer(s, v, low=1, high=None),
    "MAX_STREAMS": lambda s, v: _integer(s, v, low=1, high=None),
    "MAX_STREAMS_PER_CLIENT": lambda s, v: _integer(s, v, low=1, high=None),
    "PAGE_SIZE": lambda s, v: _integer(s, v, low=1, high=10_000),
    "PATH": _path,
    "PORT": lambda s, v: _integer(s, v, low=0, high=_MAX_PORT),
    "PROMPTS": _objects,
    "PROTOCOL_VERSIONS": _versions,
    "RESOURCES": _objects,
    "SERVER_NAME": _required_text,
    "SERVER_VERSION": _required_text,
    "SESSION_IDLE_TIMEOUT": _seconds,
    "SHUTDOWN_GRACE": lambda s, v: _seconds(s, v, allow_zero=True),
    "STATE_SECRET": _secret,
    "STATE_SECRETS": _secrets,
    "BROKER": _broker,
    "STRICT": _boolean,
    "TOOLS": _objects,
    "WRITE_TIMEOUT": _seconds,
    "ACCEPT_CONTENT_ENCODING": _codings,
}


def convert(
    values: Mapping[str, object],
) -> tuple[dict[str, Any], list[CheckMessage]]:
    """Convert known settings; return the converted values and every error."""
    converted: dict[str, Any] = {}
    problems: list[CheckMessage] = []
    for name, value in values.items():
        try:
            converted[name] = CONVERTERS[name](name, value)
        except Invalid as exc:
            problems.append(exc.problem)
        except _Many as exc:
            problems.extend(exc.problems)
    return converted, problems


def resembles(name: str) -> str | None:
    """Return the known setting `name` looks like a misspelling of, or None."""
    matches = difflib.get_close_matches(name.upper(), SETTING_NAMES, n=1, cutoff=0.75)
    return matches[0] if matches else None


def sort_names(
    names: Iterable[str], *, strict: bool
) -> tuple[list[str], list[CheckMessage], list[str]]:
    """Split names into known ones, problems, and unknown ones (warned, not errors).

    With `strict`, an unknown name is an error even when it resembles nothing
    (used for keyword overrides, where a typo is a bug in code).
    """
    known: list[str] = []
    problems: list[CheckMessage] = []
    unknown: list[str] = []
    for name in names:
        if name in CONVERTERS:
            known.append(name)
            continue
        shown = name[:120]
        guess = resembles(name)
        if guess is not None:
            problems.append(
                CheckMessage(
                    ERROR,
                    MISSPELT_NAME,
                    f"{shown} is not a wymcp setting.",
                    f"Did you mean {guess}?",
                )
            )
        elif strict:
            problems.append(
                CheckMessage(
                    ERROR,
                    MISSPELT_NAME,
                    f"{shown} is not a wymcp setting.",
                    f"Known settings: {', '.join(SETTING_NAMES)}.",
                )
            )
        else:
            unknown.append(name)
    return known, problems, unknown


def unknown_name_warning(name: str) -> CheckMessage:
    """The warning for an UPPERCASE name that is no wymcp setting."""
    return CheckMessage(
        WARNING,
        UNKNOWN_NAME,
        f"{name[:120]} is not a wymcp setting; wymcp ignores it.",
        "Remove it, or ignore this warning if your own code reads it.",
    )
