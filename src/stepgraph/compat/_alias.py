"""The import hook behind ``install_langgraph_alias()``: ``langgraph.*`` resolves to stepgraph.

A finder placed first on ``sys.meta_path`` answers every ``langgraph`` / ``langgraph.X.Y``
import, so it wins over an installed LangGraph. The name maps to, in order:

1. ``stepgraph.X.Y``: the same module object, so ``langgraph.graph is stepgraph.graph``,
   classes are identical and ``isinstance`` checks hold across both spellings;
2. else ``stepgraph.compat.mirror.X.Y``: thin modules for LangGraph's private paths that the
   ecosystem imports (``langgraph._internal._runnable``, ``langgraph.utils.config``...),
   each re-exporting or adapting stepgraph's own code.

A path neither provides raises ``LangGraphAliasError`` (SG611, a ``ModuleNotFoundError``)
naming it. Names the ecosystem imports from a module stepgraph has but that the module does
not define are filled from ``SUPPLEMENTS`` (or, for ``UNSUPPORTED`` ones, raise SG612) through
a module ``__getattr__`` the alias adds while installed.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import sys
import types
from typing import Any

from stepgraph.compat._errors import LangGraphAliasError, UnsupportedNameError

ALIASED = "langgraph"
TARGET = "stepgraph"
MIRROR = "stepgraph.compat.mirror"

SUPPLEMENTS: dict[str, dict[str, str]] = {
    # langgraph module -> {name: "stepgraph.module:attribute|fallback.module:attribute"}; used
    # only when the stepgraph module lacks the name (so stepgraph's own definition wins once
    # it has one); the first candidate whose module defines the name is taken.
    "langgraph.constants": {
        "CONF": "stepgraph.compat.mirror._internal._constants:CONF",
        "CONFIG_KEY_CHECKPOINTER": "stepgraph.compat.mirror._internal._constants:CONFIG_KEY_CHECKPOINTER",
    },
    "langgraph.runtime": {
        "CONFIG_KEY_RUNTIME": "stepgraph.compat.mirror._internal._constants:CONFIG_KEY_RUNTIME",
    },
    "langgraph.prebuilt": {
        "ToolCallTransformer": "stepgraph.stream:ToolCallTransformer|"
        "stepgraph.compat.mirror.stream._pending:ToolCallTransformer",
    },
    "langgraph.stream": {
        "StreamTransformer": "stepgraph.compat.mirror.stream._pending:StreamTransformer",
        "StreamChannel": "stepgraph.compat.mirror.stream._pending:StreamChannel",
        "ToolCallTransformer": "stepgraph.compat.mirror.stream._pending:ToolCallTransformer",
    },
}

UNSUPPORTED: dict[str, dict[str, str]] = {
    # langgraph module -> {name: why}; importing one raises UnsupportedNameError (SG612).
}

_installed: _AliasFinder | None = None
_patched: dict[str, Any] = {}  # stepgraph module name -> its previous __getattr__ (or None)


def langgraph_modules_loaded() -> list[str]:
    """Names of real (non-aliased) LangGraph modules already imported in this process."""
    out = []
    for name, module in list(sys.modules.items()):
        if name != ALIASED and not name.startswith(ALIASED + "."):
            continue
        if module is None:
            continue
        mod_name = getattr(module, "__name__", "") or ""
        if not (mod_name == TARGET or mod_name.startswith(TARGET + ".")):
            out.append(name)
    return sorted(out)


def target_names(fullname: str) -> tuple[str, str]:
    """(stepgraph module, mirror module) candidates for the LangGraph module ``fullname``."""
    rest = fullname[len(ALIASED):]
    return TARGET + rest, MIRROR + rest


def _exists(name: str) -> bool:
    if name in sys.modules:
        return sys.modules[name] is not None
    try:
        return importlib.util.find_spec(name) is not None
    except (ImportError, ValueError):
        return False


def resolve(fullname: str) -> str:
    """The stepgraph module that stands for ``fullname`` (SG611 if there is none)."""
    native, mirror = target_names(fullname)
    if _exists(native):
        return native
    if _exists(mirror):
        return mirror
    raise LangGraphAliasError(
        f"stepgraph's langgraph alias has no module {fullname!r}.",
        code="SG611",
        hint=f"stepgraph provides neither {native} nor a compatibility module for it; "
        "tell the stepgraph developers which package imports it",
        name=fullname,
    )


class _AliasLoader(importlib.abc.Loader):
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> types.ModuleType:
        module = importlib.import_module(self.target)
        self._spec = getattr(module, "__spec__", None)
        return module

    def exec_module(self, module: types.ModuleType) -> None:
        # importlib set the alias spec on the shared module object: give it its own back.
        if self._spec is not None:
            module.__spec__ = self._spec
        _add_fallbacks(self.alias_name, module)

    alias_name = ""


class _AliasFinder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname: str, path: Any = None, target: Any = None) -> Any:
        if fullname != ALIASED and not fullname.startswith(ALIASED + "."):
            return None
        loader = _AliasLoader(resolve(fullname))
        loader.alias_name = fullname
        native_is_package = _is_package(loader.target)
        return importlib.machinery.ModuleSpec(fullname, loader, is_package=native_is_package)


def _is_package(name: str) -> bool:
    module = sys.modules.get(name)
    if module is not None:
        return hasattr(module, "__path__")
    spec = importlib.util.find_spec(name)
    return spec is not None and spec.submodule_search_locations is not None


def _add_fallbacks(alias: str, module: types.ModuleType) -> None:
    """Give ``module`` the supplement / unsupported names registered for ``alias``."""
    extra = SUPPLEMENTS.get(alias, {})
    refused = UNSUPPORTED.get(alias, {})
    if not extra and not refused or module.__name__ in _patched:
        return
    previous = module.__dict__.get("__getattr__")
    _patched[module.__name__] = previous

    def __getattr__(name: str) -> Any:
        if previous is not None and name in extra:
            try:  # the module's own lazy name wins over a supplement (native first)
                return previous(name)
            except AttributeError:
                pass
        if name in extra:
            return _supplement(extra[name])
        if name in refused:
            raise UnsupportedNameError(
                f"{alias}.{name} is not supported by stepgraph.",
                code="SG612",
                hint=refused[name],
                name=f"{alias}.{name}",
            )
        if previous is not None:
            return previous(name)
        raise AttributeError(f"module {alias!r} (stepgraph's {module.__name__}) has no attribute {name!r}")

    __getattr__.__stepgraph_alias__ = True  # type: ignore[attr-defined]
    module.__getattr__ = __getattr__  # type: ignore[method-assign]


def _supplement(candidates: str) -> Any:
    *firsts, last = candidates.split("|")
    for candidate in firsts:
        where, _, attr = candidate.partition(":")
        try:
            found = importlib.import_module(where).__dict__.get(attr)
        except ImportError:
            continue
        if found is not None:
            return found
    where, _, attr = last.partition(":")
    return getattr(importlib.import_module(where), attr)


def install() -> None:
    """Put the finder first on ``sys.meta_path`` (idempotent)."""
    global _installed
    if _installed is not None:
        if sys.meta_path[:1] != [_installed]:
            if _installed in sys.meta_path:
                sys.meta_path.remove(_installed)
            sys.meta_path.insert(0, _installed)
        return
    loaded = langgraph_modules_loaded()
    if loaded:
        shown = ", ".join(loaded[:5]) + (f" and {len(loaded) - 5} more" if len(loaded) > 5 else "")
        raise LangGraphAliasError(
            f"The real LangGraph is already imported in this process ({shown}); "
            "stepgraph's langgraph alias must be installed before anything imports langgraph.",
            code="SG610",
            hint="call stepgraph.compat.install_langgraph_alias() first thing, or run the program "
            "with `python -m stepgraph.compat ...` or STEPGRAPH_LANGGRAPH_ALIAS=1",
            name=loaded[0],
        )
    _installed = _AliasFinder()
    sys.meta_path.insert(0, _installed)


def uninstall() -> None:
    """Remove the finder, the aliased ``sys.modules`` entries and the added fallbacks."""
    global _installed
    if _installed is not None and _installed in sys.meta_path:
        sys.meta_path.remove(_installed)
    _installed = None
    for name in [n for n in sys.modules if n == ALIASED or n.startswith(ALIASED + ".")]:
        del sys.modules[name]
    for name, previous in _patched.items():
        module = sys.modules.get(name)
        if module is None:
            continue
        if previous is None:
            module.__dict__.pop("__getattr__", None)
        else:
            module.__getattr__ = previous  # type: ignore[method-assign]
    _patched.clear()


def is_installed() -> bool:
    return _installed is not None and _installed in sys.meta_path
