"""An unexported wymcp type in a public signature shows as text, not a warning.

Only a name that imports from a `_module` (a TypeVar, an alias, a class no
facade exports: no page to link to); a name that names nothing still fails.
"""

from __future__ import annotations

import builtins
import importlib
import sys
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from docutils.nodes import Element, TextElement
    from sphinx.addnodes import pending_xref
    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata


def _imports(target: str) -> bool:
    """Whether a dotted name names an object (a module, then attributes)."""
    parts = target.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            value: object = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for part in parts[cut:]:
            if not hasattr(value, part):
                return False
            value = getattr(value, part)
        return True
    return False


def _private_target(
    _app: Sphinx, _env: BuildEnvironment, node: pending_xref, contnode: TextElement
) -> Element | None:
    """The reference as text when it names an object in a wymcp `_module`.

    Dotted (`wymcp.core.server._stream_outbox.Outbox`) or, as an attrs `__init__`
    leaves an annotation, bare in a `_module` of the page's facade.
    """
    target = str(node.get("reftarget", ""))
    if node.get("refdomain") != "py" or hasattr(builtins, target):
        return None
    if "." in target:
        private = target.startswith("wymcp.") and "._" in target and _imports(target)
    else:
        prefix = f"{node.get('py:module') or ''}._"
        modules = sorted(name for name in sys.modules if name.startswith(prefix))
        private = any(_imports(f"{module}.{target}") for module in modules)
    return contnode if private else None


def setup(app: Sphinx) -> ExtensionMetadata:
    """Resolve what no other resolver did, before the nitpicky warning."""
    app.connect("missing-reference", _private_target)
    metadata: dict[str, Any] = {"parallel_read_safe": True}
    return metadata  # type: ignore[return-value]
