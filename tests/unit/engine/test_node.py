"""``PregelNode``: copies of compiled nodes."""

import pytest

from stepgraph.graph import START, StateGraph
from stepgraph.pregel import PregelNode


def _graph():
    g = StateGraph(dict)
    g.add_node("agent", lambda s: s)
    g.add_edge(START, "agent")
    return g.compile()


def test_copy_takes_an_update_dict_like_langgraph():
    node = _graph().nodes["agent"]
    same = node.copy({})
    assert isinstance(same, PregelNode) and same is not node
    assert same.triggers == node.triggers and same.writers == node.writers
    tagged = node.copy({"tags": ["x"]})
    assert tagged.tags == ["x"] and node.tags != ["x"]
    assert node.copy(metadata={"k": 1}).metadata == {"k": 1}


def test_copy_refuses_unknown_attributes():
    with pytest.raises(TypeError, match="nope"):
        _graph().nodes["agent"].copy({"nope": 1})
