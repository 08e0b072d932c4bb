"""Tests of the ``langgraph`` drop-in alias (``stepgraph.compat``).

langchain v1 imports ``langgraph`` when ``langchain.agents`` is imported, so the alias is
installed here, at collection, before any test module imports langchain. It stays installed
for the session: nothing else in the suite imports ``langgraph``. Tests that install or
uninstall it, or need the real LangGraph, run in a subprocess.
"""

from __future__ import annotations

from stepgraph.compat import install_langgraph_alias

install_langgraph_alias()
