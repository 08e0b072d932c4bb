"""Resolving a run's checkpointer and context from the graph and the call."""

from __future__ import annotations

from dataclasses import is_dataclass
from typing import TYPE_CHECKING, Any

from stepgraph.errors import StepgraphError

if TYPE_CHECKING:
    from stepgraph.engine.tasks import Task
    from stepgraph.pregel.main import Pregel


def resolve_checkpointer(graph: Pregel, config: Any, parent: Task | None) -> Any:
    """The saver this run uses: the graph's own, or the parent run's for a subgraph."""
    saver = graph.checkpointer
    if saver is False:
        return None
    if saver is None or saver is True:
        if parent is None:
            if saver is True:
                raise RuntimeError("checkpointer=True cannot be used for root graphs.")
            return None
        saver = parent.run.checkpointer
    if saver is None:
        return None
    configurable = config.get("configurable") or {}
    if "thread_id" not in configurable:
        raise StepgraphError(
            "Checkpointer requires one or more of the following 'configurable' keys: "
            "thread_id, checkpoint_ns, checkpoint_id",
            code="SG310",
            hint='pass config={"configurable": {"thread_id": "..."}}',
        )
    return saver


def resolve_context(graph: Pregel, context: Any) -> Any:
    """Coerce a dict context into a dataclass/pydantic ``context_schema``."""
    schema = graph.context_schema
    if context is None or schema is None or not isinstance(context, dict):
        return context
    if is_dataclass(schema) or hasattr(schema, "model_validate"):
        return schema(**context)
    return context
