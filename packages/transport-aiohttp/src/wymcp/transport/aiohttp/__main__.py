"""`python -m wymcp.transport.aiohttp`: the `wymcp` command, without its script."""

from wymcp.transport.aiohttp._command import main

if __name__ == "__main__":
    raise SystemExit(main())
