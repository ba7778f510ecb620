"""What an engine serves: its tools, resources and prompts, in list order.

Entries can be added and removed at runtime; each change reports its kind
("tools", "resources", "prompts") to the engine, which tells the clients.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from wymcp.core.schema import (
    RESERVED_NAME,
    ConfigurationError,
    ToolSpec,
    full_input_schema,
    prepare_all,
    published_description,
    published_task_support,
)
from wymcp.core.server._help import help_definition
from wymcp.core.server._prompt import PromptSpec, prepare_prompt
from wymcp.core.server._resource import ResourceSpec, prepare_resource
from wymcp.core.server._revision import Revision


def tool_definition(
    spec: ToolSpec, revision: Revision, *, full: bool = False
) -> dict[str, Any]:
    """A Tool object of `tools/list`, with the fields `revision` has.

    `full` publishes each action's fields (`PUBLISH_SCHEMA = "full"`).
    """
    tool = spec.tool
    definition: dict[str, Any] = {"name": spec.name}
    title = getattr(tool, "title", None)
    if title and revision.titles:
        definition["title"] = title
    definition["description"] = published_description(spec)
    definition["inputSchema"] = (
        full_input_schema(spec) if full else dict(spec.input_schema)
    )
    output = spec.output_schema
    if output is not None and revision.publishes_output_schema(output):
        definition["outputSchema"] = dict(output)
    annotations = getattr(tool, "annotations", None)
    if annotations:
        definition["annotations"] = dict(annotations)
    support = published_task_support(spec.task_support)
    if support != "forbidden" and revision.stateless:
        definition["execution"] = {"taskSupport": support}
    return definition


def _unique(kind: str, names: list[str]) -> None:
    seen: set[str] = set()
    for name in names:
        if name in seen:
            raise ConfigurationError(name, [f"two {kind} share the name {name!r}"])
        seen.add(name)


class Catalogue:
    """The tools, resources and prompts one engine serves."""

    def __init__(
        self,
        tools: Iterable[object],
        resources: Iterable[object],
        prompts: Iterable[object],
        on_change: Callable[[str], None],
        *,
        full: bool = False,
    ) -> None:
        self._full = full
        self._set_tools(list(prepare_all(list(tools))))
        self.resources: list[ResourceSpec] = [prepare_resource(r) for r in resources]
        self.prompts: list[PromptSpec] = [prepare_prompt(p) for p in prompts]
        _unique("resources", [r.key for r in self.resources])
        _unique("prompts", [p.name for p in self.prompts])
        self.has_resources = bool(self.resources)
        self.has_prompts = bool(self.prompts)
        self._on_change = on_change
        self._cache: dict[tuple[str, str], list[dict[str, Any]]] = {}

    def _set_tools(self, tools: list[ToolSpec]) -> None:
        self.tools = tools
        self.by_name: dict[str, ToolSpec] = {s.name: s for s in tools}
        """The tools by name (help excluded), rebuilt on each change of them."""

    def _changed(self, kind: str) -> None:
        self._cache.clear()
        self._on_change(kind)

    # tools

    def tool(self, name: str) -> ToolSpec | None:
        """The tool named `name` (help excluded), or None."""
        return self.by_name.get(name)

    def tool_names(self) -> list[str]:
        """Every tool name, help included, sorted."""
        return sorted([*(s.name for s in self.tools), RESERVED_NAME])

    def add_tool(self, tool: object) -> None:
        """Serve one more tool (replacing a tool of the same name)."""
        (spec,) = prepare_all([tool])
        self._set_tools([s for s in self.tools if s.name != spec.name] + [spec])
        self._changed("tools")

    def remove_tool(self, name: str) -> bool:
        """Stop serving a tool; False if there was none by that name."""
        kept = [s for s in self.tools if s.name != name]
        if len(kept) == len(self.tools):
            return False
        self._set_tools(kept)
        self._changed("tools")
        return True

    def tool_definitions(self, revision: Revision) -> list[dict[str, Any]]:
        """`tools/list` entries in order, help last."""
        key = ("tools", revision.name)
        if key not in self._cache:
            self._cache[key] = [
                *(tool_definition(s, revision, full=self._full) for s in self.tools),
                help_definition(),
            ]
        return self._cache[key]

    # resources

    def add_resource(self, resource: object) -> None:
        """Serve one more resource or template (replacing one with its key)."""
        spec = prepare_resource(resource)
        self.resources = [r for r in self.resources if r.key != spec.key] + [spec]
        self.has_resources = True
        self._changed("resources")

    def remove_resource(self, key: str) -> bool:
        """Stop serving the resource with this URI, template or name."""
        kept = [r for r in self.resources if key not in (r.key, r.name)]
        if len(kept) == len(self.resources):
            return False
        self.resources = kept
        self._changed("resources")
        return True

    def resource_definitions(self, revision: Revision, *, templates: bool) -> list[Any]:
        """`resources/list` or `resources/templates/list` entries in order."""
        key = ("templates" if templates else "resources", revision.name)
        if key not in self._cache:
            self._cache[key] = [
                r.definition(revision)
                for r in self.resources
                if (r.template is not None) == templates
            ]
        return self._cache[key]

    def resource_for(self, uri: str) -> tuple[ResourceSpec, dict[str, str]] | None:
        """The resource serving `uri` (direct resources first) and its values."""
        ordered = sorted(self.resources, key=lambda r: r.template is not None)
        for spec in ordered:
            params = spec.match(uri)
            if params is not None:
                return spec, params
        return None

    def template(self, text: str) -> ResourceSpec | None:
        """The template resource whose template is `text`."""
        return next(
            (r for r in self.resources if r.template and r.template.text == text),
            None,
        )

    # prompts

    def prompt(self, name: str) -> PromptSpec | None:
        """The prompt named `name`, or None."""
        return next((p for p in self.prompts if p.name == name), None)

    def add_prompt(self, prompt: object) -> None:
        """Serve one more prompt (replacing one of the same name)."""
        spec = prepare_prompt(prompt)
        self.prompts = [p for p in self.prompts if p.name != spec.name] + [spec]
        self.has_prompts = True
        self._changed("prompts")

    def remove_prompt(self, name: str) -> bool:
        """Stop serving a prompt."""
        kept = [p for p in self.prompts if p.name != name]
        if len(kept) == len(self.prompts):
            return False
        self.prompts = kept
        self._changed("prompts")
        return True

    def prompt_definitions(self, revision: Revision) -> list[Any]:
        """`prompts/list` entries in order."""
        key = ("prompts", revision.name)
        if key not in self._cache:
            self._cache[key] = [p.definition(revision) for p in self.prompts]
        return self._cache[key]
