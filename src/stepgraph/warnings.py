"""Deprecation warnings, one class per LangGraph version that deprecated something.

Each class is a ``DeprecationWarning`` that knows when the feature was deprecated and
when it is expected to go, so ``warnings.filterwarnings`` can select one generation::

    warnings.simplefilter("error", LangGraphDeprecatedSinceV10)
"""

from __future__ import annotations

import warnings as _warnings

__all__ = [
    "LangGraphDeprecatedSinceV05",
    "LangGraphDeprecatedSinceV10",
    "LangGraphDeprecatedSinceV11",
    "LangGraphDeprecationWarning",
    "deprecated_since",
]


class LangGraphDeprecationWarning(DeprecationWarning):
    """A deprecated LangGraph API was used.

    Attributes:
        message: what was deprecated and what to use instead (no trailing period).
        since: ``(major, minor)`` of the version that deprecated it.
        expected_removal: ``(major, minor)`` of the version expected to remove it.
    """

    message: str
    since: tuple[int, int]
    expected_removal: tuple[int, int]

    def __init__(
        self,
        message: str,
        *args: object,
        since: tuple[int, int],
        expected_removal: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message, *args)
        self.message = message.rstrip(".")
        self.since = since
        self.expected_removal = expected_removal or (since[0] + 1, 0)

    def __str__(self) -> str:
        major, minor = self.since
        gone_major, gone_minor = self.expected_removal
        return (
            f"{self.message}. Deprecated in LangGraph V{major}.{minor} "
            f"to be removed in V{gone_major}.{gone_minor}."
        )


class LangGraphDeprecatedSinceV05(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 0.5 (removal expected in 2.0)."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(0, 5), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV10(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.0 (removal expected in 2.0)."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 0), expected_removal=(2, 0))


class LangGraphDeprecatedSinceV11(LangGraphDeprecationWarning):
    """Deprecated since LangGraph 1.1 (removal expected in 3.0)."""

    def __init__(self, message: str, *args: object) -> None:
        super().__init__(message, *args, since=(1, 1), expected_removal=(3, 0))


def deprecated_since(
    category: type[LangGraphDeprecationWarning], message: str, *, stacklevel: int = 2
) -> None:
    """Warn that the caller's caller used something deprecated (``stacklevel`` counts from
    the function calling this one, as ``warnings.warn`` does)."""
    _warnings.warn(message, category, stacklevel=stacklevel + 1)
