"""The converters a setting is declared with: check a raw value, read it from text.

A converter turns what a settings module wrote into the value `Settings`
stores (dotted paths imported, lists made tuples, a secret made bytes) or
raises `Invalid`; `from_text` reads an environment variable by one rule per
kind, and `checked()` says in the docs table what the converter enforces.
"""

from __future__ import annotations

import importlib
import inspect
import math
import re
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, ClassVar, Final, Literal
from urllib.parse import urlsplit

import attrs

from wymcp.conf._problems import (
    INVALID_VALUE,
    UNIMPORTABLE_PATH,
    WRONG_TYPE,
    CheckMessage,
    Invalid,
    echo_limit,
)

if TYPE_CHECKING:
    from wymcp.core.server import Principal

Kind = Literal["boolean", "integer", "number", "text", "list"]

_MIN_SECRET_BYTES: Final = 32
_MAX_URL: Final = 2000
_MAX_NUMBER_TEXT: Final = 40
_MOST_ITEM_PROBLEMS: Final = 10
"""A list setting names at most this many bad items."""
_HOST = r"(?:\[[0-9A-Fa-f:.]+\]|[A-Za-z0-9](?:[A-Za-z0-9.-]*[A-Za-z0-9])?)"
HOST_ENTRY: Final = re.compile(rf"\*|{_HOST}(?::(?:\*|[0-9]{{1,5}}))?")
ORIGIN_ENTRY: Final = re.compile(rf"\*|https?://{_HOST}(?::(?:\*|[0-9]{{1,5}}))?")
URL_PATH: Final = re.compile(r"/[A-Za-z0-9._~!$&'()*+,;=:@%/-]*")
BROKER_URL: Final = re.compile(r"(?:redis|rediss|unix)://[^\s]*")
_DOTTED = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
_INTEGER = re.compile(r"[+-]?[0-9]+")
_BOOLEANS: Final = dict.fromkeys(("true", "yes", "on", "1"), True) | dict.fromkeys(
    ("false", "no", "off", "0"), False
)

ENVIRONMENT_RULES: Final[dict[Kind, str]] = {
    "boolean": "`true`, `yes`, `on`, `1` or `false`, `no`, `off`, `0` (any case)",
    "integer": "decimal digits, optionally signed (`9000`)",
    "number": "a decimal number (`2.5`, `30`)",
    "text": "the text as it is",
    "list": (
        'a JSON array (`["a", "b"]`) when it starts with `[`, else comma-separated '
        "items, each stripped (`a, b`); an empty value is the empty list"
    ),
}
"""How an environment variable's text is read, per kind of setting."""

_KIND_WORDS: Final[dict[Kind, str]] = {
    "boolean": "true or false",
    "integer": "an integer",
    "number": "a number",
    "text": "text",
    "list": "a list",
}


def _read_boolean(text: str) -> bool:
    return _BOOLEANS[text.strip().lower()]  # KeyError: not a boolean


def _read_integer(text: str) -> int:
    if len(text) > _MAX_NUMBER_TEXT or not _INTEGER.fullmatch(text.strip()):
        raise ValueError(text)
    return int(text)


def _read_number(text: str) -> float:
    if len(text) > _MAX_NUMBER_TEXT:
        raise ValueError(text)
    return float(text)


def _read_list(text: str) -> list[object]:
    stripped = text.strip()
    if not stripped.startswith("["):
        return [item.strip() for item in stripped.split(",") if item.strip()]
    import json  # noqa: PLC0415 - only for a JSON array in the environment

    items = json.loads(stripped)
    if not isinstance(items, list):
        raise TypeError(stripped)
    return items


_READERS: Final[dict[Kind, Callable[[str], object]]] = {
    "boolean": _read_boolean,
    "integer": _read_integer,
    "number": _read_number,
    "text": str,
    "list": _read_list,
}


def _type_name(value: object) -> str:
    """Name a value's type for a message, never quoting the value itself."""
    return "None" if value is None else type(value).__name__


def import_string(setting: str, dotted: str) -> object:
    """Import `pkg.mod.attr` for `setting`; raise `Invalid` naming what is missing."""
    shown = dotted[: echo_limit()]
    if not _DOTTED.fullmatch(dotted):
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {shown!r}, which is not a dotted path.",
            "Write it as 'package.module.Name'.",
        )
    module_name, _, attr = dotted.rpartition(".")
    module_shown = module_name[: echo_limit()]
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {shown!r}, but module {module_shown!r} cannot be "
            f"imported ({type(exc).__name__}: {str(exc)[:200]}).",
            "Check the spelling and that the package is installed.",
        ) from None
    except Exception as exc:  # noqa: BLE001 - the user's module raised; report it
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {shown!r}, but importing {module_shown!r} raised "
            f"{type(exc).__name__}: {str(exc)[:200]}.",
            f"Fix the error in {module_shown}.",
        ) from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise Invalid(
            UNIMPORTABLE_PATH,
            f"{setting} names {shown!r}, but module {module_shown!r} has no "
            f"attribute {attr[: echo_limit()]!r}.",
            f"Define it in {module_shown} or correct the path.",
        ) from None


@attrs.frozen(kw_only=True)
class Converter:
    """Check and convert one kind of value; each subclass says how."""

    kind: ClassVar[Kind] = "text"
    optional: bool = False

    def __call__(self, setting: str, value: object) -> Any:
        """The value to store for `setting`, or raise `Invalid`."""
        if value is None and self.optional:
            return None
        return self.convert(setting, value)

    def convert(self, setting: str, value: object) -> Any:
        """Convert a value that is not an allowed None."""
        raise NotImplementedError

    def describe(self) -> str:
        """What the value must be, with the ids of its problems (docs table)."""
        raise NotImplementedError

    def checked(self) -> str:
        """`describe()`, and that None is allowed where it is."""
        text = self.describe()
        return f"{text}, or `None`" if self.optional else text

    def from_text(self, setting: str, text: str) -> object:
        """Read an environment variable's `text` by the rule of this kind.

        Where None is allowed, an empty text is None, and so is `none` but
        for text settings.
        """
        none = text == "" or (self.kind != "text" and text.strip().lower() == "none")
        if self.optional and none:
            return None
        try:
            return _READERS[self.kind](text)
        except (ValueError, KeyError, TypeError):
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must be {_KIND_WORDS[self.kind]}; the text given does "
                "not read as one.",
                f"Write it as {ENVIRONMENT_RULES[self.kind]}.",
            ) from None


@attrs.frozen(kw_only=True)
class Boolean(Converter):
    """`True` or `False`."""

    kind: ClassVar[Kind] = "boolean"

    def convert(self, setting: str, value: object) -> bool:
        if not isinstance(value, bool):
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must be True or False, not {_type_name(value)}.",
                f"Write {setting} = True or {setting} = False.",
            )
        return value

    def describe(self) -> str:
        return "`True` or `False` (E001)"


@attrs.frozen(kw_only=True)
class Integer(Converter):
    """An integer from `low` to `high` (no upper bound when None)."""

    kind: ClassVar[Kind] = "integer"
    low: int = 1
    high: int | None = None
    example: int | None = None
    """The value a hint suggests; `setting()` makes it the default."""

    def convert(self, setting: str, value: object) -> int:
        fix = f"Write {setting} = {self.example!r}, for example."
        if isinstance(value, bool) or not isinstance(value, int):
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must be an integer, not {_type_name(value)}.",
                fix,
            )
        if value < self.low or (self.high is not None and value > self.high):
            bounds = (
                f"at least {self.low}"
                if self.high is None
                else f"between {self.low} and {self.high}"
            )
            raise Invalid(INVALID_VALUE, f"{setting} must be {bounds}.", fix)
        return value

    def describe(self) -> str:
        if self.high is None:
            return f"an integer (E001), at least {self.low:,} (E004)"
        return f"an integer (E001) from {self.low:,} to {self.high:,} (E004)"


@attrs.frozen(kw_only=True)
class Seconds(Converter):
    """A finite number of seconds, above zero (or zero too with `allow_zero`)."""

    kind: ClassVar[Kind] = "number"
    allow_zero: bool = False
    least: float | None = None
    """The smallest number of seconds allowed, when more than zero is not enough."""
    example: float | None = None
    """The value a hint suggests; `setting()` makes it the default."""

    def convert(self, setting: str, value: object) -> float:
        fix = f"Write {setting} = {self.example!r}, for example."
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must be a number of seconds, not {_type_name(value)}.",
                fix,
            )
        allowed = value >= 0 if self.allow_zero else value > 0
        if not math.isfinite(value) or not allowed:
            limit = "zero or more" if self.allow_zero else "more than zero"
            raise Invalid(
                INVALID_VALUE,
                f"{setting} must be a finite number of seconds, {limit}.",
                fix,
            )
        if self.least is not None and value < self.least:
            raise Invalid(
                INVALID_VALUE,
                f"{setting} must be at least {self.least} seconds.",
                fix,
            )
        return float(value)

    def describe(self) -> str:
        limit = "≥ 0" if self.allow_zero else "> 0"
        if self.least is not None:
            limit = f"≥ {self.least}"
        return f"a number (E001), finite and {limit} (E004)"


@attrs.frozen(kw_only=True)
class Text(Converter):
    """A string; a required one must not be blank."""

    def convert(self, setting: str, value: object) -> str:
        if not isinstance(value, str):
            allowed = "a string or None" if self.optional else "a string"
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must be {allowed}, not {_type_name(value)}.",
                f'Write {setting} = "...".',
            )
        if not value.strip() and not self.optional:
            raise Invalid(
                INVALID_VALUE,
                f"{setting} must not be empty.",
                f'Write {setting} = "...".',
            )
        return value

    def describe(self) -> str:
        return "a string (E001)" if self.optional else "a non-empty string (E001/E004)"


@attrs.frozen(kw_only=True)
class Matching(Text):
    """A string that `pattern` matches whole (at most `longest` characters).

    `must` ends the sentence "SETTING must …"; `example` is a value to write.
    """

    pattern: re.Pattern[str]
    must: str
    example: str
    what: str
    longest: int = 2048

    def convert(self, setting: str, value: object) -> str:
        text = super().convert(setting, value)
        if len(text) > self.longest or not self.pattern.fullmatch(text):
            raise Invalid(
                INVALID_VALUE,
                f"{setting} must {self.must}.",
                f'Write {setting} = "{self.example}", for example.',
            )
        return text

    def describe(self) -> str:
        return self.what


@attrs.frozen(kw_only=True)
class Url(Text):
    """An absolute http(s) URL without a fragment."""

    def convert(self, setting: str, value: object) -> str:
        text = super().convert(setting, value)
        try:
            usable = len(text) <= _MAX_URL and text.isprintable()
            parts = urlsplit(text) if usable else None
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

    def describe(self) -> str:
        return "an absolute http(s) URL (E001/E004)"


@attrs.frozen(kw_only=True)
class Secret(Converter):
    """A key of at least 32 bytes, given as a string (UTF-8) or bytes."""

    def convert(self, setting: str, value: object) -> bytes:
        if isinstance(value, str):
            value = value.encode("utf-8")
        if not isinstance(value, bytes):
            allowed = (
                "a string, bytes or None" if self.optional else "a string or bytes"
            )
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must be {allowed}, not {_type_name(value)}.",
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

    def describe(self) -> str:
        return f"a string or bytes (E001) of at least {_MIN_SECRET_BYTES} bytes (E004)"


@attrs.frozen(kw_only=True)
class Importable(Converter):
    """An object, or a dotted path to one, that `accept` turns into the value."""

    accept: Callable[[str, object], object]
    what: str

    def convert(self, setting: str, value: object) -> object:
        return self.accept(setting, object_or_path(setting, value))

    def describe(self) -> str:
        return f"{self.what} (E001), or an importable dotted path to one (E003)"


@attrs.frozen(kw_only=True)
class ListOf(Converter):
    """A list or tuple whose items `item` converts; `finish` shapes the tuple.

    Every bad item is named (at most ten), as `SETTING[i]` when `indexed`.
    """

    kind: ClassVar[Kind] = "list"
    item: Callable[[str, object], Any]
    what: str
    finish: Callable[[tuple[Any, ...]], tuple[Any, ...]] = tuple
    indexed: bool = False

    def convert(self, setting: str, value: object) -> tuple[Any, ...]:
        done: list[Any] = []
        problems: list[CheckMessage] = []
        for index, item in enumerate(_sequence(setting, value)):
            try:
                done.append(
                    self.item(f"{setting}[{index}]" if self.indexed else setting, item)
                )
            except Invalid as exc:
                problems.extend(exc.problems)
                if len(problems) >= _MOST_ITEM_PROBLEMS:
                    break
        if problems:
            raise Invalid.of(problems[:_MOST_ITEM_PROBLEMS])
        return self.finish(tuple(done))

    def describe(self) -> str:
        return self.what


@attrs.frozen(kw_only=True)
class Choices(Converter):
    """Some of `allowed`, sorted; with `at_least_one`, one or more, each once."""

    kind: ClassVar[Kind] = "list"
    allowed: tuple[str, ...] | Callable[[], tuple[str, ...]]
    noun: str
    verb: str = "serves"
    at_least_one: bool = False
    newest_first: bool = False

    def options(self) -> tuple[str, ...]:
        """The values allowed (read when needed: they may come from the engine)."""
        return self.allowed() if callable(self.allowed) else self.allowed

    def convert(self, setting: str, value: object) -> tuple[str, ...]:
        items = _sequence(setting, value)
        known = self.options()
        hint = f"Choose among {', '.join(known)}"
        for item in items:
            if not isinstance(item, str) or item not in known:
                shown = repr(item[:40]) if isinstance(item, str) else _type_name(item)
                raise Invalid(
                    INVALID_VALUE,
                    f"{setting} holds {shown}, which is not a {self.noun} wymcp "
                    f"{self.verb}.",
                    f"{hint}." if self.at_least_one else f"{hint}, or () for none.",
                )
        if self.at_least_one and (not items or len(set(items)) != len(items)):
            raise Invalid(
                INVALID_VALUE,
                f"{setting} must name at least one {self.noun}, each once.",
                f"{hint}.",
            )
        return tuple(sorted(set(items), reverse=self.newest_first))

    def describe(self) -> str:
        shown = ", ".join(f"`{option}`" for option in self.options())
        if self.at_least_one:
            return f"a non-empty list of {shown}, each once (E001/E004)"
        return f"a list of {shown} (E001/E004)"


def _sequence(setting: str, value: object) -> tuple[Any, ...]:
    if isinstance(value, str | bytes) or not isinstance(value, list | tuple):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be a list or a tuple, not {_type_name(value)}.",
            f"Write {setting} = [...].",
        )
    return tuple(value)


def patterns(pattern: re.Pattern[str], example: str) -> Callable[[str, object], str]:
    """An item converter: a string matching `pattern`, lower-cased."""

    def convert(setting: str, item: object) -> str:
        if not isinstance(item, str):
            raise Invalid(
                WRONG_TYPE,
                f"{setting} must list strings, not {_type_name(item)}.",
                f'Write {setting} = ["{example}"].',
            )
        if not pattern.fullmatch(item):
            raise Invalid(
                INVALID_VALUE,
                f"{setting} holds {item[: echo_limit()]!r}, which is not a valid "
                "entry.",
                f'Write entries like "{example}", or "*" for any.',
            )
        return item.lower()

    return convert


def scope(setting: str, item: object) -> str:
    """An item converter: an OAuth scope token."""
    from wymcp.core.schema import SCOPE_TOKEN  # noqa: PLC0415 - only when checked

    if not isinstance(item, str) or not SCOPE_TOKEN.fullmatch(item):
        shown = repr(item[:60]) if isinstance(item, str) else _type_name(item)
        raise Invalid(
            INVALID_VALUE,
            f"{setting} holds {shown}, which is not an OAuth scope (visible "
            'ASCII without spaces, " or \\).',
            f'Write {setting} = ["tasks:read"], for example.',
        )
    return item


def unique(items: tuple[Any, ...]) -> tuple[Any, ...]:
    """Keep the first of each item, in order."""
    return tuple(dict.fromkeys(items))


def object_or_path(setting: str, item: object) -> object:
    """An item converter: a dotted path is imported, anything else kept."""
    return import_string(setting, item) if isinstance(item, str) else item


@attrs.frozen
class CallableValidator:
    """A token validator whose `validate` calls `function` (awaiting its result).

    `AUTH` may name a plain or async function `token -> Principal`; the
    transport only ever calls `validate`.
    """

    function: Callable[[str], Any]

    async def validate(self, token: str) -> Principal:
        """Return what `function(token)` returns (or resolves to)."""
        result = self.function(token)
        if inspect.isawaitable(result):
            result = await result
        return result  # type: ignore[no-any-return]


def token_validator(setting: str, resolved: object) -> object:
    """Make what AUTH names an object with `async validate(token)`."""
    if isinstance(resolved, type):
        made: type = resolved
        try:
            resolved = made()
        except Exception as exc:  # noqa: BLE001 - the user's class raised; report it
            raise Invalid(
                INVALID_VALUE,
                f"{setting} names the class {made.__qualname__[: echo_limit()]}, "
                f"but making one with no arguments raised {type(exc).__name__}: "
                f"{str(exc)[:200]}.",
                f"Give {setting} an instance instead, e.g. "
                f"{setting} = JwtValidator(issuer=..., audience=..., key=...).",
            ) from None
    if callable(getattr(resolved, "validate", None)):
        return resolved
    if callable(resolved):
        return CallableValidator(resolved)
    raise Invalid(
        WRONG_TYPE,
        f"{setting} must be None, a token validator (an object with "
        f"`async validate(token)`), a callable, or a dotted path to one, "
        f"not {_type_name(resolved)}.",
        f'Write {setting} = "package.module.validator".',
    )


def context_manager_factory(setting: str, resolved: object) -> object:
    """Check that what LIFESPAN names can be called (a context manager factory)."""
    if not callable(resolved):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} must be None, an async context manager factory or a "
            f"dotted path to one, not {_type_name(resolved)}.",
            f'Write {setting} = "package.module.lifespan", where lifespan is an '
            "@asynccontextmanager taking the settings.",
        )
    return resolved


def middleware(setting: str, item: object) -> object:
    """One MIDDLEWARE item: an object or dotted path; a class is made (no arguments)."""
    resolved = object_or_path(setting, item)
    if isinstance(resolved, type):
        made: type = resolved
        try:
            resolved = made()
        except Exception as exc:  # noqa: BLE001 - the user's class raised; report it
            raise Invalid(
                INVALID_VALUE,
                f"{setting} names the class {made.__qualname__[: echo_limit()]}, "
                f"but making one with no arguments raised {type(exc).__name__}: "
                f"{str(exc)[:200]}.",
                f"Give {setting} an instance instead.",
            ) from None
    if not callable(resolved):
        raise Invalid(
            WRONG_TYPE,
            f"{setting} items must be middleware (a callable "
            f"`async (call, call_next)`), a class making one, or a dotted path to "
            f"either, not {_type_name(resolved)}.",
            f'Write {setting} = ["package.module.Middleware"].',
        )
    return resolved
