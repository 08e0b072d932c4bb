"""An agent loop: a (fake, deterministic) model calls tools until it can answer.

The model is a plain function, so this runs offline; swap in any LLM client. Messages
are plain dicts. With ``--db PATH`` the run is checkpointed to SQLite (the embedded
default) and can be resumed or inspected later.

Run: python examples/agent_loop.py "what is 6 times 7 plus 1?"
"""

from __future__ import annotations

import argparse
import json
from typing import Annotated, Any, TypedDict

from stepgraph.graph import END, START, StateGraph, add_messages


class State(TypedDict):
    messages: Annotated[list[dict[str, Any]], add_messages(format="dict")]


TOOLS = {
    "multiply": lambda a, b: a * b,
    "add": lambda a, b: a + b,
}


def fake_model(messages: list[dict[str, Any]]) -> dict[str, Any]:
    """Plans 'multiply 6 7', then 'add <result> 1', then answers."""
    tool_results = [m for m in messages if m["role"] == "tool"]
    if not tool_results:
        call = {"id": "call-1", "name": "multiply", "args": {"a": 6, "b": 7}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    if len(tool_results) == 1:
        last = json.loads(tool_results[-1]["content"])
        call = {"id": "call-2", "name": "add", "args": {"a": last, "b": 1}}
        return {"role": "assistant", "content": "", "tool_calls": [call]}
    return {"role": "assistant", "content": f"The answer is {tool_results[-1]['content']}."}


def agent(state: State) -> dict:
    return {"messages": [fake_model(state["messages"])]}


def tools(state: State) -> dict:
    calls = state["messages"][-1].get("tool_calls", [])
    results = [
        {"role": "tool", "tool_call_id": c["id"], "content": json.dumps(TOOLS[c["name"]](**c["args"]))}
        for c in calls
    ]
    return {"messages": results}


def should_continue(state: State) -> str:
    return "tools" if state["messages"][-1].get("tool_calls") else END


builder = StateGraph(State)
builder.add_node("agent", agent)
builder.add_node("tools", tools)
builder.add_edge(START, "agent")
builder.add_conditional_edges("agent", should_continue, ["tools", END])
builder.add_edge("tools", "agent")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("question", nargs="?", default="what is 6 times 7 plus 1?")
    parser.add_argument("--db", default=None, help="SQLite file to checkpoint the run to")
    parser.add_argument("--thread", default="demo")
    args = parser.parse_args()
    checkpointer = None
    if args.db:
        import sqlite3

        from stepgraph.checkpoint.sqlite import SqliteSaver

        checkpointer = SqliteSaver(sqlite3.connect(args.db, check_same_thread=False))
    graph = builder.compile(checkpointer=checkpointer)
    config = {"configurable": {"thread_id": args.thread}}
    if checkpointer is not None and graph.get_state(config).values:
        args.thread = f"{args.thread}-{len(list(graph.get_state_history(config)))}"
        config = {"configurable": {"thread_id": args.thread}}
    inputs = {"messages": [{"role": "user", "content": args.question}]}
    for step in graph.stream(inputs, config, stream_mode="updates"):
        for node, update in step.items():
            for message in (update or {}).get("messages", []):
                text = message.get("content") or json.dumps(message.get("tool_calls"))
                print(f"[{node}] {message['role']}: {text}")
    if checkpointer is not None:
        state = graph.get_state(config)
        print(f"checkpointed to {args.db}: {len(state.values['messages'])} messages, "
              f"thread {args.thread!r}")


graph = builder.compile()

if __name__ == "__main__":
    main()
