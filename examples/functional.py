"""The functional API: an ``@entrypoint`` workflow calling ``@task``s, with a human review.

Tasks run in parallel and their results are stored, so resuming after ``interrupt()`` does
not compute them again.

Run: python examples/functional.py
"""

from __future__ import annotations

from stepgraph.checkpoint.memory import InMemorySaver
from stepgraph.func import entrypoint, task
from stepgraph.types import Command, interrupt

calls: list[str] = []


@task
def outline(topic: str) -> list[str]:
    calls.append("outline")
    return [f"{topic}: intro", f"{topic}: details", f"{topic}: summary"]


@task
def expand(section: str) -> str:
    calls.append("expand")
    return section.upper()


@entrypoint(checkpointer=InMemorySaver())
def write_article(topic: str) -> dict:
    sections = outline(topic).result()
    texts = [f.result() for f in [expand(s) for s in sections]]
    verdict = interrupt({"review": texts})
    return {"article": texts, "approved": verdict == "approve"}


if __name__ == "__main__":
    config = {"configurable": {"thread_id": "article"}}
    first = write_article.invoke("graphs", config)
    print("paused for review:", first["__interrupt__"][0].value)
    print("result:", write_article.invoke(Command(resume="approve"), config))
    print("task calls:", calls)
