"""Command: update + goto from nodes, goto lists and Sends, and Command as graph input."""

import operator
from typing import Annotated, Literal

from typing_extensions import TypedDict

from stepgraph.graph import END, START, StateGraph
from stepgraph.types import Command, Send


class S(TypedDict):
    n: int
    trail: Annotated[list, operator.add]


def _mark(name):
    def node(state: S) -> dict:
        return {"trail": [name]}

    return node


def test_command_update_and_goto(driver):
    """Command(update=..., goto=...) writes the update and routes to goto."""

    def decide(state: S) -> Command[Literal["yes", "no"]]:
        target = "yes" if state["n"] > 0 else "no"
        return Command(update={"n": state["n"] * 10, "trail": ["decide"]}, goto=target)

    g = StateGraph(S)
    g.add_node("decide", decide)
    g.add_node("yes", _mark("yes"))
    g.add_node("no", _mark("no"))
    g.add_edge(START, "decide")
    app = g.compile()
    assert driver.invoke(app, {"n": 2}) == {"n": 20, "trail": ["decide", "yes"]}
    assert driver.invoke(app, {"n": 0}) == {"n": 0, "trail": ["decide", "no"]}


def test_command_goto_list(driver):
    """goto=[a, b] runs both in the next step."""
    g = StateGraph(S)
    g.add_node("start", lambda s: Command(goto=["a", "b"]))
    g.add_node("a", _mark("a"))
    g.add_node("b", _mark("b"))
    g.add_edge(START, "start")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 0, "trail": ["a", "b"]}


def test_command_goto_send(driver):
    """goto may hold Sends, each delivering its own argument."""
    seen = []

    def worker(arg) -> dict:
        seen.append(arg)
        return {"trail": [arg["v"]]}

    g = StateGraph(S)
    g.add_node(
        "start",
        lambda s: Command(update={"n": 1}, goto=[Send("worker", {"v": "x"}), Send("worker", {"v": "y"})]),
    )
    g.add_node("worker", worker)
    g.add_edge(START, "start")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 1, "trail": ["x", "y"]}
    assert seen == [{"v": "x"}, {"v": "y"}] or seen == [{"v": "y"}, {"v": "x"}]


def test_command_with_static_edge_both_fire(driver):
    """A node with a static edge that returns Command(goto=...) triggers both targets."""
    g = StateGraph(S)
    g.add_node("start", lambda s: Command(update={"trail": ["start"]}, goto="by_command"))
    g.add_node("by_edge", _mark("by_edge"))
    g.add_node("by_command", _mark("by_command"))
    g.add_edge(START, "start")
    g.add_edge("start", "by_edge")
    out = driver.invoke(g.compile(), {"n": 0})
    assert out == {"n": 0, "trail": ["start", "by_command", "by_edge"]}


def test_list_of_commands(driver):
    """A node may return a list of Commands; all updates and gotos apply."""
    g = StateGraph(S)
    g.add_node(
        "start",
        lambda s: [
            Command(update={"trail": ["one"]}, goto="a"),
            Command(update={"n": 5, "trail": ["two"]}, goto="b"),
        ],
    )
    g.add_node("a", _mark("a"))
    g.add_node("b", _mark("b"))
    g.add_edge(START, "start")
    out = driver.invoke(g.compile(), {"n": 0})
    assert out == {"n": 5, "trail": ["one", "two", "a", "b"]}


def test_command_goto_end(driver):
    """Command(goto=END) ends the run after applying the update."""
    g = StateGraph(S)
    g.add_node("start", lambda s: Command(update={"trail": ["bye"]}, goto=END))
    g.add_edge(START, "start")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 0, "trail": ["bye"]}


def test_command_loop(driver):
    """A node can loop to itself with Command until done."""

    def count(state: S) -> Command:
        if state["n"] >= 3:
            return Command(goto=END)
        return Command(update={"n": state["n"] + 1, "trail": [state["n"]]}, goto="count")

    g = StateGraph(S)
    g.add_node("count", count)
    g.add_edge(START, "count")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 3, "trail": [0, 1, 2]}


def test_command_updates_stream(driver):
    """The updates stream shows a Command's update under its node's name."""
    g = StateGraph(S)
    g.add_node("start", lambda s: Command(update={"n": 9}, goto="a"))
    g.add_node("a", _mark("a"))
    g.add_edge(START, "start")
    chunks = driver.stream(g.compile(), {"n": 0}, stream_mode="updates")
    assert chunks == [{"start": {"n": 9}}, {"a": {"trail": ["a"]}}]


def test_command_update_as_list_of_tuples(driver):
    """Command(update=[(key, value), ...]) writes each pair."""
    g = StateGraph(S)
    g.add_node("start", lambda s: Command(update=[("trail", ["x"]), ("trail", ["y"]), ("n", 4)]))
    g.add_edge(START, "start")
    assert driver.invoke(g.compile(), {"n": 0}) == {"n": 4, "trail": ["x", "y"]}


CMD_INPUT_BUG = (
    "stepgraph bug: a Command input on a new run does not fire START's own edges "
    "(only goto runs; update-only runs nothing); LangGraph runs START's edges too"
)


def _start_to_a():
    g = StateGraph(S)
    g.add_node("a", _mark("a"))
    g.add_node("b", lambda s: {"trail": [f"b saw n={s.get('n')}"]})
    g.add_edge(START, "a")
    return g.compile()


def test_command_as_input_on_new_run_goto(driver):
    """Command(goto="b") as a new run's input runs b alongside START's own edge to a."""
    assert driver.invoke(_start_to_a(), Command(goto="b")) == {"trail": ["a", "b saw n=None"]}


def test_command_as_input_on_new_run_update_and_goto(driver):
    """Command(update=..., goto=...) as input writes the update before a and b run."""
    out = driver.invoke(_start_to_a(), Command(update={"n": 3}, goto="b"))
    assert out == {"n": 3, "trail": ["a", "b saw n=3"]}


def test_command_as_input_update_only(driver):
    """Command(update=...) alone acts as the input: START's edges run."""
    assert driver.invoke(_start_to_a(), Command(update={"n": 3})) == {"n": 3, "trail": ["a"]}


def test_command_as_input_stream(driver):
    """Streaming a Command input: values starts with the update, a and b share step 1."""
    app = _start_to_a()
    cmd = Command(update={"n": 3}, goto="b")
    assert driver.stream(app, cmd, stream_mode="updates") == [
        {"a": {"trail": ["a"]}},
        {"b": {"trail": ["b saw n=3"]}},
    ]
    assert driver.stream(app, cmd, stream_mode="values") == [
        {"n": 3, "trail": []},
        {"n": 3, "trail": ["a", "b saw n=3"]},
    ]


def test_command_repr():
    """Command has a readable repr that omits unset fields."""
    assert repr(Command(goto="a")) == "Command(goto='a')"
    assert repr(Command(update={"x": 1}, goto=["a"])) == "Command(update={'x': 1}, goto=['a'])"
