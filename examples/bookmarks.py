# bookmarks.py: a tool and its settings in one file; wymcp serve --settings bookmarks
from typing import Annotated

import attrs

from wymcp.core.server.tools import Format, MinLen, Tool, ToolError, action


@attrs.frozen
class Bookmark:
    title: str
    url: str
    tags: list[str] | None = None


class Bookmarks(Tool):
    name = "bookmarks"
    description = "Keep bookmarks."

    def __init__(self) -> None:
        self.saved: dict[str, Bookmark] = {}

    @action(description="Add a bookmark")
    async def add(
        self,
        title: Annotated[str, MinLen(1)],
        url: Annotated[str, Format("uri")],
        tags: list[str] | None = None,
    ) -> Bookmark:
        if url in self.saved:
            raise ToolError(f"{url} is saved already")
        self.saved[url] = Bookmark(title, url, tags)
        return self.saved[url]

    @action(description="Find bookmarks by tag (every one without a tag)")
    async def find(self, tag: str | None = None) -> list[Bookmark]:
        return [b for b in self.saved.values() if tag is None or tag in (b.tags or [])]


TOOLS = [Bookmarks]
