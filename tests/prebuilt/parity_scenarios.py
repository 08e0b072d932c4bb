"""Programs run unchanged on LangGraph and on stepgraph (only the package name differs).

``python parity_scenarios.py langgraph`` prints the results as JSON; that is how the
expected values in ``test_parity.py`` were recorded (LangGraph 1.2.22, langgraph-prebuilt
1.1.3, langchain-core 1.8.3). Random message ids are left out of every result. (No ``from __future__ import
annotations`` here: the tools below are local and their hints must resolve eagerly.)
"""

import asyncio
import importlib
import json
import sys
import warnings
from pathlib import Path
from typing import Annotated, Any

sys.path.insert(0, str(Path(__file__).parent))

from langchain_core.messages import AIMessage, SystemMessage, ToolMessage  # noqa: E402
from langchain_core.tools import InjectedToolCallId, tool  # noqa: E402
from prebuilt_fakes import ScriptedModel, call, summary  # noqa: E402
from pydantic import BaseModel  # noqa: E402


class Weather(BaseModel):
    temp: int


def run_all(lib: str) -> dict[str, Any]:
    """Every scenario's result, by name (JSON-ready)."""
    warnings.simplefilter("ignore")
    pre = importlib.import_module(f"{lib}.prebuilt")
    types = importlib.import_module(f"{lib}.types")
    graph = importlib.import_module(f"{lib}.graph")
    memory = importlib.import_module(f"{lib}.checkpoint.memory")
    managed = importlib.import_module(f"{lib}.managed")
    agent_of, Command = pre.create_react_agent, types.Command
    hi = {"messages": [("user", "hi")]}
    out: dict[str, Any] = {}

    @tool
    def add(a: int, b: int) -> int:
        """Add two numbers."""
        return a + b

    @tool
    def shout(text: str) -> str:
        """Upper-case a text."""
        return text.upper()

    @tool
    def boom(x: int) -> str:
        """Always fails."""
        raise ValueError("bad")

    @tool
    def set_who(who: str, tool_call_id: Annotated[str, InjectedToolCallId]) -> Any:
        """Set who."""
        reply = ToolMessage("done", tool_call_id=tool_call_id)
        return Command(update={"messages": [reply], "who": who})

    @tool
    def peek(q: str, state: Annotated[dict, pre.InjectedState], runtime: pre.ToolRuntime) -> str:
        """Look at the state."""
        return f"{q}:{len(state['messages'])}:{sorted(state)}:{runtime.tool_call_id}"

    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2), call("shout", "c2", text="yo")]])
    agent = agent_of(model, [add, shout])
    updates = [
        [node, summary(update["messages"])]
        for chunk in agent.stream(hi, stream_mode="updates")
        for node, update in chunk.items()
    ]  # parallel tool calls finish in any order: sort the two ``tools`` updates
    out["updates"] = [updates[0], *sorted(updates[1:3], key=repr), *updates[3:]]
    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]])
    out["ainvoke"] = summary(asyncio.run(agent_of(model, [add]).ainvoke(hi))["messages"])

    for limit in (4, 5, 6):
        model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]], loop=True)
        try:
            result = agent_of(model, [add]).invoke(hi, {"recursion_limit": limit})
            out[f"limit{limit}"] = summary(result["messages"])
        except Exception as e:
            out[f"limit{limit}"] = type(e).__name__

    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]], structured=Weather(temp=70))
    result = agent_of(model, [add], response_format=("be terse", Weather)).invoke(hi)
    out["structured"] = [result["structured_response"].temp, summary(model.received[-1])]

    for label, prompt in [
        ("str", "sys"),
        ("system", SystemMessage("sm")),
        ("callable", lambda s: [SystemMessage("fn"), *s["messages"]]),
    ]:
        model = ScriptedModel()
        agent_of(model, [add], prompt=prompt).invoke(hi)
        out[f"prompt_{label}"] = summary(model.received[0])

    model = ScriptedModel(turns=[[call("add", "c1", a=1, b=2)]])
    agent = agent_of(model, [add], checkpointer=memory.InMemorySaver(), interrupt_before=["tools"])
    cfg = {"configurable": {"thread_id": "t"}}
    first = agent.invoke(hi, cfg)
    paused = [summary(first["messages"]), list(agent.get_state(cfg).next)]
    out["interrupt_before"] = [paused, summary(agent.invoke(None, cfg)["messages"])]

    class WhoState(graph.MessagesState):
        who: str
        remaining_steps: managed.RemainingSteps

    model = ScriptedModel(turns=[[call("set_who", "c1", who="bob")]])
    result = agent_of(model, [set_who], state_schema=WhoState).invoke(hi)
    out["command"] = [summary(result["messages"]), result["who"]]

    model = ScriptedModel(turns=[[call("peek", "c1", q="x")]])
    out["injected"] = summary(agent_of(model, [peek]).invoke(hi)["messages"])[2]

    ai = AIMessage("", tool_calls=[call("boom", "1", x=1), call("add", "2", a="no", b=1)])
    for label, handler in [("true", True), ("str", "oops")]:
        builder = graph.StateGraph(graph.MessagesState)
        builder.add_node("tools", pre.ToolNode([boom, add], handle_tool_errors=handler))
        builder.add_edge(graph.START, "tools")
        out[f"errors_{label}"] = summary(builder.compile().invoke({"messages": [ai]})["messages"])
    return out


if __name__ == "__main__":
    print(json.dumps(run_all(sys.argv[1] if len(sys.argv) > 1 else "stepgraph"), indent=1))
