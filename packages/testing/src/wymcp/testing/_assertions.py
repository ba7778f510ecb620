"""Assertions that read well: succeeded, refused with a code, a path, a problem.

Each takes an `Answer` (or a raw CallToolResult or JSON-RPC response dict),
fails with the answer in the message, and returns the part a test reads next.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

from wymcp.testing._answer import Answer

_SHOWN: Final = 2000


def _answer(value: Answer | Mapping[str, Any]) -> Answer:
    if isinstance(value, Answer):
        return value
    if "jsonrpc" in value or ("error" in value and "content" not in value):
        return Answer(status=200, response=value)
    return Answer(status=200, response={"jsonrpc": "2.0", "id": None, "result": value})


def _shown(answer: Answer) -> str:
    if answer.response is None:
        return f"HTTP {answer.status} with no JSON-RPC answer"
    shown = json.dumps(answer.response, ensure_ascii=False, default=str)
    if len(shown) > _SHOWN:
        shown = shown[:_SHOWN] + "…"
    return shown


def assert_succeeded(answer: Answer | Mapping[str, Any]) -> Any:
    """Assert a tool call succeeded; return what the tool answered (`Answer.value`)."""
    __tracebackhide__ = True
    found = _answer(answer)
    if found.result is None:
        raise AssertionError(f"expected a result, got {_shown(found)}")
    if found.is_error:
        raise AssertionError(f"expected success, got isError: {_shown(found)}")
    return found.value


def _paths(refusal: Mapping[str, Any]) -> dict[str, list[str]]:
    """Every path a refusal names, its `also` sections' included, with the problems."""
    root = "arguments" if refusal.get("action") is None else "data"
    paths: dict[str, list[str]] = {}
    also = refusal.get("also")
    sections = [refusal, *(also.values() if isinstance(also, Mapping) else ())]
    for section in sections:
        if not isinstance(section, Mapping):
            continue
        # a section of `also` is about the action's data, whatever the refusal's root
        where = root if section is refusal else "data"
        for entry in section.get("errors") or ():
            if isinstance(entry, dict) and isinstance(entry.get("path"), str):
                texts = paths.setdefault(entry["path"], [])
                texts.extend(str(p) for p in entry.get("problems") or ())
        for path in section.get("unknown") or ():
            paths.setdefault(str(path), [])
        for name in section.get("missing") or ():
            paths.setdefault(f"{where}.{name}", [])
    return paths


def assert_refused(
    answer: Answer | Mapping[str, Any],
    error: str | None = None,
    *,
    path: str | None = None,
    problem: str | None = None,
) -> dict[str, Any]:
    """Assert the gates refused the call; return the refusal payload.

    `error` is the code (`invalid_values`, `unknown_params`,
    `missing_required_fields`, `missing_required_group`, `unknown_action`,
    `invalid_arguments`);
    `path` a path the refusal names (`data.items[3].qty`: in `errors`,
    `unknown`, or a missing field, in the refusal or in its `also` sections);
    `problem` a text listed for `path` (or for any path when `path` is not
    given).
    """
    __tracebackhide__ = True
    found = _answer(answer)
    refusal = found.refusal
    if refusal is None:
        raise AssertionError(f"expected a refusal, got {_shown(found)}")
    if error is not None and refusal.get("error") != error:
        raise AssertionError(
            f"expected a {error!r} refusal, got {refusal.get('error')!r}: "
            f"{_shown(found)}"
        )
    paths = _paths(refusal)
    if path is not None and path not in paths:
        raise AssertionError(
            f"expected the refusal to name {path!r}; it names "
            f"{sorted(paths) or 'no path'}: {_shown(found)}"
        )
    if problem is not None:
        listed = (
            paths[path]
            if path is not None
            else [text for texts in paths.values() for text in texts]
        )
        if problem not in listed:
            where = f" at {path!r}" if path is not None else ""
            raise AssertionError(
                f"expected the problem {problem!r}{where}; listed: {listed}: "
                f"{_shown(found)}"
            )
    return refusal


def assert_tool_error(
    answer: Answer | Mapping[str, Any], message: str | None = None
) -> str:
    """Assert the tool answered isError (not a gate refusal); return its text.

    `message`, when given, must appear in the text (a `ToolError` message,
    or `tool_raised` for a tool that raised anything else).
    """
    __tracebackhide__ = True
    found = _answer(answer)
    if not found.is_error:
        raise AssertionError(f"expected an isError result, got {_shown(found)}")
    if found.refusal is not None:
        raise AssertionError(f"expected a tool error, got a refusal: {_shown(found)}")
    if message is not None and message not in found.text:
        raise AssertionError(
            f"expected {message!r} in the error text, got {_shown(found)}"
        )
    return found.text


def assert_rpc_error(
    answer: Answer | Mapping[str, Any], code: int | None = None
) -> dict[str, Any]:
    """Assert the request got a JSON-RPC error (with `code`); return the error."""
    __tracebackhide__ = True
    found = _answer(answer)
    rpc_error = found.error
    if rpc_error is None:
        raise AssertionError(f"expected a JSON-RPC error, got {_shown(found)}")
    if code is not None and rpc_error.get("code") != code:
        raise AssertionError(
            f"expected JSON-RPC error {code}, got {rpc_error.get('code')}: "
            f"{_shown(found)}"
        )
    return rpc_error
