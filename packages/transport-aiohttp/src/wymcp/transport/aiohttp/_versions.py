"""`wymcp --version`: the installed wymcp distributions and their versions.

`importlib.metadata` loads only when the versions are asked for: every other
command (`serve` first) starts without it.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence
from typing import Any

_SEPARATORS = re.compile(r"[-_.]+")


def installed_versions() -> list[tuple[str, str]]:
    """Every installed distribution named `wymcp-*`, with its version, by name."""
    from importlib import metadata  # noqa: PLC0415 - see the module docstring

    found: dict[str, str] = {}
    for distribution in metadata.distributions():
        name = distribution.metadata["Name"]
        if not name:  # a broken installation has none
            continue
        normal = _SEPARATORS.sub("-", name).lower()
        if normal.startswith("wymcp-"):
            found[normal] = distribution.version
    return sorted(found.items())


class VersionAction(argparse.Action):
    """Print one `name version` line per wymcp distribution, then exit 0."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(
        self,
        parser: argparse.ArgumentParser,
        namespace: argparse.Namespace,
        values: object,
        option_string: str | None = None,
    ) -> None:
        del namespace, values, option_string
        lines = [f"{name} {version}" for name, version in installed_versions()]
        text = "\n".join(lines or ["wymcp: no wymcp distribution is installed"])
        sys.stdout.write(text + "\n")
        parser.exit()
