"""Resume maps: a ``Command(resume={interrupt_id: value, ...})`` resuming several interrupts.

``interrupt()`` itself is ``stepgraph.types.interrupt`` (it reads the running task).
"""

from __future__ import annotations

import re
from typing import Any

_HEX32 = re.compile(r"^[0-9a-f]{32}$")


def is_resume_map(value: Any) -> bool:
    """A dict whose keys are all interrupt ids resumes several interrupts at once."""
    return isinstance(value, dict) and bool(value) and all(
        isinstance(k, str) and _HEX32.match(k) for k in value
    )
