"""`python -m wymcp.cli`: the `wymcp` command, without its script."""

from wymcp.cli._main import main

if __name__ == "__main__":
    raise SystemExit(main())
