"""Sphinx configuration of the docs site: `just docs` builds docs/ with it.

The guides are Markdown (myst-parser); the API reference comes from each
facade's `__all__` (docs/_ext/facade_api.py). docs/development.md says why.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING

from pygments.lexers.special import TextLexer

if TYPE_CHECKING:
    from sphinx.application import Sphinx

sys.path.insert(0, str(Path(__file__).resolve().parent / "_ext"))

project = "wymcp"
author = "the wymcp authors"
project_copyright = "the wymcp authors"

extensions = [
    "myst_parser",
    "sphinx.ext.autodoc",
    "sphinx.ext.napoleon",
    "facade_api",
    "private_types",
    "readable_defaults",
]

source_suffix = {".md": "markdown", ".rst": "restructuredtext"}
root_doc = "index"
exclude_patterns = ["_ext"]

# Strict: every reference must resolve (`-n` on the command line says the same).
nitpicky = True
# Docstrings are written for readers of the source: `x` there means code, as in
# Markdown, not an RST title reference.
default_role = "literal"

myst_heading_anchors = 6
myst_enable_extensions = ["colon_fence"]

napoleon_google_docstring = True
napoleon_numpy_docstring = False
napoleon_use_rtype = False

autodoc_member_order = "bysource"
autodoc_typehints = "signature"

html_theme = "furo"
html_title = "wymcp"
html_static_path: list[str] = []

# Every public facade, lowest layer first: a name two facades export is
# documented in the lowest one (where it is defined) and pointed at from the other.
facade_api_facades = [
    "wymcp.core.schema",
    "wymcp.core.gates",
    "wymcp.core.server",
    "wymcp.core.server.tools",
    "wymcp.conf",
    "wymcp.transport.stdio",
    "wymcp.transport.aiohttp",
    "wymcp.broker.redis",
    "wymcp.testing",
    "wymcp.cli",
]

# Types of other projects (no intersphinx: the build reads no network), each
# by its module; anything else that does not resolve fails the build.
nitpick_ignore_regex = [
    ("py:.*", r"(collections\.abc|re|argparse|asyncio|_asyncio|logging)(\.\w+)+"),
    ("py:.*", r"contextlib\.\w+"),
    ("py:.*", r"aiohttp\.[\w.]+"),
    ("py:.*", r"redis\.[\w.]+"),
]


def setup(app: Sphinx) -> None:
    """Show Mermaid diagrams (GitHub draws them) as their source."""
    app.add_lexer("mermaid", TextLexer)
