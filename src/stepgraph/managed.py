"""Managed values: read-only state keys computed by the engine (``RemainingSteps``...)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Annotated, Any

if TYPE_CHECKING:
    from stepgraph.engine.loop import RunLoop

__all__ = ["IsLastStep", "ManagedValue", "RemainingSteps", "is_managed_value"]


class ManagedValue:
    """Base of managed values: ``get(loop)`` computes the value for the current step."""

    @staticmethod
    def get(loop: RunLoop) -> Any:  # pragma: no cover - abstract
        raise NotImplementedError


class IsLastStepManager(ManagedValue):
    @staticmethod
    def get(loop: RunLoop) -> bool:
        return loop.step == loop.stop - 1


class RemainingStepsManager(ManagedValue):
    @staticmethod
    def get(loop: RunLoop) -> int:
        return loop.stop - loop.step


IsLastStep = Annotated[bool, IsLastStepManager]
"""True in the last step before the recursion limit."""
RemainingSteps = Annotated[int, RemainingStepsManager]
"""Steps left before the recursion limit."""


def is_managed_value(value: Any) -> bool:
    return isinstance(value, type) and issubclass(value, ManagedValue)
