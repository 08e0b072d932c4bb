"""Map-reduce whose workers are subgraphs: each ``Send`` runs a two-step compiled graph.

Run: python examples/map_reduce_subgraphs.py
"""

from __future__ import annotations

import operator
from typing import Annotated, TypedDict

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Send


class Doc(TypedDict):
    text: str
    words: int
    summaries: Annotated[list[str], operator.add]


def count(doc: Doc) -> dict:
    return {"words": len(doc["text"].split())}


def summarize(doc: Doc) -> dict:
    return {"summaries": [f"{doc['text'].split()[0]}... ({doc['words']} words)"]}


worker = StateGraph(Doc)
worker.add_sequence([count, summarize])
worker.add_edge(START, "count")
worker = worker.compile()


class State(TypedDict):
    docs: list[str]
    summaries: Annotated[list[str], operator.add]


def fan_out(state: State) -> list[Send]:
    return [Send("worker", {"text": t, "summaries": []}) for t in state["docs"]]


builder = StateGraph(State)
builder.add_node("worker", worker)
builder.add_conditional_edges(START, fan_out, ["worker"])
builder.add_edge("worker", END)
graph = builder.compile(checkpointer=InMemorySaver())

if __name__ == "__main__":
    config = {"configurable": {"thread_id": "docs"}}
    docs = ["stepgraph runs graphs in supersteps", "each worker is a subgraph", "results are reduced"]
    for ns, chunk in graph.stream({"docs": docs}, config, stream_mode="updates", subgraphs=True):
        print(ns[0].split(":")[0] if ns else "root", chunk)
    print(graph.get_state(config).values["summaries"])
