"""The environment switch: ``STEPGRAPH_LANGGRAPH_ALIAS=1`` installs the alias at start-up.

``stepgraph_langgraph_alias.pth`` (installed into site-packages with stepgraph) imports this
module only when the variable is set, so interpreters without it pay nothing.
"""

from __future__ import annotations

import os
import sys


def enabled(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def autoload() -> None:
    if not enabled(os.environ.get("STEPGRAPH_LANGGRAPH_ALIAS")):
        return
    try:
        from stepgraph.compat import install_langgraph_alias

        install_langgraph_alias()
    except Exception as exc:  # noqa: BLE001 - never break interpreter start-up
        print(f"stepgraph: STEPGRAPH_LANGGRAPH_ALIAS is set but the alias failed: {exc}",
              file=sys.stderr)


autoload()
