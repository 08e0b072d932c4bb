"""Modules for LangGraph paths stepgraph does not have natively (the alias's second choice).

``langgraph.X.Y`` resolves to ``stepgraph.X.Y`` when that exists, else to
``stepgraph.compat.mirror.X.Y``. Each module here is a thin adapter over stepgraph's own
code for a private LangGraph module the ecosystem (langchain v1, langgraph-supervisor,
langgraph-swarm, langmem, deepagents) reaches into. Nothing else in stepgraph imports them.
"""
