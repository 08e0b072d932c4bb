"""Benchmark workloads, written once against the LangGraph-style API.

Every workload takes the package name (``"stepgraph"`` or ``"langgraph"``) and
imports everything through :func:`importlib.import_module`, so the same code
runs unchanged on both runtimes.  This module must only depend on the standard
library plus whichever runtime is being measured: the LangGraph venv does not
have stepgraph installed and the stepgraph venv does not need LangGraph.

The module doubles as the per-measurement worker: ``run.py`` starts

    <interpreter> benchmarks/workloads.py --worker NAME --pkg PKG ...

in a fresh process for every (workload, package) pair.  The worker builds the
graph (untimed), runs one warm-up, then times ``repeat`` runs and writes a JSON
report (timings, a canonical digest of the result, extra metrics) to --out.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import importlib
import json
import operator
import os
import resource
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Annotated, Any, TypedDict

# --------------------------------------------------------------------------- #
# registry
# --------------------------------------------------------------------------- #


class Unsupported(Exception):
    """Raised while building a workload when the package lacks a feature."""


@dataclass
class Workload:
    name: str
    group: str  # "core" or "checkpointed"
    description: str
    factory: Callable[[str, bool], Case]
    # Upper bound on timed repetitions (run.py may ask for fewer).  Long
    # workloads set this low so the full suite stays within minutes.
    max_repeat: int = 1000
    # Run the workload only once, untimed warm-up skipped (e.g. storage size).
    no_warmup: bool = False


@dataclass
class Case:
    """A prepared workload instance.

    ``run`` is the timed part.  ``before`` (optional) runs untimed before every
    repetition, e.g. to hand out a fresh thread id or database file.  ``digest``
    turns ``run``'s return value into JSON-able data compared across packages.
    ``extra`` (optional) returns additional metrics reported next to the
    timings.  ``measure`` (optional) replaces the generic timing loop.
    """

    run: Callable[[], Any]
    before: Callable[[], None] | None = None
    digest: Callable[[Any], Any] | None = None
    extra: Callable[[], dict] | None = None
    cleanup: Callable[[], None] | None = None
    measure: Callable[[int], tuple[list[float], list[float], Any]] | None = None
    notes: dict = field(default_factory=dict)


WORKLOADS: dict[str, Workload] = {}


def workload(name: str, group: str, description: str, **kw):
    def deco(fn):
        WORKLOADS[name] = Workload(name, group, description, fn, **kw)
        return fn

    return deco


# --------------------------------------------------------------------------- #
# helpers
# --------------------------------------------------------------------------- #


def _imp(pkg: str, mod: str):
    """Import ``{pkg}.{mod}``; a missing module means the feature is absent."""
    try:
        return importlib.import_module(f"{pkg}.{mod}")
    except ModuleNotFoundError as e:
        raise Unsupported(f"{pkg}.{mod} not importable: {e}") from e


def _attr(module, name: str):
    try:
        return getattr(module, name)
    except AttributeError as e:
        raise Unsupported(f"{module.__name__}.{name} missing") from e


def graph_api(pkg: str):
    g = _imp(pkg, "graph")
    return (
        _attr(g, "StateGraph"),
        _attr(g, "START"),
        _attr(g, "END"),
    )


def send_cls(pkg: str):
    return _attr(_imp(pkg, "types"), "Send")


def memory_saver(pkg: str):
    return _attr(_imp(pkg, "checkpoint.memory"), "InMemorySaver")()


def sqlite_saver_cls(pkg: str):
    return _attr(_imp(pkg, "checkpoint.sqlite"), "SqliteSaver")


class SqliteFactory:
    """Fresh SQLite database (and saver) per repetition, in a temp dir."""

    def __init__(self, pkg: str):
        self.cls = sqlite_saver_cls(pkg)
        self.dir = tempfile.mkdtemp(prefix=f"sgbench-{pkg}-")
        self.n = 0
        self.conn: sqlite3.Connection | None = None
        self.path: str | None = None

    def new(self):
        self.close()
        self.n += 1
        self.path = os.path.join(self.dir, f"cp{self.n}.sqlite")
        self.conn = sqlite3.connect(self.path, check_same_thread=False)
        saver = self.cls(self.conn)
        setup = getattr(saver, "setup", None)
        if callable(setup):  # create tables outside the timed region
            setup()
        return saver

    def bytes_on_disk(self) -> int:
        total = 0
        for suffix in ("", "-wal", "-journal", "-shm"):
            p = (self.path or "") + suffix
            if os.path.exists(p):
                total += os.path.getsize(p)
        return total

    def close(self):
        if self.conn is not None:
            self.conn.close()
            self.conn = None

    def cleanup(self):
        self.close()
        shutil.rmtree(self.dir, ignore_errors=True)


_ROLE = {"human": "user", "ai": "assistant", "system": "system", "tool": "tool"}


def _is_message(x) -> bool:
    if isinstance(x, dict):
        return "role" in x and "content" in x
    return hasattr(x, "content") and hasattr(x, "type")


def norm_message(m) -> dict:
    """Runtime-independent view of a chat message (dict or message object)."""
    if isinstance(m, dict):
        role = m.get("role") or m.get("type")
        get = m.get
    else:
        role = m.type

        def get(k, default=None):
            return getattr(m, k, default)

    role = _ROLE.get(role, role)
    out = {"role": role, "content": get("content")}
    if get("id") is not None:
        out["id"] = get("id")
    calls = get("tool_calls") or []
    if calls:
        out["tool_calls"] = [
            {"name": c["name"], "args": c["args"], "id": c.get("id")} for c in calls
        ]
    if role == "tool":
        out["tool_call_id"] = get("tool_call_id")
    return out


def canon(x):
    """Canonical JSON-able form of a state value (messages normalised)."""
    if _is_message(x):
        return norm_message(x)
    if isinstance(x, dict):
        return {str(k): canon(v) for k, v in sorted(x.items(), key=lambda kv: str(kv[0]))}
    if isinstance(x, (list, tuple)):
        return [canon(v) for v in x]
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return repr(x)


def digest_of(x) -> str:
    return hashlib.sha256(json.dumps(canon(x), sort_keys=True).encode()).hexdigest()[:16]


def _role(m) -> str:
    r = (m.get("role") or m.get("type")) if isinstance(m, dict) else m.type
    return _ROLE.get(r, r)


def _get(m, key, default=None):
    if isinstance(m, dict):
        return m.get(key, default)
    return getattr(m, key, default)


# --------------------------------------------------------------------------- #
# graph builders (shared by plain and checkpointed workloads)
# --------------------------------------------------------------------------- #


class LoopState(TypedDict):
    i: int
    n: int


def build_loop(pkg: str):
    """One node looping on itself via a conditional edge until i == n."""
    StateGraph, START, END = graph_api(pkg)

    def step(s: LoopState):
        return {"i": s["i"] + 1}

    def route(s: LoopState):
        return "step" if s["i"] < s["n"] else END

    b = StateGraph(LoopState)
    b.add_node("step", step)
    b.add_edge(START, "step")
    b.add_conditional_edges("step", route, ["step", END])
    return b


def build_chain(pkg: str, n: int):
    """n distinct nodes n0 -> n1 -> ... -> n{n-1}."""
    StateGraph, START, END = graph_api(pkg)

    def step(s: LoopState):
        return {"i": s["i"] + 1}

    b = StateGraph(LoopState)
    names = [f"n{k}" for k in range(n)]
    for name in names:
        b.add_node(name, step)
    b.add_edge(START, names[0])
    for a, c in zip(names, names[1:], strict=False):
        b.add_edge(a, c)
    b.add_edge(names[-1], END)
    return b


class FanState(TypedDict):
    n: int
    results: Annotated[list, operator.add]
    total: int


class WorkerInput(TypedDict):
    idx: int


def build_fanout(pkg: str, worker=None):
    """plan -> n x Send('worker', {'idx': i}) -> combine."""
    StateGraph, START, END = graph_api(pkg)
    Send = send_cls(pkg)

    def plan(s: FanState):
        return {"results": []}

    def dispatch(s: FanState):
        return [Send("worker", {"idx": i}) for i in range(s["n"])]

    def work(s: WorkerInput):
        return {"results": [s["idx"] * s["idx"]]}

    def combine(s: FanState):
        return {"total": sum(s["results"])}

    b = StateGraph(FanState)
    b.add_node("plan", plan)
    b.add_node("worker", worker if worker is not None else work)
    b.add_node("combine", combine)
    b.add_edge(START, "plan")
    b.add_conditional_edges("plan", dispatch, ["worker"])
    b.add_edge("worker", "combine")
    b.add_edge("combine", END)
    return b


class SubState(TypedDict):
    idx: int
    results: Annotated[list, operator.add]


def build_fanout_subgraph(pkg: str):
    """Fan-out whose Send target is a compiled two-node subgraph."""
    StateGraph, START, END = graph_api(pkg)

    def double(s: SubState):
        return {"results": [s["idx"] * 2]}

    def inc(s: SubState):
        return {"results": [s["idx"] * 2 + 1]}

    sb = StateGraph(SubState)
    sb.add_node("double", double)
    sb.add_node("inc", inc)
    sb.add_edge(START, "double")
    sb.add_edge("double", "inc")
    sb.add_edge("inc", END)
    sub = sb.compile()  # inherits the parent's checkpointer
    return build_fanout(pkg, worker=sub)


WIDE_KEYS = 300
WIDE_NODES = 5
WIDE_KEYS_PER_NODE = 6


def wide_state_type():
    fields: dict[str, Any] = {f"k{i:03d}": int for i in range(WIDE_KEYS)}
    fields["step"] = int
    fields["rounds"] = int
    fields["log"] = Annotated[list, operator.add]
    return TypedDict("WideState", fields)


WideState = wide_state_type()


def build_wide(pkg: str):
    """300-key state; 5 nodes in a cycle, each bumping 6 keys (+ a log reducer)."""
    StateGraph, START, END = graph_api(pkg)

    def make_node(j: int):
        def node(s):
            step = s["step"]
            upd = {}
            for t in range(WIDE_KEYS_PER_NODE):
                k = f"k{(step * 37 + j * 11 + t * 53) % WIDE_KEYS:03d}"
                upd[k] = s[k] + step + t
            upd["step"] = step + 1
            upd["log"] = [j]
            return upd

        return node

    b = StateGraph(WideState)
    names = [f"w{j}" for j in range(WIDE_NODES)]
    for j, name in enumerate(names):
        b.add_node(name, make_node(j))
    b.add_edge(START, names[0])
    for a, c in zip(names, names[1:], strict=False):
        b.add_edge(a, c)

    def route(s):
        return names[0] if s["step"] < s["rounds"] * WIDE_NODES else END

    b.add_conditional_edges(names[-1], route, [names[0], END])
    return b


def wide_input(rounds: int) -> dict:
    d: dict[str, Any] = {f"k{i:03d}": i for i in range(WIDE_KEYS)}
    d.update(step=0, rounds=rounds, log=[])
    return d


class AgentState(TypedDict):
    messages: Annotated[list, operator.add]
    turns: int


def build_agent(pkg: str, messages_state: bool):
    """Fake deterministic tool-calling agent: model -> tools -> model ... -> END.

    The "model" asks for the ``add`` tool until it has seen ``turns`` tool
    results, then answers.  Messages are plain dicts; with ``messages_state``
    the graph uses ``MessagesState`` (add_messages reducer), otherwise a
    plain ``Annotated[list, operator.add]`` channel.
    """
    g = _imp(pkg, "graph")
    StateGraph, START, END = graph_api(pkg)
    if messages_state:
        MessagesState = _attr(g, "MessagesState")

        class State(MessagesState):
            turns: int

    else:
        State = AgentState

    def model(s):
        msgs = s["messages"]
        # O(1) "model": the history is 1 user message + (assistant, tool) pairs
        n_tool = (len(msgs) - 1) // 2
        assert _role(msgs[-1]) in ("tool", "user")
        if n_tool < s["turns"]:
            return {
                "messages": [
                    {
                        "role": "assistant",
                        "content": "",
                        "id": f"ai-{n_tool}",
                        "tool_calls": [
                            {"name": "add", "args": {"a": n_tool, "b": 1}, "id": f"call-{n_tool}"}
                        ],
                    }
                ]
            }
        return {
            "messages": [
                {"role": "assistant", "content": f"done after {n_tool} tools", "id": "ai-final"}
            ]
        }

    def tools(s):
        last = s["messages"][-1]
        out = []
        for call in _get(last, "tool_calls"):
            args = call["args"]
            out.append(
                {
                    "role": "tool",
                    "content": str(args["a"] + args["b"]),
                    "tool_call_id": call["id"],
                    "id": f"tool-{call['id']}",
                }
            )
        return {"messages": out}

    def route(s):
        return "tools" if _get(s["messages"][-1], "tool_calls") else END

    b = StateGraph(State)
    b.add_node("model", model)
    b.add_node("tools", tools)
    b.add_edge(START, "model")
    b.add_conditional_edges("model", route, ["tools", END])
    b.add_edge("tools", "model")
    return b


def agent_input(turns: int) -> dict:
    return {"messages": [{"role": "user", "content": "add things", "id": "user-0"}], "turns": turns}


# --------------------------------------------------------------------------- #
# checkpointer plumbing
# --------------------------------------------------------------------------- #


def checkpointed_case(pkg: str, builder, inp, kind: str, recursion_limit: int, digest=None) -> Case:
    """Compile ``builder`` with an InMemorySaver ("memory") or SqliteSaver
    ("sqlite").  Every repetition gets a fresh saver (and, for sqlite, a fresh
    database file; compile is untimed) so histories do not accumulate.
    Extra metrics: checkpoints in the thread's history (+ db bytes for sqlite)."""
    holder: dict[str, Any] = {"n": 0}
    if kind == "memory":
        memory_saver(pkg)  # probe availability

        def new_saver():
            return memory_saver(pkg)

        fac = None
    elif kind == "sqlite":
        fac = SqliteFactory(pkg)
        new_saver = fac.new
    else:  # pragma: no cover
        raise ValueError(kind)

    def before():
        holder["graph"] = builder.compile(checkpointer=new_saver())
        holder["n"] += 1
        holder["cfg"] = {
            "configurable": {"thread_id": f"t{holder['n']}"},
            "recursion_limit": recursion_limit,
        }

    def run():
        return holder["graph"].invoke(inp, holder["cfg"])

    def extra():
        out: dict[str, Any] = {}
        try:
            hist = holder["graph"].get_state_history(
                {"configurable": holder["cfg"]["configurable"]}
            )
            out["checkpoints"] = sum(1 for _ in hist)
        except Exception as e:  # noqa: BLE001 - informational only
            out["checkpoints"] = f"error: {type(e).__name__}: {e}"[:200]
        if fac is not None:
            out["db_bytes"] = fac.bytes_on_disk()
        return out

    return Case(
        run=run,
        before=before,
        extra=extra,
        cleanup=fac.cleanup if fac is not None else None,
        digest=digest,
    )


# --------------------------------------------------------------------------- #
# core workloads
# --------------------------------------------------------------------------- #

LOOP_N = 1000
CHAIN_N = 1000


@workload("loop_1000", "core", "one node looping 1000 times via a conditional edge")
def wl_loop(pkg, quick):
    g = build_loop(pkg).compile()
    cfg = {"recursion_limit": LOOP_N * 2 + 10}
    return Case(run=lambda: g.invoke({"i": 0, "n": LOOP_N}, cfg))


@workload("chain_1000", "core", "invoke a chain of 1000 distinct nodes (compiled once)")
def wl_chain(pkg, quick):
    g = build_chain(pkg, CHAIN_N).compile()
    cfg = {"recursion_limit": CHAIN_N * 2 + 10}
    return Case(run=lambda: g.invoke({"i": 0, "n": CHAIN_N}, cfg))


@workload(
    "chain_1000_build", "core", "build + compile the 1000-node chain (no invoke)", max_repeat=15
)
def wl_chain_build(pkg, quick):
    graph_api(pkg)

    def run():
        build_chain(pkg, CHAIN_N).compile()
        return CHAIN_N

    return Case(run=run)


def _fan(n):
    def factory(pkg, quick):
        g = build_fanout(pkg).compile()
        return Case(run=lambda: g.invoke({"n": n, "results": [], "total": 0}))

    return factory


for _n in (10, 100, 1000):
    workload(
        f"fanout_send_{_n}",
        "core",
        f"fan out to {_n} Send workers, results combined by an operator.add reducer",
    )(_fan(_n))


WIDE_ROUNDS = 10  # 5 nodes x 10 rounds = 50 steps


@workload(
    "wide_state_300",
    "core",
    f"{WIDE_KEYS}-key state, {WIDE_NODES} nodes x {WIDE_ROUNDS} rounds = "
    f"{WIDE_NODES * WIDE_ROUNDS} steps, each updating {WIDE_KEYS_PER_NODE} keys",
)
def wl_wide(pkg, quick):
    g = build_wide(pkg).compile()
    inp = wide_input(WIDE_ROUNDS)
    return Case(run=lambda: g.invoke(inp, {"recursion_limit": 1000}))


AGENT_TURNS = 100


@workload(
    "agent_100_dict",
    "core",
    f"fake tool-calling agent, {AGENT_TURNS} tool turns, dict messages + operator.add",
)
def wl_agent_dict(pkg, quick):
    g = build_agent(pkg, messages_state=False).compile()
    inp = agent_input(AGENT_TURNS)
    return Case(run=lambda: g.invoke(inp, {"recursion_limit": 1000}))


@workload(
    "agent_100_messages",
    "core",
    f"fake tool-calling agent, {AGENT_TURNS} tool turns, MessagesState/add_messages",
)
def wl_agent_msgs(pkg, quick):
    g = build_agent(pkg, messages_state=True).compile()
    inp = agent_input(AGENT_TURNS)
    return Case(run=lambda: g.invoke(inp, {"recursion_limit": 1000}))


@workload(
    "import_graph",
    "core",
    "fresh-process `import {pkg}.graph` minus bare interpreter start (median)",
    max_repeat=15,
)
def wl_import(pkg, quick):
    graph_api(pkg)  # probe in this process first
    # PYTHONDONTWRITEBYTECODE is dropped too: an installed package has its bytecode cached
    # (pip compiles it, LangGraph's venv has it), so the warm-up run below writes stepgraph's
    # __pycache__ for an editable install as well, and the timed runs compare like with like.
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONDONTWRITEBYTECODE")}
    cwd = tempfile.gettempdir()

    def once(code):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True, env=env, cwd=cwd)
        t1 = time.perf_counter()
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime)
        return t1 - t0, cpu

    def measure(repeat):
        once("pass"), once(f"import {pkg}.graph")  # warm the OS file cache
        walls, cpus, bw, bc = [], [], [], []
        for _ in range(repeat):
            w, c = once("pass")
            bw.append(w), bc.append(c)
            w, c = once(f"import {pkg}.graph")
            walls.append(w), cpus.append(c)
        base_w, base_c = statistics.median(bw), statistics.median(bc)
        return (
            [w - base_w for w in walls],
            [c - base_c for c in cpus],
            {"bare_python_ms": round(base_w * 1000, 1)},
        )

    return Case(run=lambda: None, measure=measure, digest=lambda _: None)


# --------------------------------------------------------------------------- #
# checkpointed workloads (prepared for the persistence issue)
# --------------------------------------------------------------------------- #

CP_LOOP_N = 1000
CP_FAN_N = 100
CP_AGENT_TURNS = 100


def _cp_loop(kind):
    def factory(pkg, quick):
        return checkpointed_case(
            pkg, build_loop(pkg), {"i": 0, "n": CP_LOOP_N}, kind, CP_LOOP_N * 2 + 10
        )

    return factory


def _cp_fan(kind):
    def factory(pkg, quick):
        return checkpointed_case(
            pkg, build_fanout(pkg), {"n": CP_FAN_N, "results": [], "total": 0}, kind, 100
        )

    return factory


def _cp_agent(kind):
    def factory(pkg, quick):
        return checkpointed_case(
            pkg, build_agent(pkg, messages_state=True), agent_input(CP_AGENT_TURNS), kind, 1000
        )

    return factory


for _kind, _label in (("memory", "InMemorySaver"), ("sqlite", "SqliteSaver")):
    workload(
        f"cp_{_kind}_loop_{CP_LOOP_N}",
        "checkpointed",
        f"{CP_LOOP_N}-step conditional loop with {_label}",
    )(_cp_loop(_kind))
    workload(
        f"cp_{_kind}_fanout_send_{CP_FAN_N}",
        "checkpointed",
        f"fan out to {CP_FAN_N} Send workers with {_label}",
    )(_cp_fan(_kind))
    workload(
        f"cp_{_kind}_agent_{CP_AGENT_TURNS}_messages",
        "checkpointed",
        f"fake agent, {CP_AGENT_TURNS} tool turns, MessagesState, with {_label}",
    )(_cp_agent(_kind))


@workload(
    "cp_memory_fanout_subgraph_100",
    "checkpointed",
    "fan out 100 Sends to a compiled 2-node subgraph, parent has InMemorySaver",
)
def wl_cp_subgraph(pkg, quick):
    return checkpointed_case(
        pkg, build_fanout_subgraph(pkg), {"n": 100, "results": [], "total": 0}, "memory", 100
    )


CHAT_TURNS = 500


@workload(
    "cp_sqlite_chat_500_storage",
    "checkpointed",
    f"{CHAT_TURNS}-turn chat (MessagesState, one invoke per turn appending a user + "
    "assistant message), SqliteSaver; reports bytes on disk vs final message bytes",
    max_repeat=1,
    no_warmup=True,
)
def wl_chat_storage(pkg, quick):
    StateGraph, START, END = graph_api(pkg)
    MessagesState = _attr(_imp(pkg, "graph"), "MessagesState")
    turns = 100 if quick else CHAT_TURNS

    def assistant(s):
        last = s["messages"][-1]
        n = len(s["messages"])
        return {
            "messages": [
                {
                    "role": "assistant",
                    "id": f"a{n}",
                    "content": f"You said: {_get(last, 'content')}. "
                    "Here is a reasonably sized, deterministic reply.",
                }
            ]
        }

    b = StateGraph(MessagesState)
    b.add_node("assistant", assistant)
    b.add_edge(START, "assistant")
    b.add_edge("assistant", END)
    fac = SqliteFactory(pkg)
    holder: dict[str, Any] = {}

    def before():
        holder["g"] = b.compile(checkpointer=fac.new())

    def run():
        g = holder["g"]
        cfg = {"configurable": {"thread_id": "chat"}}
        out = None
        for t in range(turns):
            out = g.invoke(
                {
                    "messages": [
                        {
                            "role": "user",
                            "id": f"u{t}",
                            "content": f"message number {t} from the user",
                        }
                    ]
                },
                cfg,
            )
        return out

    def extra():
        out = holder.get("out")
        msg_bytes = len(json.dumps(canon(out["messages"]))) if out else 0
        fac.close()  # bytes at rest: closing merges the WAL into the database file
        db = fac.bytes_on_disk()
        return {
            "turns": turns,
            "db_bytes": db,
            "message_json_bytes": msg_bytes,
            "db_over_messages": round(db / msg_bytes, 1) if msg_bytes else None,
        }

    def run_and_keep():
        holder["out"] = run()
        return holder["out"]

    return Case(run=run_and_keep, before=before, extra=extra, cleanup=fac.cleanup)


# --------------------------------------------------------------------------- #
# worker
# --------------------------------------------------------------------------- #


def measure_case(wl: Workload, case: Case, repeat: int):
    repeat = max(1, min(repeat, wl.max_repeat))
    if case.measure is not None:
        walls, cpus, notes = case.measure(repeat)
        return walls, cpus, None, notes or {}
    result = None
    if not wl.no_warmup:
        if case.before:
            case.before()
        result = case.run()
    walls, cpus = [], []
    budget_deadline = None
    for k in range(repeat):
        if case.before:
            case.before()
        gc.collect()
        c0, w0 = time.process_time(), time.perf_counter()
        result = case.run()
        w1, c1 = time.perf_counter(), time.process_time()
        walls.append(w1 - w0)
        cpus.append(c1 - c0)
        # keep long workloads bounded: stop after ~4 s once we have 3 samples
        if budget_deadline is None:
            budget_deadline = w0 + float(os.environ.get("SGBENCH_BUDGET_S", "4"))
        if k >= 2 and time.perf_counter() > budget_deadline:
            break
    return walls, cpus, result, {}


sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads_shapes  # noqa: E402  (more shapes, registered into this module's registry)

workloads_shapes.register(sys.modules[__name__])


def worker_main(argv=None) -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("--worker", required=True)
    ap.add_argument("--pkg", required=True)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--out", required=True)
    a = ap.parse_args(argv)
    wl = WORKLOADS[a.worker]
    report: dict[str, Any] = {"workload": wl.name, "pkg": a.pkg, "python": sys.executable}
    case = None
    try:
        try:
            importlib.import_module(a.pkg)
        except ModuleNotFoundError as e:
            raise Unsupported(f"{a.pkg} not installed for {sys.executable}") from e
        case = wl.factory(a.pkg, a.quick)
        walls, cpus, result, notes = measure_case(wl, case, a.repeat)
        dig = case.digest(result) if case.digest else canon(result)
        report.update(
            status="ok",
            wall_s=walls,
            cpu_s=cpus,
            wall_median_ms=statistics.median(walls) * 1000,
            cpu_median_ms=statistics.median(cpus) * 1000,
            digest=None if dig is None else digest_of(dig),
            result=dig if len(json.dumps(dig)) < 500_000 else None,
            extra={**notes, **(case.extra() if case.extra else {})},
        )
    except Unsupported as e:
        report.update(status="n/a", reason=str(e))
    except Exception as e:  # noqa: BLE001 - report anything as a failure
        report.update(
            status="error", reason=f"{type(e).__name__}: {e}", traceback=traceback.format_exc()
        )
    finally:
        if case is not None and case.cleanup:
            try:
                case.cleanup()
            except Exception:  # noqa: BLE001
                pass
    with open(a.out, "w") as f:
        json.dump(report, f)
    return 0


if __name__ == "__main__":
    sys.exit(worker_main())
