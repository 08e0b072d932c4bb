"""Assistants, threads and runs as stored documents, with the API's search semantics."""

from stepgraph.server.resources.assistants import Assistants
from stepgraph.server.resources.runs import Runs
from stepgraph.server.resources.threads import Threads

__all__ = ["Assistants", "Runs", "Threads"]
