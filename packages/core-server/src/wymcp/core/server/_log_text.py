r"""The text log form (`LOG_FORMAT = "text"`): one record cannot forge another.

Control and format characters (CR, LF, ESC, NUL, U+2028, U+202E, ...) in a
record's line and in every exception's message become `\n`, `\x1b`-style
escapes; a traceback keeps its frame lines (the server's own code), each
indented, so every line that starts unindented begins a real record.
"""

from __future__ import annotations

import logging
import traceback
from typing import Final

_ESCAPES: Final = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}
TEXT_FORMAT: Final = "%(asctime)s %(levelname)s %(name)s: %(message)s"
"""The line `wymcp serve` and `wymcp stdio` write."""
_CHAIN_LIMIT: Final = 16
"""Chained exceptions (`__cause__`, `__context__`) written per record."""
_CAUSE: Final = "The above exception was the direct cause of the following exception:"
_CONTEXT: Final = "During handling of the above exception, another exception occurred:"


def escape_controls(text: str) -> str:
    r"""`text` with each non-printable character escaped (`\n`, `\x1b`, `\u2028`).

    Linear: one look at each character; printable text is returned as it is.
    """
    if text.isprintable():
        return text
    out = []
    for char in text:
        if char.isprintable():
            out.append(char)
        elif char in _ESCAPES:
            out.append(_ESCAPES[char])
        else:
            code = ord(char)
            if code <= 0xFF:  # noqa: PLR2004 - one byte
                out.append(f"\\x{code:02x}")
            elif code <= 0xFFFF:  # noqa: PLR2004 - one UTF-16 unit
                out.append(f"\\u{code:04x}")
            else:
                out.append(f"\\U{code:08x}")
    return "".join(out)


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


def _indented(text: str) -> str:
    return "\n".join("    " + escape_controls(line) for line in text.split("\n"))
