"""More benchmark shapes (issue 13): wide states of shared references, durability modes,
async drivers and per-step cost against the number of idle channels.

Registered into ``workloads``' registry by ``register(module)`` (``workloads.py`` runs as a
script in each worker, so this module never imports it by name). Like ``workloads.py`` it
depends only on the standard library and the runtime measured (pydantic comes with both).
"""

from __future__ import annotations

import asyncio
import dataclasses
import operator
from types import ModuleType
from typing import Annotated, Any, TypedDict

# -- wide states whose list holds many references to one small nested dict -------------------
SHARED_ROUNDS = 7
SHARED_PER_NODE = 29  # 6 nodes x 7 rounds x 29 = 1218 references at the end
SHARED_PAYLOAD = {"kind": "note", "tags": ["a", "b"], "meta": {"source": "bench", "score": 0.5}}


class SharedDict(TypedDict):
    inbox: Annotated[list, operator.add]
    round: int
    a: int
    b: int
    c: int
    d: int
    e: int
    f: int
    title: str
    owner: str
    status: str
    score: float
    flags: list
    config: dict
    notes: str


@dataclasses.dataclass
class SharedData:
    inbox: Annotated[list, operator.add] = dataclasses.field(default_factory=list)
    round: int = 0
    a: int = 0
    b: int = 0
    c: int = 0
    d: int = 0
    e: int = 0
    f: int = 0
    title: str = ""
    owner: str = ""
    status: str = ""
    score: float = 0.0
    flags: list = dataclasses.field(default_factory=list)
    config: dict = dataclasses.field(default_factory=dict)
    notes: str = ""


def _pydantic_state() -> type:
    from pydantic import BaseModel, Field

    class SharedModel(BaseModel):
        inbox: Annotated[list, operator.add] = Field(default_factory=list)
        round: int = 0
        a: int = 0
        b: int = 0
        c: int = 0
        d: int = 0
        e: int = 0
        f: int = 0
        title: str = ""
        owner: str = ""
        status: str = ""
        score: float = 0.0
        flags: list = Field(default_factory=list)
        config: dict = Field(default_factory=dict)
        notes: str = ""

    return SharedModel


def _read(state: Any, key: str) -> Any:
    return state[key] if isinstance(state, dict) else getattr(state, key)


def build_shared(W: ModuleType, pkg: str, kind: str) -> Any:
    """a -> (b, c) -> d -> e -> f -> a ... for ``SHARED_ROUNDS`` rounds; every node bumps its
    counter and appends ``SHARED_PER_NODE`` references to the same payload dict."""
    StateGraph, START, END = W.graph_api(pkg)
    schema = {"dict": SharedDict, "dataclass": SharedData, "pydantic": None}[kind] or _pydantic_state()

    def make(name: str) -> Any:
        def node(state: Any) -> dict[str, Any]:
            upd: dict[str, Any] = {name: _read(state, name) + 1,
                                   "inbox": [SHARED_PAYLOAD] * SHARED_PER_NODE}
            if name == "f":
                upd["round"] = _read(state, "round") + 1
            return upd

        return node

    b = StateGraph(schema)
    for name in "abcdef":
        b.add_node(name, make(name))
    b.add_edge(START, "a")
    b.add_edge("a", "b")
    b.add_edge("a", "c")
    b.add_edge(["b", "c"], "d")
    b.add_edge("d", "e")
    b.add_edge("e", "f")

    def route(state: Any) -> str:
        return "a" if _read(state, "round") < SHARED_ROUNDS else END

    b.add_conditional_edges("f", route, ["a", END])
    return b


def shared_input() -> dict[str, Any]:
    return {"inbox": [], "round": 0, "a": 0, "b": 0, "c": 0, "d": 0, "e": 0, "f": 0, "title": "t",
            "owner": "o", "status": "s", "score": 0.0, "flags": [1], "config": {"x": 1}, "notes": "n"}


def _shared_digest(result: Any) -> Any:
    return {"inbox": len(_read(result, "inbox")), "round": _read(result, "round"),
            "d": _read(result, "d")}


# -- idle channels: per-step cost with 1000 vs 2000 nodes that never run ----------------------
IDLE_STEPS = 200


def build_idle(W: ModuleType, pkg: str, idle: int) -> Any:
    """One node looping ``IDLE_STEPS`` times; ``idle`` other nodes a router could pick, never does."""
    StateGraph, START, END = W.graph_api(pkg)

    def step(s: Any) -> dict[str, Any]:
        return {"i": s["i"] + 1}

    def never(s: Any) -> dict[str, Any]:
        raise AssertionError("an idle node ran")

    names = [f"idle{k}" for k in range(idle)]
    b = StateGraph(W.LoopState)
    b.add_node("step", step)
    for name in names:
        b.add_node(name, never)
        b.add_edge(name, END)
    b.add_edge(START, "step")

    def route(s: Any) -> str:
        return "step" if s["i"] < s["n"] else END

    b.add_conditional_edges("step", route, ["step", END, *names])
    return b


def _per_step_us(W: ModuleType, pkg: str, builder: Any, samples: int = 5) -> float:
    """CPU microseconds per step, without the per-run costs: the median CPU time of runs of
    ``IDLE_STEPS`` steps minus that of runs of a quarter as many, over the steps between."""
    import gc
    import statistics
    import time

    def cpu(steps: int) -> float:
        times = []
        for k in range(samples):
            graph = builder.compile(checkpointer=W.memory_saver(pkg))
            cfg = {"configurable": {"thread_id": f"p{steps}-{k}"}, "recursion_limit": steps * 2 + 10}
            gc.collect()
            c0 = time.process_time()
            graph.invoke({"i": 0, "n": steps}, cfg)
            times.append(time.process_time() - c0)
        return statistics.median(times)

    short = IDLE_STEPS // 4
    cpu(short)  # warm-up
    return round((cpu(IDLE_STEPS) - cpu(short)) / (IDLE_STEPS - short) * 1e6, 1)


def _invoke_case(W: ModuleType, pkg: str, builder: Any, inp: Any, *, saver: str | None,
                 limit: int, durability: str | None = None, use_async: bool = False,
                 digest: Any = None) -> Any:
    """A case compiling ``builder`` (with a fresh saver and thread per repetition)."""
    if saver is None:
        graph = builder.compile()
        holder: dict[str, Any] = {"graph": graph, "cfg": {"recursion_limit": limit}}
        before = None
        fac = None
    else:
        holder = {"n": 0}
        fac = W.SqliteFactory(pkg) if saver == "sqlite" else None

        def before() -> None:
            cp = fac.new() if fac is not None else W.memory_saver(pkg)
            holder["graph"] = builder.compile(checkpointer=cp)
            holder["n"] += 1
            holder["cfg"] = {"configurable": {"thread_id": f"t{holder['n']}"}, "recursion_limit": limit}

    kwargs = {"durability": durability} if durability else {}

    def run() -> Any:
        if use_async:
            return asyncio.run(holder["graph"].ainvoke(inp, holder["cfg"], **kwargs))
        return holder["graph"].invoke(inp, holder["cfg"], **kwargs)

    return W.Case(run=run, before=before, digest=digest,
                  cleanup=fac.cleanup if fac is not None else None)


def register(W: ModuleType) -> None:
    """Add this module's workloads to ``W.WORKLOADS``."""
    workload = W.workload

    for kind in ("dict", "dataclass", "pydantic"):
        for saver in (None, "memory", "sqlite"):
            name = f"shared_{kind}_1200" if saver is None else f"cp_{saver}_shared_{kind}_1200"

            def factory(pkg: str, quick: bool, kind: str = kind, saver: str | None = saver) -> Any:
                return _invoke_case(W, pkg, build_shared(W, pkg, kind), shared_input(), saver=saver,
                                    limit=1000, digest=_shared_digest)

            workload(name, "core" if saver is None else "checkpointed",
                     f"15-key {kind} state, diamond of 6 nodes x {SHARED_ROUNDS} loops, a list growing "
                     f"to 1218 references to one nested dict" + (f", {saver} saver" if saver else ""))(factory)

    for durability in ("sync", "exit"):
        def chain(pkg: str, quick: bool, durability: str = durability) -> Any:
            return _invoke_case(W, pkg, W.build_chain(pkg, W.CHAIN_N), {"i": 0, "n": W.CHAIN_N},
                                saver="memory", limit=W.CHAIN_N * 2 + 10, durability=durability)

        workload(f"cp_memory_chain_1000_{durability}", "checkpointed",
                 f"1000-node chain with InMemorySaver, durability={durability!r}")(chain)

        def agent(pkg: str, quick: bool, durability: str = durability) -> Any:
            return _invoke_case(W, pkg, W.build_agent(pkg, messages_state=True), W.agent_input(100),
                                saver="sqlite", limit=1000, durability=durability)

        workload(f"cp_sqlite_agent_100_{durability}", "checkpointed",
                 f"fake agent, 100 tool turns, MessagesState, SqliteSaver, durability={durability!r}")(agent)

    def async_chain_exit(pkg: str, quick: bool) -> Any:
        return _invoke_case(W, pkg, W.build_chain(pkg, W.CHAIN_N), {"i": 0, "n": W.CHAIN_N},
                            saver="memory", limit=W.CHAIN_N * 2 + 10, durability="exit",
                            use_async=True)

    workload("cp_memory_chain_1000_exit_async", "checkpointed",
             "ainvoke the 1000-node chain with InMemorySaver, durability='exit'")(async_chain_exit)

    def async_shared(pkg: str, quick: bool) -> Any:
        return _invoke_case(W, pkg, build_shared(W, pkg, "dict"), shared_input(), saver="memory",
                            limit=1000, digest=_shared_digest, use_async=True)

    workload("cp_memory_shared_dict_1200_async", "checkpointed",
             "ainvoke the 15-key dict state of 1218 shared references, InMemorySaver")(async_shared)

    def async_chain(pkg: str, quick: bool) -> Any:
        return _invoke_case(W, pkg, W.build_chain(pkg, W.CHAIN_N), {"i": 0, "n": W.CHAIN_N},
                            saver=None, limit=W.CHAIN_N * 2 + 10, use_async=True)

    workload("async_chain_1000", "core", "ainvoke a chain of 1000 distinct nodes")(async_chain)

    def async_agent(pkg: str, quick: bool) -> Any:
        return _invoke_case(W, pkg, W.build_agent(pkg, messages_state=True), W.agent_input(100),
                            saver=None, limit=1000, use_async=True)

    workload("async_agent_100_messages", "core", "ainvoke the fake agent, 100 tool turns")(async_agent)

    def async_cp_agent(pkg: str, quick: bool) -> Any:
        return _invoke_case(W, pkg, W.build_agent(pkg, messages_state=True), W.agent_input(100),
                            saver="memory", limit=1000, use_async=True)

    workload("cp_memory_agent_100_async", "checkpointed",
             "ainvoke the fake agent, 100 tool turns, InMemorySaver")(async_cp_agent)

    for idle in (1000, 2000):
        def idle_case(pkg: str, quick: bool, idle: int = idle) -> Any:
            builder = build_idle(W, pkg, idle)
            case = _invoke_case(W, pkg, builder, {"i": 0, "n": IDLE_STEPS},
                                saver="memory", limit=IDLE_STEPS * 2 + 10)
            case.extra = lambda: {"per_step_us": _per_step_us(W, pkg, builder)}
            return case

        workload(f"cp_memory_idle_{idle}_loop_{IDLE_STEPS}", "checkpointed",
                 f"{IDLE_STEPS}-step loop beside {idle} idle nodes, InMemorySaver "
                 "(per-step cost must not grow with idle channels)", max_repeat=20)(idle_case)
