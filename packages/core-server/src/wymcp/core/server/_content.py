"""Content blocks a tool returns, and `ToolResult`, the explicit answer.

Blocks: text, image, audio, embedded resource and resource link.
"""

from __future__ import annotations

import base64
from collections.abc import Mapping, Sequence
from typing import Any

import attrs


@attrs.frozen
class Content:
    """One content block, as it goes on the wire."""

    block: Mapping[str, Any]

    def to_json(self) -> dict[str, Any]:
        """A fresh copy of the wire shape."""
        return dict(self.block)


def _b64(data: bytes | str) -> str:
    if isinstance(data, bytes):
        return base64.b64encode(data).decode("ascii")
    return data


def text(value: str) -> Content:
    """A text block."""
    return Content({"type": "text", "text": value})


def image(data: bytes | str, mime_type: str) -> Content:
    """An image block: raw bytes, or a string already base64-encoded."""
    return Content({"type": "image", "data": _b64(data), "mimeType": mime_type})


def audio(data: bytes | str, mime_type: str) -> Content:
    """An audio block: raw bytes, or a string already base64-encoded."""
    return Content({"type": "audio", "data": _b64(data), "mimeType": mime_type})


def resource_contents(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
) -> dict[str, Any]:
    """The contents of a resource: exactly one of `text` or `blob`."""
    if (text is None) == (blob is None):
        raise ValueError("resource contents take exactly one of text or blob")
    contents: dict[str, Any] = {"uri": uri}
    if mime_type is not None:
        contents["mimeType"] = mime_type
    if text is not None:
        contents["text"] = text
    else:
        contents["blob"] = _b64(blob)  # type: ignore[arg-type]
    return contents


def embedded_resource(
    uri: str,
    *,
    text: str | None = None,
    blob: bytes | str | None = None,
    mime_type: str | None = None,
) -> Content:
    """A resource embedded in the answer (exactly one of `text` or `blob`)."""
    return Content(
        {
            "type": "resource",
            "resource": resource_contents(
                uri, text=text, blob=blob, mime_type=mime_type
            ),
        }
    )


def resource_link(
    uri: str,
    name: str,
    *,
    title: str | None = None,
    description: str | None = None,
    mime_type: str | None = None,
    size: int | None = None,
) -> Content:
    """A link to a resource the client may read.

    It exists from 2025-06-18 on; a revision without it gets a text block.
    """
    block: dict[str, Any] = {"type": "resource_link", "uri": uri, "name": name}
    block.update(
        {
            key: value
            for key, value in (
                ("title", title),
                ("description", description),
                ("mimeType", mime_type),
                ("size", size),
            )
            if value is not None
        }
    )
    return Content(block)


_NOTHING: Any = object()


@attrs.frozen(kw_only=True)
class ToolResult:
    """An explicit answer: content blocks, a structured value, error or not.

    When `hint_context` is set, `Tool.hints(action, hint_context)` runs and
    its hints follow the content as one more text block.
    """

    content: Sequence[Content] = ()
    structured: Any = _NOTHING
    is_error: bool = False
    hint_context: Any = None

    @property
    def has_structured(self) -> bool:
        """Whether a structured value was given."""
        return self.structured is not _NOTHING
