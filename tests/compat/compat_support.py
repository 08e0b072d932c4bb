"""What the ``tests/compat`` tests need to know about the environment."""

from __future__ import annotations

import importlib.util

HAVE_LANGCHAIN = importlib.util.find_spec("langchain") is not None
SKIP_REASON = "langchain v1 is not installed (pip install 'stepgraph[ecosystem]')"
