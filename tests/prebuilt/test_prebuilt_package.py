"""The prebuilt package: optional dependency, import paths, ``ValidationNode``, interrupts."""

import subprocess
import sys

import pytest

pytest.importorskip("langchain_core")

from langchain_core.messages import AIMessage, ToolMessage  # noqa: E402
from langchain_core.messages.tool import ToolOutputMixin  # noqa: E402
from langchain_core.tools import tool  # noqa: E402
from prebuilt_fakes import call  # noqa: E402
from pydantic import BaseModel, field_validator  # noqa: E402

from stepgraph.types import Command  # noqa: E402


def _run(code: str) -> str:
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return out.stdout.strip()


def test_missing_langchain_core_is_a_coded_import_error() -> None:
    """Without langchain-core, importing the package raises SG601 (an ``ImportError``)."""
    code = (
        "import sys; sys.modules['langchain_core'] = None\n"
        "try:\n    import stepgraph.prebuilt\n"
        "except ImportError as e:\n    print(type(e).__name__, e.code, e.hint, '[SG601]' in str(e))\n"
    )
    assert _run(code) == "MissingDependencyError SG601 pip install 'stepgraph[langchain]' True"


def test_core_imports_never_load_prebuilt() -> None:
    """``import stepgraph`` and the graph API import neither the prebuilt package nor langchain."""
    code = (
        "import sys, stepgraph, stepgraph.graph, stepgraph.types, stepgraph.pregel\n"
        "print([m for m in ('stepgraph.prebuilt', 'langchain_core') if m in sys.modules])"
    )
    assert _run(code) == "[]"


def test_langgraph_module_paths() -> None:
    """LangGraph's module paths exist: executor, tool node, validator, interrupt types."""
    from stepgraph.prebuilt import chat_agent_executor, interrupt, tool_node, tool_validator

    assert chat_agent_executor.create_tool_calling_executor is chat_agent_executor.create_react_agent
    assert tool_node.InjectedState and tool_node.InjectedStore and tool_node.ToolRuntime
    assert tool_node.TOOL_CALL_ERROR_TEMPLATE == "Error: {error}\n Please fix your mistakes."
    assert tool_validator.ValidationNode
    assert set(interrupt.HumanInterrupt.__annotations__) == {"action_request", "config", "description"}
    assert chat_agent_executor.AgentState.__required_keys__ == {"messages"}
    assert chat_agent_executor.AgentStateWithStructuredResponse.__required_keys__ == {"messages", "structured_response"}


def test_command_is_tool_output() -> None:
    """After import, ``Command`` is a ``ToolOutputMixin``: a tool returns it unwrapped."""

    @tool
    def cmd() -> Command:
        """Return a command."""
        return Command(goto="x")

    assert isinstance(Command(), ToolOutputMixin)
    out = cmd.invoke({"name": "cmd", "args": {}, "id": "1", "type": "tool_call"})
    assert out == Command(goto="x")


class Pick(BaseModel):
    n: int

    @field_validator("n")
    @classmethod
    def only_37(cls, v: int) -> int:
        if v != 37:
            raise ValueError("Only 37 is allowed")
        return v


def test_validation_node() -> None:
    """Valid calls become JSON ToolMessages; invalid ones carry ``is_error``."""
    from stepgraph.prebuilt import ValidationNode

    def pick(n: int) -> None:
        """Pick by signature."""

    node = ValidationNode([Pick, pick])
    msg = AIMessage("", tool_calls=[call("Pick", "1", n=37), call("Pick", "2", n=1), call("pick", "3", n="x")])
    ok, bad, sig = node.invoke({"messages": [msg]})["messages"]
    assert isinstance(ok, ToolMessage) and ok.content == '{"n":37}' and not ok.additional_kwargs
    assert bad.additional_kwargs == {"is_error": True} and "Only 37" in bad.content
    assert sig.additional_kwargs == {"is_error": True}
    assert [m.tool_call_id for m in node.invoke([msg])] == ["1", "2", "3"]
    with pytest.raises(ValueError, match="Last message is not an AIMessage"):
        node.invoke([ToolMessage("x", tool_call_id="1")])
    with pytest.raises(ValueError, match="Unsupported input"):
        ValidationNode([42])


def test_validation_node_in_graph() -> None:
    """``ValidationNode`` works as a graph node over ``MessagesState``."""
    from stepgraph.graph import START, MessagesState, StateGraph
    from stepgraph.prebuilt import ValidationNode

    builder = StateGraph(MessagesState)
    builder.add_node("validation", ValidationNode([Pick]))
    builder.add_edge(START, "validation")
    out = builder.compile().invoke({"messages": [AIMessage("", tool_calls=[call("Pick", "1", n=37)])]})
    assert out["messages"][-1].content == '{"n":37}'
