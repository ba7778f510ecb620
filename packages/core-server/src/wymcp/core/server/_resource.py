"""Resources declared as classes: one URI or an RFC 6570 template family.

`prepare_resource` checks a declaration once; `ResourceSpec` is what the
engine lists, matches and reads.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import attrs

from wymcp.core.schema import ConfigurationError, Resource
from wymcp.core.server._content import Content, resource_contents
from wymcp.core.server._revision import Revision
from wymcp.core.server._uri_template import TemplateError, UriTemplate


@attrs.frozen(eq=False)
class ResourceSpec:
    """A checked resource: the instance and its compiled template, if any."""

    name: str
    resource: Resource
    template: UriTemplate | None

    @property
    def key(self) -> str:
        """The URI or the template text."""
        if self.template is not None:
            return self.template.text
        return self.resource.uri or ""

    def definition(self, revision: Revision) -> dict[str, Any]:
        """The Resource or ResourceTemplate object of the list methods."""
        resource = self.resource
        shape: dict[str, Any] = {}
        if self.template is not None:
            shape["uriTemplate"] = self.template.text
        else:
            shape["uri"] = resource.uri
        shape["name"] = self.name
        if resource.title and revision.titles:
            shape["title"] = resource.title
        if resource.description:
            shape["description"] = resource.description
        if resource.mime_type:
            shape["mimeType"] = resource.mime_type
        if resource.size is not None and self.template is None:
            shape["size"] = resource.size
        if resource.annotations:
            shape["annotations"] = dict(resource.annotations)
        return shape

    def match(self, uri: str) -> dict[str, str] | None:
        """The template variables if `uri` is this resource's, else None."""
        if self.template is None:
            return {} if uri == self.resource.uri else None
        return self.template.match(uri)

    def contents(self, uri: str, value: object) -> list[dict[str, Any]]:
        """Shape what `read` returned into ResourceContents objects."""
        items = value if isinstance(value, list | tuple) else [value]
        mime = self.resource.mime_type
        out: list[dict[str, Any]] = []
        for item in items:
            if isinstance(item, str):
                out.append(resource_contents(uri, text=item, mime_type=mime))
            elif isinstance(item, bytes):
                out.append(resource_contents(uri, blob=item, mime_type=mime))
            elif isinstance(item, Content) and item.block.get("type") == "resource":
                out.append(dict(item.block["resource"]))
            elif isinstance(item, Mapping) and isinstance(item.get("uri"), str):
                out.append(dict(item))
            else:
                raise TypeError(
                    "read() must return str, bytes, contents mappings or "
                    "embedded_resource(...) content"
                )
        return out


def prepare_resource(resource: object) -> ResourceSpec:
    """Check a Resource class or instance once, naming every problem."""
    instance = resource() if isinstance(resource, type) else resource
    label = getattr(instance, "name", None) or type(instance).__name__
    problems: list[str] = []
    if not isinstance(instance, Resource):
        raise ConfigurationError(str(label), ["is not a wymcp Resource"])
    name = getattr(instance, "name", None)
    if not isinstance(name, str) or not name:
        problems.append("name must be a non-empty string")
    uri, template_text = instance.uri, instance.uri_template
    if (uri is None) == (template_text is None):
        problems.append("set exactly one of uri and uri_template")
    template = None
    if template_text is not None:
        try:
            template = UriTemplate.compile(template_text)
        except TemplateError as error:
            problems.append(f"uri_template: {error}")
    if problems:
        raise ConfigurationError(str(label), problems)
    return ResourceSpec(name=str(name), resource=instance, template=template)
