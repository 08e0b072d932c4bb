"""Reserved names LangGraph made private: the engine imports them from here.

``stepgraph.constants`` still answers them, with a ``LangGraphDeprecatedSinceV10`` warning,
so programs written against older LangGraph versions keep working.
"""

from __future__ import annotations

import sys
from typing import Final

__all__ = ["PREVIOUS"]

PREVIOUS: Final = sys.intern("__previous__")
"""Channel of an entrypoint's saved return value (``previous`` on the next run)."""
