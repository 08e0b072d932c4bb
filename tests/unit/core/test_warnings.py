"""``stepgraph.warnings`` and the deprecated spellings that emit them (each still works)."""

from __future__ import annotations

import importlib
import sys
import warnings

import pytest
from typing_extensions import TypedDict

from stepgraph.channels import LastValue
from stepgraph.errors import NodeInterrupt
from stepgraph.func import entrypoint, task
from stepgraph.graph import START, MessageGraph, StateGraph
from stepgraph.pregel import NodeBuilder, Pregel
from stepgraph.types import GraphOutput, Interrupt, RetryPolicy
from stepgraph.warnings import (
    LangGraphDeprecatedSinceV05,
    LangGraphDeprecatedSinceV10,
    LangGraphDeprecatedSinceV11,
    LangGraphDeprecationWarning,
)


class S(TypedDict, total=False):
    x: int


def test_classes_carry_their_versions() -> None:
    w = LangGraphDeprecatedSinceV10("old thing is gone.")
    assert isinstance(w, DeprecationWarning) and isinstance(w, LangGraphDeprecationWarning)
    assert (w.since, w.expected_removal) == ((1, 0), (2, 0))
    assert str(w) == "old thing is gone. Deprecated in LangGraph V1.0 to be removed in V2.0."
    assert LangGraphDeprecatedSinceV05("m").since == (0, 5)
    assert LangGraphDeprecatedSinceV11("m").expected_removal == (3, 0)
    custom = LangGraphDeprecationWarning("m", since=(2, 3))
    assert custom.expected_removal == (3, 0)


def test_builder_keywords() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`input` is deprecated"):
        g = StateGraph(S, input=S)
    assert g.input_schema is S
    with pytest.warns(LangGraphDeprecatedSinceV05, match="`output` is deprecated"):
        StateGraph(S, output=S)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_schema` is deprecated"):
        assert StateGraph(S, config_schema=S).context_schema is S
    policy = RetryPolicy(max_attempts=2)
    with pytest.warns(LangGraphDeprecatedSinceV05, match="Please use `retry_policy`"):
        g.add_node("n", lambda s: s, retry=policy)
    assert g.nodes["n"].retry_policy is policy
    with pytest.raises(TypeError, match="bogus"):
        g.add_node("m", lambda s: s, bogus=1)
    with pytest.raises(TypeError, match="bogus"):
        StateGraph(S, bogus=1)


def test_functional_api_keywords() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV05, match="Please use `retry_policy`"):

        @task(retry=RetryPolicy())
        def t(x: int) -> int:
            return x

    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_schema` is deprecated"):

        @entrypoint(config_schema=S)
        def wf(x: int) -> int:
            return x

    assert wf.context_schema is S
    with pytest.warns(LangGraphDeprecatedSinceV10, match="get_context_jsonschema"):
        model = wf.config_schema()
    assert model.__name__ == "LangGraphConfig"
    assert model.model_fields["configurable"].annotation is S
    with pytest.warns(LangGraphDeprecatedSinceV10, match="get_context_jsonschema"):
        schema = wf.get_config_jsonschema()
    assert schema["properties"]["configurable"]["$ref"] == "#/$defs/S"
    assert schema["$defs"]["S"]["properties"] == wf.get_context_jsonschema()["properties"]
    with pytest.raises(TypeError, match="nope"):
        task(nope=True)


def test_pregel_config_type() -> None:
    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`config_type` is deprecated"):
        p = Pregel(nodes={"n": node}, channels={"a": LastValue(int), "b": LastValue(int)},
                   input_channels="a", output_channels="b", config_type=S)
    assert p.context_schema is S
    with pytest.raises(TypeError, match="wrong"):
        Pregel(nodes={"n": node}, channels={"a": LastValue(int), "b": LastValue(int)},
               input_channels="a", output_channels="b", wrong=1)


def test_checkpoint_during_maps_to_durability() -> None:
    seen: list[str] = []

    def node(state: S, config) -> S:
        seen.append(config["configurable"]["__pregel_durability"])
        return {"x": 1}

    app = StateGraph(S).add_node("n", node).add_edge(START, "n").compile()
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`checkpoint_during` is deprecated"):
        app.invoke({}, checkpoint_during=False)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`checkpoint_during` is deprecated"):
        list(app.stream({}, checkpoint_during=True))
    assert seen == ["exit", "async"]
    with pytest.raises(TypeError, match="durabilty"):
        app.invoke({}, durabilty="exit")


def test_moved_names() -> None:
    import stepgraph.constants as constants

    with pytest.warns(LangGraphDeprecatedSinceV10, match="from langgraph.types import Send"):
        from stepgraph.constants import Send  # noqa: F401
    with pytest.warns(LangGraphDeprecatedSinceV10, match="now private"):
        assert constants.PREVIOUS == "__previous__"
    with pytest.raises(AttributeError):
        _ = constants.NOT_A_CONSTANT
    sys.modules.pop("stepgraph.pregel.types", None)
    with pytest.warns(LangGraphDeprecatedSinceV10, match="langgraph.pregel.types"):
        mod = importlib.import_module("stepgraph.pregel.types")
    from stepgraph.types import StateSnapshot

    assert mod.StateSnapshot is StateSnapshot


def test_old_objects() -> None:
    with pytest.warns(LangGraphDeprecatedSinceV10, match="`interrupt_id` is deprecated"):
        assert Interrupt("q", id="abc").interrupt_id == "abc"
    with pytest.warns(LangGraphDeprecatedSinceV10, match="NodeInterrupt is deprecated"):
        exc = NodeInterrupt("q")
    assert exc.interrupts[0].value == "q"
    with pytest.warns(LangGraphDeprecatedSinceV10, match="MessageGraph is deprecated"):
        g = MessageGraph()
    g.add_node("a", lambda msgs: [{"role": "ai", "content": "hi", "id": "2"}])
    g.add_edge(START, "a")
    out = g.compile().invoke([{"role": "user", "content": "x", "id": "1"}])
    assert [getattr(m, "content", None) or m["content"] for m in out] == ["x", "hi"]


def test_graph_output_mapping_access() -> None:
    interrupts = (Interrupt("q", id="i"),)
    out = GraphOutput(value={"a": 1}, interrupts=interrupts)
    with pytest.warns(LangGraphDeprecatedSinceV11, match=r"via `result\[key\]`"):
        assert out["a"] == 1
    with pytest.warns(LangGraphDeprecatedSinceV11, match=r"via `result\[key\]`"):
        assert out["__interrupt__"] == interrupts
    with pytest.warns(LangGraphDeprecatedSinceV11, match="via `key in result`"):
        assert "a" in out and "__interrupt__" in out
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert out.value == {"a": 1}


def test_config_parameter_typing() -> None:
    g = StateGraph(S)

    def wrong(state: S, config: dict) -> S:
        return state

    with pytest.warns(UserWarning, match="should be typed as 'RunnableConfig'") as caught:
        g.add_node(wrong)
    assert caught[0].filename == __file__  # points at the user's add_node call
    # the same function added again (its signature is read once) warns again
    with pytest.warns(UserWarning, match="should be typed as 'RunnableConfig'") as caught:
        g.add_node("again", wrong)
    assert caught[0].filename == __file__
    from stepgraph.config import RunnableConfig

    def right(state: S, config: RunnableConfig) -> S:
        return state

    def optional(state: S, config: RunnableConfig | None = None) -> S:
        return state

    def untyped(state: S, config) -> S:  # type: ignore[no-untyped-def]
        return state

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for fn in (right, optional, untyped):
            g.add_node(fn)
