"""Signature defaults a reader (and Sphinx's signature parser) can read.

A function default shows as its name, not `<built-in function monotonic>`;
an attrs field built by a factory as `dict()`, not attrs' `NOTHING`.
"""

from __future__ import annotations

import inspect
import re
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from sphinx.application import Sphinx
    from sphinx.util.typing import ExtensionMetadata

_FUNCTION = re.compile(r"<(?:built-in function|function) ([\w.]+)(?: at 0x[0-9a-f]+)?>")


def _readable_defaults(
    _app: Sphinx,
    _what: str,
    _name: str,
    obj: object,
    _options: object,
    signature: str | None,
    return_annotation: str | None,
) -> tuple[str | None, str | None] | None:
    """The signature with function reprs and attrs factories spelled as code."""
    if signature is None:
        return None
    signature = _FUNCTION.sub(r"\1", signature)
    if inspect.isclass(obj) and attrs.has(obj):
        for field in attrs.fields(obj):
            factory: object = getattr(field.default, "factory", None)  # a Factory's
            if callable(factory):
                made = getattr(factory, "__name__", "factory")
                pattern = rf"(\b{re.escape(field.alias)}: [^=]*= )NOTHING\b"
                signature = re.sub(pattern, rf"\g<1>{made}()", signature)
    return signature, return_annotation


def setup(app: Sphinx) -> ExtensionMetadata:
    """Rewrite every autodoc signature as it is made."""
    app.connect("autodoc-process-signature", _readable_defaults)
    metadata: dict[str, Any] = {"parallel_read_safe": True}
    return metadata  # type: ignore[return-value]
