"""`python -m wymcp.transport.stdio --settings MODULE`: `wymcp stdio` without aiohttp.

The same server as `wymcp stdio`; it starts sooner, as it never imports the
HTTP transport.
"""

from __future__ import annotations

import argparse
import logging
import sys

from wymcp.conf import ENVIRONMENT_VARIABLE
from wymcp.core.server import TextLogFormatter
from wymcp.transport.stdio._run import run


def main(argv: list[str] | None = None) -> int:
    """Parse `--settings` and serve; return the exit status."""
    parser = argparse.ArgumentParser(
        prog="python -m wymcp.transport.stdio",
        description="Serve a wymcp settings module on stdin/stdout.",
    )
    parser.add_argument(
        "--settings",
        metavar="MODULE",
        help=f"the settings module (default: ${ENVIRONMENT_VARIABLE})",
    )
    args = parser.parse_args(argv)
    stderr = logging.StreamHandler()
    stderr.setFormatter(TextLogFormatter())  # request values escaped (issue 27)
    logging.basicConfig(level=logging.INFO, handlers=[stderr])
    return run(args.settings)


if __name__ == "__main__":
    sys.exit(main())
