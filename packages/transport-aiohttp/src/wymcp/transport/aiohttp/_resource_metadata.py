"""RFC 9728 protected-resource metadata: this server's resource id and its URL.

The document names the resource (`AUTH_RESOURCE`, else the request's origin
plus `PATH`), the authorization servers and the scopes; it is served at
`/.well-known/oauth-protected-resource` and at that path suffixed with the
resource's path, the URL the `WWW-Authenticate` challenges point at.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any
from urllib.parse import urlsplit

from aiohttp import web

from wymcp.conf import Settings

WELL_KNOWN = "/.well-known/oauth-protected-resource"


class ResourceMetadata:
    """Builds the metadata document and its URL from the settings."""

    def __init__(self, settings: Settings) -> None:
        self._settings = settings

    def resource(self, request: web.Request) -> str:
        """This server's resource identifier, the audience its tokens must name."""
        configured = self._settings.AUTH_RESOURCE
        if configured is not None:
            return configured
        return f"{request.scheme}://{request.host}{self._settings.PATH}"

    def url(self, request: web.Request) -> str:
        """Where the metadata of this resource is served (RFC 9728 §3.1)."""
        parts = urlsplit(self.resource(request))
        return f"{parts.scheme}://{parts.netloc}{WELL_KNOWN}{parts.path.rstrip('/')}"

    def paths(self) -> tuple[str, ...]:
        """The routes serving the document: the root and the path-suffixed forms."""
        suffixes = [self._settings.PATH]
        if self._settings.AUTH_RESOURCE is not None:
            suffixes.append(urlsplit(self._settings.AUTH_RESOURCE).path)
        paths = [WELL_KNOWN] + [WELL_KNOWN + s.rstrip("/") for s in suffixes]
        return tuple(dict.fromkeys(paths))

    def document(
        self, request: web.Request, scopes_supported: Sequence[str]
    ) -> dict[str, Any]:
        """The metadata JSON object (RFC 9728 §2)."""
        settings = self._settings
        document: dict[str, Any] = {
            "resource": self.resource(request),
            "authorization_servers": list(settings.AUTH_AUTHORIZATION_SERVERS),
        }
        scopes = list(settings.AUTH_SCOPES_SUPPORTED) or list(scopes_supported)
        if scopes:
            document["scopes_supported"] = scopes
        document["bearer_methods_supported"] = ["header"]
        document["resource_name"] = settings.SERVER_NAME
        return document
