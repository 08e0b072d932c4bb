"""``python -m stepgraph.compat [-m module | -c code | program.py] [args...]``.

Runs a program that imports ``langgraph`` on stepgraph without editing it: the alias is
installed, ``STEPGRAPH_LANGGRAPH_ALIAS=1`` is set for child processes, then the program runs
as ``python`` would run it (``sys.argv`` as the program expects, ``__main__`` its module).
"""

from __future__ import annotations

import os
import runpy
import sys

USAGE = (
    "usage: python -m stepgraph.compat [-m module | -c code | program.py] [args...]\n"
    "Runs the program with `import langgraph...` resolved to stepgraph."
)


def main(argv: list[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    if not args or args[0] in ("-h", "--help"):
        print(USAGE, file=sys.stderr if not args else sys.stdout)
        return 2 if not args else 0
    from stepgraph.compat import ENV_VAR, install_langgraph_alias

    os.environ[ENV_VAR] = "1"
    install_langgraph_alias()
    first = args[0]
    if first == "-m":
        if len(args) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = [args[1], *args[2:]]
        runpy.run_module(args[1], run_name="__main__", alter_sys=True)
    elif first == "-c":
        if len(args) < 2:
            print(USAGE, file=sys.stderr)
            return 2
        sys.argv = ["-c", *args[2:]]
        exec(compile(args[1], "<string>", "exec"), {"__name__": "__main__"})  # noqa: S102
    else:
        sys.argv = args
        sys.path.insert(0, os.path.dirname(os.path.abspath(first)))
        runpy.run_path(first, run_name="__main__")
    return 0


if __name__ == "__main__":
    try:
        code = main()
    except SystemExit as exc:  # the program's own exit status
        raise exc
    sys.exit(code)
