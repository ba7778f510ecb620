"""The API reference of each facade, generated from its `__all__` at build time.

`.. facade-api:: wymcp.core.schema` becomes one autodoc entry per exported name,
so a new export appears without editing a page (docs/development.md).
"""

from __future__ import annotations

import ast
import importlib
import inspect
import pkgutil
import re
import sys
from importlib.util import resolve_name
from typing import TYPE_CHECKING, Any

from docutils import nodes
from docutils.statemachine import StringList
from sphinx.errors import PycodeError
from sphinx.pycode import ModuleAnalyzer
from sphinx.util import logging
from sphinx.util.docutils import SphinxDirective
from sphinx.util.nodes import nested_parse_with_titles

if TYPE_CHECKING:
    from types import ModuleType

    from sphinx.application import Sphinx
    from sphinx.environment import BuildEnvironment
    from sphinx.util.typing import ExtensionMetadata

LOG = logging.getLogger(__name__)
PAGES = "facade_api_pages"  # on the environment: {docname: facade}


def _modules(facade: str) -> list[ModuleType]:
    """The facade's package and each of its `_modules` (a facade module: itself)."""
    package = importlib.import_module(facade)
    if not hasattr(package, "__path__"):
        return [package]
    found = pkgutil.iter_modules(package.__path__, f"{facade}.")
    return [package, *(importlib.import_module(m.name) for m in found)]


def _attribute_doc(module: str, name: str) -> list[str]:
    """The docstring under the assignment `name = ...` that `module` binds.

    Followed through `from ... import` (`as` included) to where it is assigned.
    """
    try:
        docs = ModuleAnalyzer.for_module(module).find_attr_docs()
        tree = ast.parse(inspect.getsource(importlib.import_module(module)))
    except (PycodeError, OSError, TypeError):  # no source to read: no docstring
        return []
    if ("", name) in docs:
        return list(docs["", name])
    for node in tree.body:
        if not isinstance(node, ast.ImportFrom):
            continue
        for alias in node.names:
            if (alias.asname or alias.name) == name:
                package = module if hasattr(sys.modules[module], "__path__") else None
                source = resolve_name("." * node.level + (node.module or ""), package)
                return _attribute_doc(source, alias.name)
    return []


def _data_rst(facade: str, name: str, value: object) -> list[str]:
    """A constant or type alias: its value and the docstring under its assignment.

    Not `autodata`, which shows the docstring of `int` or `str` for a constant
    whose own docstring sits in a `_module`.
    """
    shown = re.sub(r"\b(collections\.abc|typing)\.", "", repr(value))
    doc = [f"   {line}" if line else "" for line in _attribute_doc(facade, name)]
    return [f".. py:data:: {name}", f"   :value: {shown}", "", *doc, ""]


def _entry_rst(facade: str, name: str, value: object) -> list[str]:
    """The autodoc entry of one exported name; warn if it has no docstring."""
    data = not (inspect.isclass(value) or inspect.isroutine(value))
    if not (_attribute_doc(facade, name) if data else value.__doc__):
        LOG.warning("%s.%s is exported without a docstring", facade, name)
    if inspect.isclass(value):
        kind = "exception" if issubclass(value, BaseException) else "class"
        return [f".. auto{kind}:: {facade}.{name}", "   :members:", ""]
    if inspect.isroutine(value):
        return [f".. autofunction:: {facade}.{name}", ""]
    return _data_rst(facade, name, value)


def home(facades: list[str], facade: str, name: str) -> str:
    """The lowest-layer facade that exports the very object `facade.name` is."""
    value = getattr(importlib.import_module(facade), name)
    for other in facades:
        module = importlib.import_module(other)
        if name in module.__all__ and getattr(module, name) is value:
            return other
    return facade


def facade_rst(facades: list[str], facade: str) -> list[str]:
    """One facade's page: its docstring, then each name of `__all__` in order.

    A name a lower facade exports too is documented there and linked here.
    """
    lines = [f".. automodule:: {facade}", ""]
    elsewhere: list[str] = []
    for name in importlib.import_module(facade).__all__:
        where = home(facades, facade, name)
        if where != facade:
            elsewhere.append(f"- :py:obj:`{where}.{name}`")
        else:
            value = getattr(importlib.import_module(facade), name)
            lines += _entry_rst(facade, name, value)
    if elsewhere:
        lines += ["", "Also exported here, documented where they are defined:", ""]
        lines += elsewhere
    return lines


class FacadeApi(SphinxDirective):
    """`.. facade-api:: wymcp.core.schema`: every name in that facade's `__all__`."""

    required_arguments = 1

    def run(self) -> list[nodes.Node]:
        """Parse the generated autodoc entries in place of the directive."""
        facade = self.arguments[0]
        facades: list[str] = self.config.facade_api_facades
        if facade not in facades:
            raise self.error(f"{facade} is not in facade_api_facades (docs/conf.py)")
        getattr(self.env, PAGES)[self.env.docname] = facade
        for module in _modules(facade):
            self.env.note_dependency(inspect.getfile(module))
        source = StringList(facade_rst(facades, facade), source=f"<{facade}.__all__>")
        section = nodes.section()
        section.document = self.state.document
        nested_parse_with_titles(self.state, source, section)
        return section.children


def _start(_app: Sphinx, env: BuildEnvironment, _added: object) -> None:
    if not hasattr(env, PAGES):
        setattr(env, PAGES, {})


def _forget(_app: Sphinx, env: BuildEnvironment, docname: str) -> None:
    getattr(env, PAGES).pop(docname, None)


def _every_facade_has_a_page(app: Sphinx, env: BuildEnvironment) -> None:
    """Warn (an error under -W) when a facade of docs/conf.py has no page."""
    documented = set(getattr(env, PAGES).values())
    for facade in app.config.facade_api_facades:
        if facade not in documented:
            LOG.warning("facade %s has no page: add docs/api/%s.rst", facade, facade)


def setup(app: Sphinx) -> ExtensionMetadata:
    """Register the directive, its setting and the check that no facade is left out."""
    app.add_config_value("facade_api_facades", [], "env", list)
    app.add_directive("facade-api", FacadeApi)
    app.connect("env-before-read-docs", _start)
    app.connect("env-purge-doc", _forget)
    app.connect("env-check-consistency", _every_facade_has_a_page)
    metadata: dict[str, Any] = {"parallel_read_safe": False, "env_version": 1}
    return metadata  # type: ignore[return-value]
