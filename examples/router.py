"""A router: a conditional edge picks the next node from the state.

Run: python examples/router.py
"""

from typing import Literal, TypedDict

from stepgraph.graph import END, START, StateGraph


class State(TypedDict):
    question: str
    route: str
    answer: str


def classify(state: State) -> dict:
    q = state["question"].lower()
    return {"route": "math" if any(c.isdigit() for c in q) else "chat"}


def pick(state: State) -> Literal["math", "chat"]:
    return "math" if state["route"] == "math" else "chat"


def math(state: State) -> dict:
    a, _, b = state["question"].partition("+")
    return {"answer": str(int(a) + int(b))}


def chat(state: State) -> dict:
    return {"answer": f"You said: {state['question']}"}


builder = StateGraph(State)
builder.add_node("classify", classify)
builder.add_node("math", math)
builder.add_node("chat", chat)
builder.add_edge(START, "classify")
builder.add_conditional_edges("classify", pick)
builder.add_edge("math", END)
builder.add_edge("chat", END)
graph = builder.compile()

if __name__ == "__main__":
    for question in ["2 + 3", "hello there"]:
        print(question, "->", graph.invoke({"question": question})["answer"])
