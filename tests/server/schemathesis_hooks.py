"""Schemathesis hooks of the fuzz run (``test_server_fuzz``): keep runs short.

A generated ``after_seconds`` may delay a run by up to a year, and ``wait``/``stream``
follow a run until it ends (with heartbeats, so no read timeout ever fires); the fuzz run
caps every delay at 10 ms. Nothing else about the generated requests is changed.
"""

from __future__ import annotations

from typing import Any

import schemathesis


def _cap(body: Any) -> None:
    if isinstance(body, list):
        for item in body:
            _cap(item)
    elif isinstance(body, dict):
        delay = body.get("after_seconds")
        if isinstance(delay, (int, float)) and not isinstance(delay, bool) and delay > 0.01:
            body["after_seconds"] = 0.01


@schemathesis.hook
def before_call(context: Any, case: Any, kwargs: Any) -> None:
    """Cap run delays in the request about to be sent."""
    _cap(case.body)
    body = kwargs.get("json")
    if body is not None:
        _cap(body)
