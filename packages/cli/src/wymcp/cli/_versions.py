"""`wymcp --version`: the wymcp release, then each installed wymcp distribution.

Every package of a release carries its version; one that does not is named.
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
_COMMAND = "wymcp-cli"
"""The distribution that ships the `wymcp` command: its version is the release's."""


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


def release() -> str:
    """The release the `wymcp` command belongs to: its distribution's version."""
    from importlib import metadata  # noqa: PLC0415 - see the module docstring

    return metadata.version(_COMMAND)


class VersionAction(argparse.Action):
    """Print `wymcp V`, then one `name version` line per distribution; exit 0."""

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
        sys.stdout.write("\n".join(version_lines(installed_versions())) + "\n")
        parser.exit()


def version_lines(installed: list[tuple[str, str]]) -> list[str]:
    """`wymcp V` (the command's release), then `name version` per distribution.

    A distribution of another release is marked: a mixed install is the first
    thing to rule out when something fails.
    """
    release = dict(installed).get(_COMMAND)
    if release is None:
        return ["wymcp: no wymcp distribution is installed"]
    lines = [f"wymcp {release}"]
    for name, version in installed:
        if version == release:
            lines.append(f"{name} {version}")
        else:
            lines.append(f"{name} {version} (not {release}: install {name}=={release})")
    return lines
