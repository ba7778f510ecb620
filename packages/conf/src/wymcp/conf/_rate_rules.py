"""How a `RATE_LIMITS` rule is read: a mapping made a `RateRule` (E012 if bad).

`{"tool": "search", "action": "run", "rate": "10/s", "burst": 20,
"concurrency": 2}`: every key optional but one of `rate` and `concurrency`;
`{"method": "tasks/get", "rate": "20/s"}` counts requests (`"*"`: every one).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final

from wymcp.conf._problems import Invalid, echo_limit

BAD_RATE_RULE: Final = "wymcp.E012"

_RATE: Final = re.compile(r"([0-9]{1,9})/(s|second|m|min|minute|h|hour|d|day)")
_PERIODS: Final = {
    "s": 1.0,
    "second": 1.0,
    "m": 60.0,
    "min": 60.0,
    "minute": 60.0,
    "h": 3600.0,
    "hour": 3600.0,
    "d": 86400.0,
    "day": 86400.0,
}
_KEYS: Final = ("method", "tool", "action", "rate", "burst", "concurrency")
_MOST: Final = 1_000_000
_EXAMPLE: Final = '{"tool": "search", "rate": "10/s", "burst": 20, "concurrency": 2}'


def _bad(setting: str, problem: str) -> Invalid:
    return Invalid(
        BAD_RATE_RULE,
        f"{setting}: {problem}",
        f"Write each rule as {_EXAMPLE} (every key optional; rate or concurrency "
        "needed).",
    )


def _count(setting: str, rule: Mapping[str, object], key: str) -> int | None:
    value = rule.get(key)
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, int) or not 1 <= value <= _MOST:
        raise _bad(setting, f"`{key}` must be a whole number from 1 to {_MOST:,}.")
    return value


def _name(setting: str, rule: Mapping[str, object], key: str) -> str | None:
    value = rule.get(key)
    if value is None:
        return None
    if not isinstance(value, str) or not value or len(value) > echo_limit():
        raise _bad(setting, f"`{key}` must be a tool or action name (a string).")
    return value


def _method(setting: str, rule: Mapping[str, object]) -> str | None:
    from wymcp.core.server import RATE_METHODS  # noqa: PLC0415 - keeps conf cheap

    value = rule.get("method")
    if value is None:
        return None
    if not isinstance(value, str) or value not in RATE_METHODS:
        raise _bad(
            setting,
            f"`method` must be one of {sorted(RATE_METHODS)} (a request that "
            "reaches a method, or * for every one).",
        )
    if "tool" in rule or "action" in rule:
        raise _bad(
            setting,
            "a rule names a `method` (requests, refused 429) or a `tool` "
            "(calls, refused as a tool result), not both.",
        )
    return str(value)


def rate_rule(setting: str, item: object) -> object:
    """One RATE_LIMITS rule, as a `wymcp.core.server.RateRule`."""
    from wymcp.core.server import RateRule  # noqa: PLC0415 - keeps conf cheap

    if not isinstance(item, Mapping):
        raise _bad(setting, f"a rule must be a dict, not {type(item).__name__}.")
    unknown = sorted(str(key)[: echo_limit()] for key in item if key not in _KEYS)
    if unknown:
        raise _bad(setting, f"unknown key(s) {unknown}; the keys are {list(_KEYS)}.")
    method = _method(setting, item)
    tool, action = _name(setting, item, "tool"), _name(setting, item, "action")
    if action is not None and tool is None:
        raise _bad(setting, "`action` needs the `tool` it belongs to.")
    rate = item.get("rate")
    count, period = 0, 1.0
    if rate is not None:
        found = _RATE.fullmatch(rate) if isinstance(rate, str) else None
        if found is None or int(found[1]) == 0:
            raise _bad(setting, '`rate` must read "N/s", "N/min", "N/h" or "N/day".')
        count, period = int(found[1]), _PERIODS[found[2]]
    burst = _count(setting, item, "burst")
    if burst is not None and rate is None:
        raise _bad(setting, "`burst` needs a `rate`.")
    concurrency = _count(setting, item, "concurrency")
    if rate is None and concurrency is None:
        raise _bad(setting, "a rule needs a `rate`, a `concurrency` cap, or both.")
    return RateRule(
        tool=tool,
        action=action,
        count=count,
        period=period,
        burst=burst or 1,
        concurrency=concurrency,
        method=method,
    )
