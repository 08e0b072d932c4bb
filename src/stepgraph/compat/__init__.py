"""Run LangGraph-ecosystem code on stepgraph, unchanged: the ``langgraph`` drop-in alias.

``install_langgraph_alias()`` makes every ``import langgraph...`` in the process resolve to
stepgraph (even where the real LangGraph is installed, as langchain v1 requires it), so
``langchain.agents.create_agent``, langgraph-supervisor, langgraph-swarm, langmem and
deepagents build and run stepgraph graphs. Call it before anything imports ``langgraph``
(or ``langchain.agents``), or, for programs you do not edit:

* ``python -m stepgraph.compat program.py [args]`` (also ``-m module`` and ``-c code``);
* ``STEPGRAPH_LANGGRAPH_ALIAS=1 python program.py`` (read at interpreter start-up by the
  ``stepgraph_langgraph_alias.pth`` file stepgraph installs).

``stepgraph serve``/``dev`` enable it before loading graph modules. ``docs/compat.md`` lists
the module paths provided and what is not supported. Nothing here is imported by
``import stepgraph``.
"""

from __future__ import annotations

from stepgraph.compat._alias import SUPPLEMENTS, UNSUPPORTED, is_installed, langgraph_modules_loaded
from stepgraph.compat._alias import install as _install
from stepgraph.compat._alias import uninstall as _uninstall
from stepgraph.compat._errors import ForeignGraphError, LangGraphAliasError, UnsupportedNameError

__all__ = [
    "ENV_VAR",
    "ForeignGraphError",
    "LangGraphAliasError",
    "SUPPLEMENTS",
    "UNSUPPORTED",
    "UnsupportedNameError",
    "install_langgraph_alias",
    "is_langgraph_alias_installed",
    "langgraph_modules_loaded",
    "uninstall_langgraph_alias",
]

ENV_VAR = "STEPGRAPH_LANGGRAPH_ALIAS"
"""Set to ``1``/``true`` to install the alias when the interpreter starts."""


def install_langgraph_alias() -> None:
    """Make ``import langgraph...`` resolve to stepgraph in this process (idempotent).

    Raises ``LangGraphAliasError`` (SG610) if the real LangGraph was already imported: modules
    built on it would mix two runtimes.
    """
    _install()


def uninstall_langgraph_alias() -> None:
    """Undo ``install_langgraph_alias()`` (for tests): later imports find the real LangGraph.
    Modules that already imported ``langgraph`` keep the stepgraph objects they hold."""
    _uninstall()


def is_langgraph_alias_installed() -> bool:
    """True while the alias is active."""
    return is_installed()
