"""``install_langgraph_alias()``: what ``import langgraph...`` resolves to, and its errors.

The alias is installed by this folder's conftest. Installing into a fresh interpreter
(launcher, environment switch, real LangGraph already imported) runs in a subprocess.
"""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
import textwrap

import pytest
from compat_support import HAVE_LANGCHAIN, SKIP_REASON

import stepgraph
import stepgraph.compat
import stepgraph.config
import stepgraph.graph
from stepgraph.compat import LangGraphAliasError, UnsupportedNameError
from stepgraph.compat import _alias as alias_impl


def _python(code: str, *args: str, env: dict[str, str] | None = None, launcher: bool = False) -> subprocess.CompletedProcess[str]:
    cmd = [sys.executable, *(["-m", "stepgraph.compat"] if launcher else []), "-c", textwrap.dedent(code), *args]
    full_env = {k: v for k, v in os.environ.items() if k != stepgraph.compat.ENV_VAR}
    full_env.update(env or {})
    return subprocess.run(cmd, capture_output=True, text=True, timeout=120, env=full_env)


def test_public_modules_are_stepgraphs_own() -> None:
    import langgraph
    import langgraph.graph
    import langgraph.graph.message
    import langgraph.types

    assert stepgraph.compat.is_langgraph_alias_installed()
    assert langgraph is stepgraph and langgraph.graph is stepgraph.graph
    assert langgraph.types.Command is importlib.import_module("stepgraph.types").Command
    assert langgraph.graph.message.add_messages is importlib.import_module("stepgraph.graph.message").add_messages
    # the shared module keeps its own spec (importlib would otherwise leave the alias's)
    assert langgraph.graph.__spec__.name == "stepgraph.graph"


def test_private_paths_the_ecosystem_imports() -> None:
    from langgraph._internal._config import patch_configurable
    from langgraph._internal._constants import CONFIG_KEY_READ, CONFIG_KEY_RUNTIME, CONFIG_KEY_SEND
    from langgraph._internal._typing import DeprecatedKwargs  # noqa: F401
    from langgraph.constants import CONF
    from langgraph.typing import ContextT  # noqa: F401
    from langgraph.utils.config import ensure_config, get_config, get_store

    assert (CONF, CONFIG_KEY_RUNTIME, CONFIG_KEY_READ, CONFIG_KEY_SEND) == (
        "configurable", "__pregel_runtime", "__pregel_read", "__pregel_send")
    assert get_config is stepgraph.config.get_config and get_store is stepgraph.config.get_store
    assert ensure_config is stepgraph.config.ensure_config
    patched = patch_configurable({"configurable": {"a": 1}, "tags": ["t"]}, {"b": 2})
    assert patched == {"configurable": {"a": 1, "b": 2}, "tags": ["t"]}


def test_an_unknown_path_is_a_coded_module_not_found_error() -> None:
    with pytest.raises(LangGraphAliasError) as info:
        importlib.import_module("langgraph.no_such_module")
    assert info.value.code == "SG611" and "langgraph.no_such_module" in str(info.value)
    assert isinstance(info.value, ModuleNotFoundError)


def test_unsupported_names_raise_sg612(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(alias_impl.UNSUPPORTED, "langgraph.pregel", {"Nope": "stepgraph has no Nope"})
    module = importlib.import_module("stepgraph.pregel")
    monkeypatch.delitem(alias_impl._patched, module.__name__, raising=False)
    alias_impl._add_fallbacks("langgraph.pregel", module)
    try:
        with pytest.raises(UnsupportedNameError) as info:
            exec("from langgraph.pregel import Nope", {})
        assert info.value.code == "SG612" and "langgraph.pregel.Nope" in str(info.value)
        with pytest.raises(AttributeError):
            module.NotAName  # noqa: B018 - other names keep the plain AttributeError
    finally:
        previous = alias_impl._patched.pop(module.__name__, None)
        if previous is None:
            module.__dict__.pop("__getattr__", None)
        else:
            module.__getattr__ = previous


def test_import_stepgraph_pulls_neither_langchain_nor_compat() -> None:
    proc = _python("""
        import sys, stepgraph, stepgraph.graph, stepgraph.types
        bad = [m for m in sys.modules if m.split('.')[0] in ('langchain', 'langchain_core', 'langgraph')
               or m.startswith('stepgraph.compat')]
        print(bad)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"


def test_the_launcher_runs_a_program_unchanged() -> None:
    proc = _python("""
        import sys, langgraph.graph, os
        print(langgraph.graph.__name__, sys.argv[1:], os.environ['STEPGRAPH_LANGGRAPH_ALIAS'])
    """, "a", "b", launcher=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["stepgraph.graph", "['a',", "'b']", "1"]


def test_the_launcher_runs_a_script_and_a_module(tmp_path) -> None:
    script = tmp_path / "prog.py"
    script.write_text("import sys\nfrom langgraph.graph import StateGraph\n"
                      "print(StateGraph.__module__, sys.argv)\n")
    proc = subprocess.run([sys.executable, "-m", "stepgraph.compat", str(script), "x"],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"stepgraph.graph.builder [{str(script)!r}, 'x']"
    proc = subprocess.run([sys.executable, "-m", "stepgraph.compat", "-m", "prog", "y"],
                          capture_output=True, text=True, timeout=120, cwd=tmp_path,
                          env={**os.environ, "PYTHONPATH": str(tmp_path)})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("stepgraph.graph.builder")


def test_the_environment_switch() -> None:
    code = "import langgraph.graph; print(langgraph.graph.__name__)"
    proc = _python(code, env={stepgraph.compat.ENV_VAR: "1"})
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "stepgraph.graph"
    off = _python("import sys; print([m for m in sys.modules if m.startswith('stepgraph')])",
                  env={stepgraph.compat.ENV_VAR: "0"})
    assert off.returncode == 0, off.stderr
    assert off.stdout.strip() == "[]"  # switched off, start-up imports nothing of stepgraph


@pytest.mark.skipif(not HAVE_LANGCHAIN, reason=SKIP_REASON)
def test_installing_after_the_real_langgraph_is_sg610() -> None:
    proc = _python("""
        import langgraph.graph  # the real one
        from stepgraph.compat import install_langgraph_alias, LangGraphAliasError
        try:
            install_langgraph_alias()
        except LangGraphAliasError as exc:
            print(exc.code, exc.name)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split()[0] == "SG610"


@pytest.mark.skipif(not HAVE_LANGCHAIN, reason=SKIP_REASON)
def test_uninstall_gives_the_real_langgraph_back() -> None:
    proc = _python("""
        from stepgraph.compat import install_langgraph_alias, uninstall_langgraph_alias
        install_langgraph_alias()
        import langgraph.graph
        first = langgraph.graph.__name__
        uninstall_langgraph_alias()
        import langgraph.graph
        print(first, langgraph.graph.StateGraph.__module__)
    """)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["stepgraph.graph", "langgraph.graph.state"]
