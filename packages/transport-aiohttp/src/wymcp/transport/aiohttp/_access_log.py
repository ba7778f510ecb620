r"""The access line (`ACCESS_LOG`) and the JSON log form (`LOG_FORMAT = "json"`).

Every value a request controls is escaped (control characters, quotes and
backslashes as `\\xNN`-style escapes) and cut, so a line is one line of
bounded length whatever the request sent; the JSON form is one object per line.
"""

from __future__ import annotations

import itertools
import json
import logging
import os
import time
from collections.abc import Mapping
from typing import Final

from wymcp.core.server import ECHO_LIMIT, CallRecord

ACCESS_LOGGER: Final = "wymcp.access"
VALUE_LIMIT: Final = ECHO_LIMIT
"""Characters kept of a request-controlled value, before escaping."""
TAG_LIMIT: Final = 8
"""Middleware tags logged per request (the first ones set)."""
_TAG_KEY_LIMIT: Final = 40
TAGS_BUDGET: Final = 512
"""Characters the logged tags may take in all, escaped (keys and values)."""

_ESCAPES: Final = {"\\": "\\\\", '"': '\\"', "\n": "\\n", "\r": "\\r", "\t": "\\t"}


def escape(value: object) -> str:
    """`value` as text safe in a log line: printable, unquoted, at most ~1.2k chars.

    Linear in the kept characters: each is looked at once.
    """
    text = value if isinstance(value, str) else str(value)
    cut = len(text) > VALUE_LIMIT
    if cut:
        text = text[:VALUE_LIMIT]
    if text.isprintable() and '"' not in text and "\\" not in text:
        return text + "…" if cut else text
    out = []
    for char in text:
        if char in _ESCAPES:
            out.append(_ESCAPES[char])
        elif char.isprintable():
            out.append(char)
        else:
            code = ord(char)
            if code <= 0xFF:  # noqa: PLR2004 - one byte
                out.append(f"\\x{code:02x}")
            elif code <= 0xFFFF:  # noqa: PLR2004 - one UTF-16 unit
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    if cut:
        out.append("…")
    return "".join(out)


class AccessLog:
    """Writes one access line per request to the `wymcp.access` logger."""

    def __init__(self) -> None:
        self.logger = logging.getLogger(ACCESS_LOGGER)
        self._prefix = f"{os.getpid():x}-"
        self._counter = itertools.count(1)

    def request_id(self, sent: str | None) -> str:
        """The request's id: the client's `X-Request-Id`, escaped, else a new one."""
        if sent:
            return escape(sent)
        return f"{self._prefix}{next(self._counter)}"

    def write(
        self,
        record: CallRecord,
        *,
        request_id: str,
        http_method: str,
        status: int,
        seconds: float,
    ) -> None:
        """Log the line of one answered request (INFO), if the logger is on."""
        logger = self.logger
        if not logger.isEnabledFor(logging.INFO):
            return
        fields = access_fields(
            record,
            request_id=request_id,
            http_method=http_method,
            status=status,
            seconds=seconds,
        )
        line = " ".join(
            f"{key}={_text(value)}" for key, value in fields.items() if value != ""
        )
        logger.info("%s", line, extra={"access": fields})


def _text(value: object) -> str:
    """A field's value in the text line, quoted when it holds a space or `=`.

    The values are escaped already (no quote is left bare), so a quoted one
    cannot end early and a client cannot forge a field.
    """
    if isinstance(value, dict):
        value = ",".join(f"{k}:{v}" for k, v in value.items())
    text = str(value)
    if " " in text or "=" in text:
        return f'"{text}"'
    return text


def _tags(sent: Mapping[str, object]) -> dict[str, str]:
    """The first `TAG_LIMIT` tags, escaped, within `TAGS_BUDGET` characters.

    A tag that would pass the budget is left out whole (never cut inside an
    escape), with those after it; `…` then counts the tags left out.
    """
    tags: dict[str, str] = {}
    room = TAGS_BUDGET
    for key, value in itertools.islice(sent.items(), TAG_LIMIT):
        name, text = escape(key)[:_TAG_KEY_LIMIT], escape(value)
        room -= len(name) + len(text)
        if room < 0:
            tags["…"] = f"{len(sent) - len(tags)} more"
            break
        tags[name] = text
    return tags


def access_fields(
    record: CallRecord,
    *,
    request_id: str,
    http_method: str,
    status: int,
    seconds: float,
) -> dict[str, object]:
    """The access line's fields, each request-controlled one escaped and cut."""
    tags = _tags(record.tags)
    return {
        "request_id": request_id,
        "http_method": http_method,
        "method": "" if record.method is None else escape(record.method),
        "rpc_id": "" if record.id is None else escape(record.id),
        "tool": "" if record.tool is None else escape(record.tool),
        "action": "" if record.action is None else escape(record.action),
        "revision": record.revision or "",
        "session": "" if record.session is None else escape(record.session),
        "subject": "" if record.subject is None else escape(record.subject),
        "outcome": escape(record.outcome),
        "status": status,
        "duration_ms": round(seconds * 1000, 3),
        "tags": tags or "",
    }


class JsonLogFormatter(logging.Formatter):
    r"""One JSON object per log record, on one line (`LOG_FORMAT = "json"`).

    Keys: `time` (ISO 8601, UTC), `level`, `logger`, `message`, and an access
    line's fields; `exc_info` as `exception` text. Non-ASCII and control
    characters are `\\u` escapes, so no value can break the line.
    """

    def format(self, record: logging.LogRecord) -> str:
        """The record as one line of JSON."""
        document: dict[str, object] = {
            "time": time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(record.created))
            + f".{int(record.msecs):03d}Z",
            "level": record.levelname,
            "logger": record.name,
        }
        access = getattr(record, "access", None)
        if isinstance(access, Mapping):
            document["message"] = "access"
            document.update({k: v for k, v in access.items() if v != ""})
        else:
            document["message"] = record.getMessage()
        if record.exc_info:
            document["exception"] = self.formatException(record.exc_info)
        return json.dumps(document, ensure_ascii=True, default=str)


def use_json_logs() -> None:
    """Make every handler of the root logger write JSON lines."""
    formatter = JsonLogFormatter()
    for handler in logging.getLogger().handlers:
        handler.setFormatter(formatter)
