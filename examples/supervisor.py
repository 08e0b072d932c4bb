"""A supervisor with two child agents that hand work to each other with ``Command.PARENT``.

Each agent is its own compiled graph (a subgraph). When an agent is done it returns
``Command(graph=Command.PARENT, goto=..., update=...)`` to route the parent graph: the
researcher hands off to the writer, the writer back to the supervisor, which finishes.

Run: python examples/supervisor.py
"""

from __future__ import annotations

import operator
from typing import Annotated, Literal, TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Command


class State(TypedDict):
    task: str
    notes: Annotated[list[str], operator.add]
    draft: str


def research(state: State) -> Command:
    facts = [f"fact about {state['task']} #{i}" for i in (1, 2)]
    return Command(graph=Command.PARENT, goto="writer", update={"notes": facts})


def write(state: State) -> Command:
    draft = f"{state['task']}: " + "; ".join(state["notes"])
    return Command(graph=Command.PARENT, goto="supervisor", update={"draft": draft})


def agent(name: str, step) -> object:
    g = StateGraph(State)
    g.add_node(name, step)
    g.add_edge(START, name)
    return g.compile(name=name)


def supervisor(state: State) -> Command[Literal["researcher", "__end__"]]:
    if not state.get("draft"):
        return Command(goto="researcher")
    return Command(goto=END)


builder = StateGraph(State)
builder.add_node("supervisor", supervisor)
builder.add_node("researcher", agent("research", research))
builder.add_node("writer", agent("write", write))
builder.add_edge(START, "supervisor")
graph = builder.compile()

if __name__ == "__main__":
    for ns, update in graph.stream({"task": "stepgraph", "notes": []}, subgraphs=True):
        print(ns or "root", update)
    print("draft:", graph.invoke({"task": "stepgraph", "notes": []})["draft"])
