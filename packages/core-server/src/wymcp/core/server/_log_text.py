r"""The text log form (`LOG_FORMAT = "text"`): one record cannot forge another.

Control and format characters in a record's line and each exception's
message become `\n`, `\x1b`-style escapes, cut at `TEXT_LIMIT` characters;
traceback frame lines (the server's code) are indented, so every unindented
line begins a real record, and one record is bounded whatever a request sent.
"""

from __future__ import annotations

import logging
import traceback
from typing import Any, Final

TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""The line `wymcp serve` and `wymcp stdio` write."""
TEXT_LIMIT: Final = 8192
"""Escaped characters kept of a record's line and of each exception's message."""
_BYTE_ESCAPES: Final = {
    code: {"\n": "\\n", "\r": "\\r", "\t": "\\t"}.get(chr(code), f"\\x{code:02x}")
    for code in range(0x100)
    if not chr(code).isprintable()
}
"""`str.translate` table of the one-byte controls (C0, DEL, C1): escaped in C."""
_CHAIN_LIMIT: Final = 16
"""Chained exceptions (`__cause__`, `__context__`) written per record."""
_CAUSE: Final = "The above exception was the direct cause of the following exception:"
_CONTEXT: Final = "During handling of the above exception, another exception occurred:"


def escape_controls(text: str, limit: int = TEXT_LIMIT) -> str:
    r"""`text` with each non-printable character escaped (`\n`, `\x1b`, `\u2028`).

    At most `limit` characters are looked at and kept, escaped; a longer text
    ends with a marker giving its length. The one-byte controls are escaped
    by `str.translate` (C speed); others (rarer) one at a time, within `limit`.
    """
    kept = text[:limit] if len(text) > limit else text
    if not kept.isprintable():
        kept = kept.translate(_BYTE_ESCAPES)
        if not kept.isprintable():
            kept = "".join(
                char if char.isprintable() else _escape_char(char) for char in kept
            )
    if len(kept) > limit or len(text) > limit:
        return f"{kept[:limit]}…[cut: {len(text)} characters in all]"
    return kept


def _escape_char(char: str) -> str:
    code = ord(char)
    if code <= 0xFFFF:  # noqa: PLR2004 - one UTF-16 unit
        return f"\\u{code:04x}"
    return f"\\U{code:08x}"


class TextLogFormatter(logging.Formatter):
    """Log lines as `logging.Formatter` writes them, with request values escaped.

    The record's formatted line is escaped whole; an exception is written as
    its traceback frames, each exception's `Type: message` escaped on one
    line. `wymcp serve` and `wymcp stdio` log with it (`LOG_FORMAT = "text"`);
    without a format it writes their line (time, level, logger, message).
    """

    def __init__(self, fmt: str | None = None, datefmt: str | None = None) -> None:
        super().__init__(fmt or TEXT_FORMAT, datefmt)

    def format(self, record: logging.LogRecord) -> str:
        """The record as one escaped line, then its escaped traceback, if any."""
        record.message = record.getMessage()
        if self.usesTime():
            record.asctime = self.formatTime(record, self.datefmt)
        text = escape_controls(self.formatMessage(record))
        if record.exc_info and record.exc_info[1] is not None:
            text += "\n" + self.formatException(record.exc_info)
        elif record.exc_text:  # formatted elsewhere: one escaped line
            text += "\n    " + escape_controls(record.exc_text)
        if record.stack_info:
            text += "\n" + _indented(self.formatStack(record.stack_info))
        return text

    def formatException(self, ei: logging._SysExcInfoType) -> str:  # noqa: N802 - logging's name
        """The traceback, indented, each exception's message escaped."""
        exc = ei[1]
        if exc is None:
            return ""
        lines: list[str] = []
        _chain(exc, lines, set())
        return "\n".join("    " + line for line in lines)


def _chain(exc: BaseException, lines: list[str], seen: set[int]) -> None:
    """Append the lines of `exc` after those of its cause or context."""
    seen.add(id(exc))
    cause, context = exc.__cause__, exc.__context__
    if len(seen) < _CHAIN_LIMIT:
        if cause is not None and id(cause) not in seen:
            _chain(cause, lines, seen)
            lines += ["", _CAUSE, ""]
        elif (
            context is not None
            and not exc.__suppress_context__
            and id(context) not in seen
        ):
            _chain(context, lines, seen)
            lines += ["", _CONTEXT, ""]
    if exc.__traceback__ is not None:
        lines.append("Traceback (most recent call last):")
        frames = "".join(traceback.format_tb(exc.__traceback__))
        lines += [escape_controls(line) for line in frames.rstrip("\n").split("\n")]
    lines.append(
        escape_controls("".join(traceback.format_exception_only(exc)).rstrip("\n"))
    )
    if isinstance(exc, BaseExceptionGroup):
        _group(exc, lines, seen)


def _group(group: BaseExceptionGroup[Any], lines: list[str], seen: set[int]) -> None:
    """Append each exception of `group`, indented; all chains share one limit."""
    for number, sub in enumerate(group.exceptions, 1):
        if id(sub) in seen:
            continue
        if len(seen) >= _CHAIN_LIMIT:
            lines.append(
                f"    +---- {len(group.exceptions) - number + 1} more, not written"
            )
            return
        lines.append(f"    +---- {number} of {len(group.exceptions)} ----")
        inner: list[str] = []
        _chain(sub, inner, seen)
        lines += ["    " + line for line in inner]


def _indented(text: str) -> str:
    return "\n".join("    " + escape_controls(line) for line in text.split("\n"))
