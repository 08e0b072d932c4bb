"""A three-step chain: each node reads the state and returns an update.

Run: python examples/chain.py
"""

from typing import TypedDict

from stepgraph.graph import END, START, StateGraph


class State(TypedDict):
    text: str
    steps: int


def clean(state: State) -> dict:
    return {"text": state["text"].strip(), "steps": state.get("steps", 0) + 1}


def shout(state: State) -> dict:
    return {"text": state["text"].upper(), "steps": state["steps"] + 1}


def punctuate(state: State) -> dict:
    return {"text": state["text"] + "!", "steps": state["steps"] + 1}


builder = StateGraph(State)
builder.add_sequence([clean, shout, punctuate])
builder.add_edge(START, "clean")
builder.add_edge("punctuate", END)
graph = builder.compile()

if __name__ == "__main__":
    for update in graph.stream({"text": "  hello stepgraph  "}, stream_mode="updates"):
        print(update)
    print("final:", graph.invoke({"text": "  hello stepgraph  "}))
