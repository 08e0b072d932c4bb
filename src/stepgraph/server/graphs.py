"""The graphs a server hosts: loading ``./file.py:variable`` references and building graphs.

A reference may name a compiled graph, a ``StateGraph`` builder (compiled once here) or a
factory: a function (sync or async) taking no argument or the run's config and returning
either of the two. Factories are called for every run, with that run's config.

Before importing graph modules the loader installs the ``langgraph`` alias
(``stepgraph.compat``), so a LangGraph Platform app (``create_agent``, ``from langgraph...``)
builds stepgraph graphs unedited; ``STEPGRAPH_LANGGRAPH_ALIAS=0`` turns that off. A graph
object of the real LangGraph is refused with SG613.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import logging
import sys
from pathlib import Path
from typing import Any

from stepgraph.server.settings import ConfigError

__all__ = ["GraphRegistry", "import_target"]

logger = logging.getLogger("stepgraph.server")


def _is_compiled(obj: Any) -> bool:
    from stepgraph.pregel.main import Pregel

    return isinstance(obj, Pregel)


def _is_builder(obj: Any) -> bool:
    from stepgraph.graph.builder import StateGraph

    return isinstance(obj, StateGraph)


class GraphRegistry:
    """Graph id -> graph (or factory), loaded once at startup."""

    def __init__(self, specs: dict[str, Any], base_dir: Path, *, descriptions: dict[str, str] | None = None) -> None:
        self.specs = dict(specs)
        self.base_dir = base_dir
        self.descriptions = dict(descriptions or {})
        self._objects: dict[str, Any] = {}
        self._modules: dict[Path, Any] = {}

    # -- loading ------------------------------------------------------------------------------
    def load(self) -> None:
        """Import every graph; ``ConfigError`` names the first one that fails."""
        if any(isinstance(ref, str) for ref in self.specs.values()):
            enable_langgraph_alias()
        for graph_id, ref in self.specs.items():
            obj = self._resolve(graph_id, ref) if isinstance(ref, str) else ref
            _refuse_foreign(graph_id, obj)
            if _is_builder(obj):
                obj = obj.compile(name=graph_id)
            if _is_compiled(obj):
                obj = _without_saver(graph_id, obj)
            elif not callable(obj):
                raise ConfigError(f"Graph {graph_id!r}: {type(obj).__name__} is not a graph, builder or factory")
            self._objects[graph_id] = obj

    def _resolve(self, graph_id: str, ref: str) -> Any:
        target, _, attr = ref.rpartition(":")
        if not target or not attr:
            raise ConfigError(f'Graph {graph_id!r}: expected "./file.py:variable", got {ref!r}')
        try:
            module = self._import(target)
        except ConfigError as exc:
            raise ConfigError(f"Graph {graph_id!r}: {exc}") from None
        except Exception as exc:  # noqa: BLE001 - the user's module failed to import
            raise ConfigError(f"Graph {graph_id!r}: importing {target} failed: {type(exc).__name__}: {exc}") from exc
        obj: Any = module
        for part in attr.split("."):
            if not hasattr(obj, part):
                raise ConfigError(f"Graph {graph_id!r}: {target} has no attribute {attr!r}")
            obj = getattr(obj, part)
        return obj

    def _import(self, target: str) -> Any:
        return import_target(target, self.base_dir, self._modules)

    # -- lookups ------------------------------------------------------------------------------
    @property
    def ids(self) -> list[str]:
        """The registered graph ids, in config order."""
        return list(self._objects)

    def __contains__(self, graph_id: object) -> bool:
        return graph_id in self._objects

    async def build(self, graph_id: str, config: dict[str, Any] | None = None) -> Any:
        """The compiled graph for ``graph_id`` (a factory is called with ``config``)."""
        obj = self._objects[graph_id]
        if _is_compiled(obj):
            return obj
        result = _call_factory(obj, config or {})
        if inspect.isawaitable(result):
            result = await result
        if _is_builder(result):
            result = result.compile(name=graph_id)
        _refuse_foreign(graph_id, result)
        if not _is_compiled(result):
            raise ConfigError(f"Graph factory {graph_id!r} returned {type(result).__name__}, not a graph")
        return _without_saver(graph_id, result, quiet=True)


def enable_langgraph_alias() -> bool:
    """Install the ``langgraph`` alias unless ``STEPGRAPH_LANGGRAPH_ALIAS`` says ``0``/``false``.
    False (with a warning) when the real LangGraph is already imported."""
    import os

    if os.environ.get("STEPGRAPH_LANGGRAPH_ALIAS", "").strip().lower() in ("0", "false", "no", "off"):
        return False
    from stepgraph.compat import LangGraphAliasError, install_langgraph_alias

    try:
        install_langgraph_alias()
    except LangGraphAliasError as exc:
        logger.warning("%s", exc)
        return False
    return True


def _refuse_foreign(graph_id: str, obj: Any) -> None:
    """A graph built by the real LangGraph cannot run here: say so (SG613)."""
    module = type(obj).__module__ or ""
    if module == "langgraph" or module.startswith("langgraph."):
        raise ConfigError(
            f"Graph {graph_id!r} is a {type(obj).__name__} of the real LangGraph ({module}), "
            "not a stepgraph graph.",
            code="SG613",
            hint="let stepgraph load it with the langgraph alias on (do not set "
            "STEPGRAPH_LANGGRAPH_ALIAS=0, and do not import langgraph before the server "
            "loads the graphs), or build it with stepgraph",
        )


def import_target(target: str, base_dir: Path, cache: dict[Path, Any] | None = None) -> Any:
    """The module named by ``target``: a file (``./graph.py``, against ``base_dir``) or a
    dotted module name. A file already imported under its own name is reused."""
    cache = {} if cache is None else cache
    base = str(base_dir)
    if base not in sys.path:
        sys.path.insert(0, base)
    if not (target.endswith(".py") or "/" in target or "\\" in target):
        return importlib.import_module(target)
    path = (base_dir / target).resolve()
    if path in cache:
        return cache[path]
    if not path.is_file():
        raise ConfigError(f"File not found: {path}")
    if str(path.parent) not in sys.path:
        sys.path.insert(0, str(path.parent))
    name = path.stem
    existing = sys.modules.get(name)
    if existing is not None and Path(getattr(existing, "__file__", "") or "").resolve() == path:
        cache[path] = existing
        return existing
    if existing is not None or not name.isidentifier():
        name = f"_stepgraph_graph_{hashlib.sha1(str(path).encode()).hexdigest()[:10]}"
    spec = importlib.util.spec_from_file_location(name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"Cannot import {path}")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    cache[path] = module
    return module


def _call_factory(fn: Any, config: dict[str, Any]) -> Any:
    try:
        params = [p for p in inspect.signature(fn).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and p.default is p.empty]
    except (TypeError, ValueError):
        params = []
    return fn(config) if params else fn()


def _without_saver(graph_id: str, graph: Any, *, quiet: bool = False) -> Any:
    """The graph without its own checkpointer/store: the server supplies both."""
    changes = {}
    if graph.checkpointer not in (None, False, True):
        changes["checkpointer"] = None
    if getattr(graph, "store", None) is not None:
        changes["store"] = None
    if changes and not quiet:
        logger.warning("graph %r was compiled with its own %s; the server's are used instead",
                       graph_id, " and ".join(changes))
    return graph.copy(**changes) if changes else graph
