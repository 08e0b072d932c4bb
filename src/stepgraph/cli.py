"""The ``stepgraph`` command: ``stepgraph dev`` / ``stepgraph serve`` host graphs over HTTP."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    """Entry point of the console script (the server lives in ``stepgraph.server``)."""
    from stepgraph.server.cli import run_cli

    return run_cli(sys.argv[1:] if argv is None else argv)


if __name__ == "__main__":
    raise SystemExit(main())
