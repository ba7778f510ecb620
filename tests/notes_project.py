"""A user's project of two modules (tools and settings), for CLI and install tests.

The README's own example is a one-file server: tests/docs/test_one_file_server.py.
"""

from __future__ import annotations

from pathlib import Path

NOTES_TOOLS = """\
# myapp/tools.py
from wymcp.core.schema import Action, Tool, ToolError

class Notes(Tool):
    name = "notes"
    description = "Keep short notes."
    actions = {
        "add": Action(
            description="Add a note",
            properties={"text": {"type": "string", "minLength": 1, "maxLength": 500},
                        "pinned": {"type": "boolean"}},
            required=["text"],
            defaults={"pinned": False},
        ),
        "get": Action(
            description="Get a note",
            properties={"id": {"type": "integer", "minimum": 1}},
            required=["id"],
        ),
    }

    def __init__(self) -> None:
        self.notes: list[dict[str, object]] = []

    async def run_action(self, action, data, ctx):
        if action == "add":
            self.notes.append(data)
            return {"id": len(self.notes)}
        if data["id"] > len(self.notes):
            raise ToolError(f"no note {data['id']}")
        return self.notes[data["id"] - 1]
"""
"""The tools module of the project, as the README of 0.2.0 showed it."""

NOTES_SETTINGS = 'TOOLS = ["myapp.tools.Notes"]\n'


def write_notes_project(package: Path) -> None:
    """Write `myapp/` (an existing folder): `__init__.py`, `tools.py`, `settings.py`."""
    (package / "__init__.py").write_text("")
    (package / "tools.py").write_text(NOTES_TOOLS)
    (package / "settings.py").write_text(NOTES_SETTINGS)
