"""The config and ``Runtime`` a task hands to user code (built lazily, on first access)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from stepgraph.engine.fresh import read_with_writes
from stepgraph.runtime import ExecutionInfo, Runtime, _noop_writer, server_info_from
from stepgraph.stream.events_v2 import with_events_handler
from stepgraph.stream.messages import task_callbacks
from stepgraph.stream.tools import task_callbacks as tool_callbacks

if TYPE_CHECKING:
    from stepgraph.config import RunnableConfig
    from stepgraph.engine.loop import RunLoop
    from stepgraph.engine.tasks import Task


DURABILITY_KEY = "__pregel_durability"
"""Where a task's config carries its run's durability (subgraphs run with their parent's)."""
RUNTIME_KEY = "__pregel_runtime"
"""The task's ``Runtime`` in its config (LangGraph's key: code outside nodes reads it there; a
root run given a config with one uses it as its parent runtime)."""
READ_KEY = "__pregel_read"
"""``read(select, fresh=False)``: the state's ``select`` keys (``fresh``: with the task's own
writes so far), as LangGraph's task configs offer it."""
SEND_KEY = "__pregel_send"
"""``send(writes)``: queue ``(channel, value)`` writes as the task's own (LangGraph's key)."""


def build_task_config(loop: RunLoop, task: Task) -> RunnableConfig:
    base = loop.config
    node = task.node
    metadata = {
        **(base.get("metadata") or {}),
        **node.metadata,
        "langgraph_step": task.step,
        "langgraph_node": task.name,
        "langgraph_triggers": task.triggers,
        "langgraph_path": task.path,
        "langgraph_checkpoint_ns": task.ns,
    }
    thread_id = loop.configurable.get("thread_id")
    if thread_id is not None:
        metadata.setdefault("thread_id", thread_id)
    if loop.checkpoint_ns:
        metadata["checkpoint_ns"] = loop.checkpoint_ns
    configurable = {**loop.configurable, "checkpoint_ns": task.ns, DURABILITY_KEY: loop.durability,
                    RUNTIME_KEY: task.runtime, READ_KEY: _reader(task), SEND_KEY: task.writes.extend}
    configurable.pop("checkpoint_id", None)
    config: dict[str, Any] = {**base, "metadata": metadata, "configurable": configurable}
    if node.tags:
        config["tags"] = [*(base.get("tags") or ()), *node.tags]
    config["run_name"] = task.name
    callbacks = base.get("callbacks")
    if loop.tracer is not None:  # the task's runs nest under the graph's run
        callbacks = config["callbacks"] = loop.tracer.task_callbacks(task.step)
    if "messages" in loop.sink.modes:  # chat-model tokens reach the stream through callbacks

        if (callbacks := task_callbacks(loop, callbacks)) is not None:
            config["callbacks"] = callbacks
    if "tools" in loop.sink.modes:  # tool calls reach the stream through callbacks
        if (callbacks := tool_callbacks(loop, config.get("callbacks"))) is not None:
            config["callbacks"] = callbacks
    if "events" in loop.sink.modes:  # astream_events: chat-model calls as stream events

        config["callbacks"] = with_events_handler(loop, config.get("callbacks"))
    return config  # type: ignore[return-value]


def _reader(task: Task) -> Any:
    def read(select: str | list[str], fresh: bool = False) -> Any:
        loop = task.run
        return read_with_writes(loop, (task,), select, as_step_end=True) if fresh else loop.read(select)

    return read


def build_task_runtime(loop: RunLoop, task: Task) -> Runtime[Any]:
    writer = task.write_custom if "custom" in loop.sink.modes else _noop_writer
    info = ExecutionInfo(
        checkpoint_id=loop.checkpoint_id or None,
        checkpoint_ns=task.ns,
        task_id=task.id,
        thread_id=loop.configurable.get("thread_id"),
        run_id=str(loop.config.get("run_id")) if loop.config.get("run_id") else None,
        node_attempt=task.attempt,
        node_first_attempt_time=task.first_attempt_time,
    )
    parent = loop.parent_runtime
    return Runtime(
        context=loop.context if loop.context is not None else (parent.context if parent else None),
        store=loop.store if loop.store is not None else (parent.store if parent else None),
        stream_writer=writer,
        previous=loop.previous_value(),
        execution_info=info,
        server_info=server_info_from(loop.configurable),
        control=loop.run_control(),
    )
