"""Send: map-reduce fan-out from conditional edges."""

import operator
from typing import Annotated

from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Send


class Overall(TypedDict):
    subjects: list
    jokes: Annotated[list, operator.add]


def _map_reduce(subjects_to_sends, worker):
    g = StateGraph(Overall)
    g.add_node("prepare", lambda s: {"jokes": []})
    g.add_node("worker", worker)
    g.add_node("collect", lambda s: {"jokes": [f"total={len(s['jokes'])}"]})
    g.add_edge(START, "prepare")
    g.add_conditional_edges("prepare", subjects_to_sends, ["worker"])
    g.add_edge("worker", "collect")
    g.add_edge("collect", END)
    return g.compile()


def test_map_reduce_order_follows_send_order(driver):
    """Reduced results follow the order of the Send list, not finishing order."""
    import time

    def worker(arg: dict) -> dict:
        time.sleep(0.01 * (3 - len(arg["subject"]) % 3))
        return {"jokes": [f"joke about {arg['subject']}"]}

    app = _map_reduce(
        lambda s: [Send("worker", {"subject": x}) for x in s["subjects"]], worker
    )
    out = driver.invoke(app, {"subjects": ["cats", "dogs", "ox", "emu"]})
    assert out == {
        "subjects": ["cats", "dogs", "ox", "emu"],
        "jokes": [
            "joke about cats",
            "joke about dogs",
            "joke about ox",
            "joke about emu",
            "total=4",
        ],
    }


def test_send_arg_is_delivered_as_is(driver):
    """The Send argument reaches the node unchanged, even when it is not the state type."""
    seen = []

    class Payload:
        def __init__(self, n):
            self.n = n

    objs = [Payload(1), Payload(2)]

    def worker(arg) -> dict:
        seen.append(arg)
        return {"jokes": [arg.n]}

    app = _map_reduce(lambda s: [Send("worker", o) for o in objs], worker)
    out = driver.invoke(app, {"subjects": []})
    assert out == {"subjects": [], "jokes": [1, 2, "total=2"]}
    assert seen == objs
    assert seen[0] is objs[0]


def test_send_scalar_and_dict_args(driver):
    """A Send may carry a scalar, and a dict arg is not merged with the state."""
    seen = []

    def worker(arg) -> dict:
        seen.append(arg)
        return {"jokes": [repr(arg)]}

    app = _map_reduce(lambda s: [Send("worker", 7), Send("worker", {"only": "this"})], worker)
    out = driver.invoke(app, {"subjects": ["x"]})
    assert out["jokes"] == ["7", "{'only': 'this'}", "total=2"]
    assert seen == [7, {"only": "this"}]


def test_push_and_pull_same_node_same_step(driver):
    """A node triggered by an edge and by a Send in the same step runs twice."""

    class S(TypedDict):
        items: Annotated[list, operator.add]

    seen = []

    def b(state) -> dict:
        seen.append(state)
        return {"items": ["b"]}

    g = StateGraph(S)
    g.add_node("a", lambda s: {"items": ["a"]})
    g.add_node("b", b)
    g.add_edge(START, "a")
    g.add_edge("a", "b")
    g.add_conditional_edges("a", lambda s: [Send("b", {"items": ["sent"]})], ["b"])
    out = driver.invoke(g.compile(), {"items": []})
    assert out == {"items": ["a", "b", "b"]}
    assert sorted(map(repr, seen)) == sorted(map(repr, [{"items": ["a"]}, {"items": ["sent"]}]))


def test_send_updates_stream_per_task(driver):
    """Each Send task reports its own update in the updates stream."""

    def worker(arg: dict) -> dict:
        return {"jokes": [arg["subject"]]}

    app = _map_reduce(lambda s: [Send("worker", {"subject": x}) for x in s["subjects"]], worker)
    chunks = driver.stream(app, {"subjects": ["a", "b"]}, stream_mode="updates")
    assert chunks == [
        {"prepare": {"jokes": []}},
        {"worker": {"jokes": ["a"]}},
        {"worker": {"jokes": ["b"]}},
        {"collect": {"jokes": ["total=2"]}},
    ]


def test_thousand_sends(driver):
    """1000 Sends fan out and reduce in send order."""

    def worker(arg: int) -> dict:
        return {"jokes": [arg * 2]}

    app = _map_reduce(lambda s: [Send("worker", i) for i in range(1000)], worker)
    out = driver.invoke(app, {"subjects": []})
    assert out["jokes"][:-1] == [i * 2 for i in range(1000)]
    assert out["jokes"][-1] == "total=1000"


def test_send_from_start(driver):
    """Sends can be returned by a conditional entry point."""

    class S(TypedDict):
        got: Annotated[list, operator.add]

    g = StateGraph(S)
    g.add_node("w", lambda x: {"got": [x]})
    g.add_conditional_edges(START, lambda s: [Send("w", 1), Send("w", 2)], ["w"])
    assert driver.invoke(g.compile(), {"got": []}) == {"got": [1, 2]}


def test_send_to_node_that_loops_with_sends(driver):
    """A worker's own conditional edge can Send again (nested map)."""

    class S(TypedDict):
        got: Annotated[list, operator.add]

    def split(arg) -> dict:
        return {"got": [f"split{arg}"]}

    def route(state):
        return [Send("leaf", n) for n in range(2)]

    g = StateGraph(S)
    g.add_node("split", split)
    g.add_node("leaf", lambda n: {"got": [f"leaf{n}"]})
    g.add_conditional_edges(START, lambda s: [Send("split", 1), Send("split", 2)], ["split"])
    g.add_conditional_edges("split", route, ["leaf"])
    out = driver.invoke(g.compile(), {"got": []})
    assert out == {"got": ["split1", "split2", "leaf0", "leaf1", "leaf0", "leaf1"]}


def test_empty_send_list_ends(driver):
    """A router returning no Sends just ends that branch."""
    app = _map_reduce(lambda s: [], lambda a: {"jokes": ["never"]})
    assert driver.invoke(app, {"subjects": []}) == {"subjects": [], "jokes": []}


def test_send_repr_and_equality():
    """Send compares by node and arg and has a readable repr."""
    assert Send("a", {"x": 1}) == Send("a", {"x": 1})
    assert Send("a", 1) != Send("b", 1)
    assert repr(Send("a", 1)) == "Send(node='a', arg=1)"
