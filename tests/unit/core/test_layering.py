"""The import layering of ``src/stepgraph``, checked on the source with ``ast``.

Layers, lowest first (``LAYERS``): a module may import its own layer and the ones below it,
never one above. Module-level imports must form no cycle. Imports under ``if TYPE_CHECKING:``
are not run and are ignored. Imports inside functions are counted: the ones that reach a
higher layer must be listed in ``UPWARD_EXCEPTIONS`` with the reason, and the total (which
only dodged cycles before the layering was cut) may not grow past ``FUNCTION_IMPORT_CEILING``.
Outside the edge layer every function-level import is listed in ``LAZY_IMPORTS`` with the
reason it is not at the module's top (a cycle, or a lazy load that keeps
``import stepgraph.graph``, a sync run or a plain run free of asyncio, langchain-core or an
unused feature); a new one fails the test until it is moved to the top or listed.

Run this file directly for the report: ``python tests/unit/core/test_layering.py``.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

SRC = Path(__file__).resolve().parents[3] / "src"

LAYERS: tuple[tuple[str, tuple[str, ...]], ...] = (
    (
        "base",
        (
            "stepgraph", "stepgraph._constants", "stepgraph.warnings", "stepgraph._running",
            "stepgraph._updates", "stepgraph._cache_key", "stepgraph._collector", "stepgraph.typing", "stepgraph.constants",
            "stepgraph.errors", "stepgraph.config", "stepgraph.types", "stepgraph.runtime",
            "stepgraph.managed", "stepgraph.callbacks", "stepgraph.messages",
        ),
    ),
    ("channels", ("stepgraph.channels",)),
    ("storage", ("stepgraph.checkpoint", "stepgraph.cache", "stepgraph.store")),
    ("stream", ("stepgraph.stream",)),
    ("engine", ("stepgraph.engine",)),
    ("pregel", ("stepgraph.pregel", "stepgraph.draw")),
    ("graph", ("stepgraph.graph", "stepgraph.func")),
    ("prebuilt", ("stepgraph.prebuilt",)),
    (
        "edges",
        ("stepgraph.server", "stepgraph.remote", "stepgraph.compat", "stepgraph.cli",
         "stepgraph.testing",
         # RemoteGraph, at LangGraph's import path: an HTTP client of the server edge
         "stepgraph.pregel.remote", "stepgraph.pregel._remote_run_stream"),
    ),
)

# (importing module, imported module): why a function reaches a higher layer.
UPWARD_EXCEPTIONS: dict[tuple[str, str], str] = {
    ("stepgraph.constants", "stepgraph.types"):
        "deprecated `from langgraph.constants import Send` shim (module __getattr__)",
    ("stepgraph.errors", "stepgraph.types"):
        "deprecated NodeInterrupt builds an Interrupt (types imports errors)",
}

FUNCTION_IMPORT_CEILING = 106  # 282 before the layering was cut, 153 before LAZY_IMPORTS (issue 13)

_LEAN = "not loaded by `import stepgraph.graph`"
# (importing module, imported module): why the import is inside a function (outside the edge
# layer). 25 imports; 72 before the cycle-dodging ones moved to the top (issue 13).
LAZY_IMPORTS: dict[tuple[str, str], str] = {
    # cycles
    ("stepgraph.constants", "stepgraph.types"):
        "cycle and upward: the deprecated `langgraph.constants.Send` shim (types imports constants)",
    ("stepgraph.errors", "stepgraph.types"):
        "cycle and upward: deprecated NodeInterrupt builds an Interrupt (types imports errors)",
    ("stepgraph.checkpoint.serde._allowlist", "stepgraph.checkpoint.serde.types"):
        "cycle: serde.types imports the allow-list's tables",
    ("stepgraph.draw.graph", "stepgraph.draw.mermaid"):
        "cycle: mermaid imports draw.graph's styles",
    # optional langchain-core (about 330 modules)
    ("stepgraph.engine.delta", "stepgraph.messages._lc"):
        "langchain-core, only when installed and a message object is stamped",
    ("stepgraph.messages._merge", "stepgraph.messages._lc"):
        "langchain-core, only for message objects and the openai format",
    ("stepgraph.engine.tracing", "stepgraph.callbacks"):
        "stepgraph.callbacks imports langchain-core: only a traced run loads it",
    ("stepgraph.pregel.api", "stepgraph.pregel.runnable"):
        f"`graph | runnable` composition with langchain-core; {_LEAN}",
    ("stepgraph.stream.messages", "stepgraph.stream._messages_handler"):
        "the langchain callback handler, only for `messages` streams with langchain-core",
    # asyncio: sync programs never load it
    ("stepgraph.pregel._run", "stepgraph.engine.driver_async"):
        "the async driver (asyncio), on the first async run",
    ("stepgraph.func", "stepgraph.engine.calls"):
        "task calls (asyncio, the thread pool), on the first call, not by `import stepgraph.func`",
    ("stepgraph.pregel.events_api", "stepgraph.pregel.events_v3"):
        "v3 event streams (asyncio, the stream muxers), only for version='v3'",
    # `import stepgraph.graph` stays lean: the run-time modules load on first use
    ("stepgraph.pregel.api", "stepgraph.pregel._run"):
        f"the engine's run-time modules, on the first run; {_LEAN}",
    ("stepgraph.engine.snapshot", "stepgraph.engine.loop"):
        f"the run loop, for get_state; {_LEAN}",
    ("stepgraph.engine.update", "stepgraph.engine.input"):
        f"input mapping, for update_state(as_node='__input__'); {_LEAN}",
    ("stepgraph.pregel.main", "stepgraph.engine.caching"): f"clear_cache only; {_LEAN}",
    ("stepgraph.pregel.main", "stepgraph.draw"): f"get_graph only (uuid, platform); {_LEAN}",
    ("stepgraph.pregel.validate", "stepgraph.engine.timeout_support"): f"at compile; {_LEAN}",
    ("stepgraph.stream.output", "stepgraph.stream.typed_v2"): f"version='v2' outputs; {_LEAN}",
}
CORE_FUNCTION_IMPORT_CEILING = 25


@dataclass
class Imports:
    top: set[str] = field(default_factory=set)
    inner: list[tuple[int, str]] = field(default_factory=list)


def _modules() -> dict[str, tuple[Path, bool]]:
    out: dict[str, tuple[Path, bool]] = {}
    for path in sorted((SRC / "stepgraph").rglob("*.py")):
        parts = list(path.relative_to(SRC).with_suffix("").parts)
        is_pkg = parts[-1] == "__init__"
        if is_pkg:
            parts = parts[:-1]
        out[".".join(parts)] = (path, is_pkg)
    return out


MODULES = _modules()


def _owner(name: str) -> str | None:
    """The module file an imported dotted name lives in."""
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _targets(mod: str, is_pkg: bool, node: ast.Import | ast.ImportFrom) -> Iterator[str]:
    if isinstance(node, ast.Import):
        names = [a.name for a in node.names]
    else:
        if node.level:
            base = mod.split(".") if is_pkg else mod.split(".")[:-1]
            base = base[: len(base) - (node.level - 1)]
            prefix = ".".join([*base, *([node.module] if node.module else [])])
        else:
            prefix = node.module or ""
        names = [f"{prefix}.{a.name}" if f"{prefix}.{a.name}" in MODULES else prefix
                 for a in node.names]
    seen: set[str] = set()
    for name in names:
        if name == "stepgraph" or name.startswith("stepgraph."):
            owner = _owner(name)
            if owner is not None and owner != mod and owner not in seen:
                seen.add(owner)
                yield owner


def _is_type_checking(test: ast.expr) -> bool:
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"
    )


def _scan(mod: str) -> Imports:
    path, is_pkg = MODULES[mod]
    found = Imports()

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child.test):
                for sub in child.orelse:
                    visit(ast.Module(body=[sub], type_ignores=[]), in_function)
            elif isinstance(child, (ast.Import, ast.ImportFrom)):
                for target in _targets(mod, is_pkg, child):
                    if in_function:
                        found.inner.append((child.lineno, target))
                    else:
                        found.top.add(target)
            else:
                visit(child, in_function or isinstance(
                    child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)))

    visit(ast.parse(path.read_text(), str(path)), False)
    return found


IMPORTS = {mod: _scan(mod) for mod in MODULES}


def layer_of(mod: str) -> int:
    best, rank = -1, -1
    for i, (_, prefixes) in enumerate(LAYERS):
        for prefix in prefixes:
            if (mod == prefix or mod.startswith(prefix + ".")) and len(prefix) > best:
                best, rank = len(prefix), i
    assert rank >= 0, f"{mod} is in no layer: add it to LAYERS"
    return rank


def _with_parents(mod: str, targets: set[str]) -> set[str]:
    """Importing ``a.b.c`` runs ``a/__init__`` and ``a/b/__init__`` first."""
    out = set(targets)
    for t in targets:
        parts = t.split(".")
        for i in range(1, len(parts)):
            parent = ".".join(parts[:i])
            if parent in MODULES and not mod.startswith(parent + "."):
                out.add(parent)
    out.discard(mod)
    return out


def strongly_connected(edges: dict[str, set[str]]) -> list[list[str]]:
    """Tarjan's components (iterative), largest first, only those with a cycle."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    comps: list[list[str]] = []
    counter = 0
    for root in edges:
        if root in index:
            continue
        work = [(root, iter(sorted(edges[root])))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on_stack.add(root)
        while work:
            v, it = work[-1]
            for w in it:
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(edges.get(w, ())))))
                    break
                if w in on_stack:
                    low[v] = min(low[v], index[w])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[v])
                if low[v] == index[v]:
                    comp = []
                    while True:
                        w = stack.pop()
                        on_stack.discard(w)
                        comp.append(w)
                        if w == v:
                            break
                    if len(comp) > 1:
                        comps.append(sorted(comp))
    return sorted(comps, key=len, reverse=True)


def module_edges() -> dict[str, set[str]]:
    return {mod: _with_parents(mod, imp.top) for mod, imp in IMPORTS.items()}


def all_edges() -> dict[str, set[str]]:
    """Module-level and function-level imports together (what runs sooner or later)."""
    return {mod: _with_parents(mod, imp.top | {t for _, t in imp.inner})
            for mod, imp in IMPORTS.items()}


def upward(include_inner: bool) -> list[tuple[str, str]]:
    out = []
    for mod, imp in IMPORTS.items():
        targets = set(imp.top) | ({t for _, t in imp.inner} if include_inner else set())
        out.extend((mod, t) for t in sorted(targets) if layer_of(t) > layer_of(mod))
    return out


def function_import_count() -> int:
    return sum(len(imp.inner) for imp in IMPORTS.values())


def core_function_import_count() -> int:
    """Function-level imports outside the edge layer (server, remote, compat, cli, testing)."""
    edge = len(LAYERS) - 1
    return sum(len(imp.inner) for mod, imp in IMPORTS.items() if layer_of(mod) < edge)


def test_every_module_has_a_layer() -> None:
    for mod in MODULES:
        layer_of(mod)


def test_no_module_level_import_reaches_a_higher_layer() -> None:
    assert upward(include_inner=False) == []


def test_function_level_imports_reach_higher_layers_only_where_listed() -> None:
    unexpected = [pair for pair in upward(include_inner=True) if pair not in UPWARD_EXCEPTIONS]
    assert unexpected == []


def test_listed_exceptions_are_still_needed() -> None:
    live = set(upward(include_inner=True)) | {
        (mod, t) for mod, imp in IMPORTS.items() for _, t in imp.inner
    }
    assert [pair for pair in UPWARD_EXCEPTIONS if pair not in live] == []


def test_module_level_imports_have_no_cycle() -> None:
    assert strongly_connected(module_edges()) == []


def test_base_modules_never_import_the_engine() -> None:
    """``types``, ``config``, ``runtime``, ``channels`` and ``stream`` read the running task
    through ``stepgraph._running``; nothing of theirs imports ``engine/``, not even lazily."""
    low = ("stepgraph.types", "stepgraph.config", "stepgraph.runtime", "stepgraph.channels",
           "stepgraph.stream")
    bad = [
        (mod, t)
        for mod, imp in IMPORTS.items()
        if any(mod == p or mod.startswith(p + ".") for p in low)
        for t in imp.top | {t for _, t in imp.inner}
        if t.startswith("stepgraph.engine")
    ]
    assert bad == []


def test_function_level_import_count_does_not_grow() -> None:
    assert function_import_count() <= FUNCTION_IMPORT_CEILING
    assert core_function_import_count() <= CORE_FUNCTION_IMPORT_CEILING


def _core_inner_pairs() -> set[tuple[str, str]]:
    edge = len(LAYERS) - 1
    return {(mod, t) for mod, imp in IMPORTS.items() if layer_of(mod) < edge for _, t in imp.inner}


def test_function_level_imports_outside_the_edges_are_listed() -> None:
    """Move a new one to the module's top, or list it in ``LAZY_IMPORTS`` with the reason."""
    assert sorted(_core_inner_pairs() - set(LAZY_IMPORTS)) == []


def test_listed_lazy_imports_are_still_there() -> None:
    assert sorted(set(LAZY_IMPORTS) - _core_inner_pairs()) == []


def report() -> str:
    comps = strongly_connected(all_edges())
    lines = [
        f"modules: {len(MODULES)}",
        f"module-level cycles: {[len(c) for c in strongly_connected(module_edges())]}",
        f"cycles counting function-level imports: {[len(c) for c in comps]}",
        f"function-level stepgraph imports: {function_import_count()} "
        f"(outside the edge layer: {core_function_import_count()})",
        "function-level imports outside the edge layer:",
        *(f"  {a} -> {b}: {LAZY_IMPORTS.get((a, b), 'NOT LISTED')}"
          for a, b in sorted(_core_inner_pairs())),
        "upward function-level imports:",
        *(f"  {a} -> {b}" for a, b in upward(include_inner=True)),
    ]
    if comps:
        lines.append(f"largest cycle: {comps[0]}")
    return "\n".join(lines)


if __name__ == "__main__":
    print(report())
