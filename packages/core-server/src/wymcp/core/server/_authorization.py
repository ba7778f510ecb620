"""Who is calling and what they may do: `Principal`, token validators, tool scopes.

A transport authenticates every request with a `TokenValidator` and hands
the engine the `Principal` it returns. A tool declares the OAuth scopes its
actions need in a `scopes` class attribute; `tool_scopes` checks the
declaration once and `required_scopes` reads it for one call.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from types import MappingProxyType
from typing import Any, Protocol, runtime_checkable

import attrs

from wymcp.core.schema import ConfigurationError, ToolSpec

EVERY_ACTION = "*"
"""The key of a `scopes` declaration that applies to every action of the tool."""

SCOPE_TOKEN = re.compile(r"[\x21\x23-\x5b\x5d-\x7e]+")
"""One scope as RFC 6749 §3.3 spells it: visible ASCII without space, `"` or `\\`."""

_DESCRIPTION_LIMIT = 200


def _scope_set(value: Iterable[str]) -> frozenset[str]:
    return frozenset(value)


def _read_only(value: Mapping[str, Any]) -> Mapping[str, Any]:
    return MappingProxyType(dict(value))


@attrs.frozen
class Principal:
    """The caller a token names: its subject, the scopes it grants, its claims.

    Sessions and sealed request state are bound to `subject` (exposed as
    `sub` too), so a refreshed token for the same subject keeps its session.
    """

    subject: str
    scopes: frozenset[str] = attrs.field(default=frozenset(), converter=_scope_set)
    claims: Mapping[str, Any] = attrs.field(
        factory=dict, converter=_read_only, hash=False
    )

    @property
    def sub(self) -> str:
        """The subject: the stable identity sessions are bound to."""
        return self.subject

    def missing(self, required: Iterable[str]) -> frozenset[str]:
        """The scopes of `required` this principal was not granted."""
        return frozenset(required) - self.scopes


class InvalidToken(Exception):  # noqa: N818 - RFC 6750's error name, invalid_token
    """A token that cannot be accepted: malformed, forged, expired, or not for us.

    `description` is sent to the client in the `WWW-Authenticate` challenge,
    so it must say what is wrong without quoting the token.
    """

    def __init__(self, description: str = "The access token is invalid.") -> None:
        clean = "".join(c for c in description if c.isprintable() and c not in '"\\')
        self.description = clean[:_DESCRIPTION_LIMIT] or "The access token is invalid."
        super().__init__(self.description)


@runtime_checkable
class TokenValidator(Protocol):
    """Turns a bearer token into a `Principal`, or raises `InvalidToken`."""

    async def validate(self, token: str) -> Principal:
        """Return who `token` names; raise `InvalidToken` if it is not acceptable."""
        ...


def _scope_list(where: str, value: object, problems: list[str]) -> frozenset[str]:
    if isinstance(value, str | bytes) or not isinstance(value, Iterable):
        problems.append(
            f"{where}: scopes must be a list of strings, not {type(value).__name__} "
            f'(write ["scope"]).'
        )
        return frozenset()
    found: set[str] = set()
    for item in value:
        if not isinstance(item, str) or not SCOPE_TOKEN.fullmatch(item):
            shown = repr(item[:60]) if isinstance(item, str) else type(item).__name__
            problems.append(
                f"{where}: {shown} is not a scope (visible ASCII, no spaces, "
                'no " or \\).'
            )
        else:
            found.add(item)
    return frozenset(found)


def tool_scopes(spec: ToolSpec) -> Mapping[str, frozenset[str]]:
    """Check a tool's `scopes` declaration and return it as key -> scopes.

    `scopes` is absent or None (no scope needed), a list of scopes every
    action needs, or a mapping whose keys are `"*"` (every action) or action
    names, each to a list of scopes. Raises `ConfigurationError` naming the
    tool and every problem.
    """
    declared = getattr(spec.tool, "scopes", None)
    if declared is None:
        return MappingProxyType({})
    problems: list[str] = []
    table: dict[str, frozenset[str]] = {}
    if isinstance(declared, Mapping):
        for key, value in declared.items():
            if key != EVERY_ACTION and key not in spec.actions:
                valid = sorted(spec.actions) if spec.actions else []
                shown = repr(key[:60]) if isinstance(key, str) else type(key).__name__
                problems.append(
                    f"scopes: {shown} is neither '*' nor an action of the tool "
                    f"(actions: {', '.join(valid) or 'none, a plain tool'})."
                )
                continue
            table[key] = _scope_list(f"scopes[{key!r}]", value, problems)
    else:
        table[EVERY_ACTION] = _scope_list("scopes", declared, problems)
    if problems:
        raise ConfigurationError(spec.name, problems)
    return MappingProxyType({key: value for key, value in table.items() if value})


def required_scopes(
    declared: Mapping[str, frozenset[str]], action: str | None
) -> frozenset[str]:
    """The scopes one call needs: those of every action plus the action's own."""
    needed = declared.get(EVERY_ACTION, frozenset())
    if action is not None:
        needed |= declared.get(action, frozenset())
    return needed
