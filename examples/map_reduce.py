"""Map-reduce with ``Send``: fan out one worker per item, reduce with a list reducer.

Run: python examples/map_reduce.py
"""

import operator
from typing import Annotated, TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Send


class State(TypedDict):
    words: list[str]
    lengths: Annotated[list[tuple[str, int]], operator.add]
    total: int


class WorkItem(TypedDict):
    word: str


def fan_out(state: State) -> list[Send]:
    return [Send("measure", {"word": w}) for w in state["words"]]


def measure(item: WorkItem) -> dict:
    return {"lengths": [(item["word"], len(item["word"]))]}


def total(state: State) -> dict:
    return {"total": sum(n for _, n in state["lengths"])}


builder = StateGraph(State)
builder.add_node("measure", measure)
builder.add_node("total", total)
builder.add_conditional_edges(START, fan_out, ["measure"])
builder.add_edge("measure", "total")
builder.add_edge("total", END)
graph = builder.compile()

if __name__ == "__main__":
    words = ["map", "reduce", "with", "send"]
    for step in graph.stream({"words": words}, stream_mode="updates"):
        print(step)
    result = graph.invoke({"words": words})
    print("lengths:", result["lengths"], "total:", result["total"])
