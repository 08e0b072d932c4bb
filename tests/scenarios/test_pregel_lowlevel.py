"""The low-level Pregel API: NodeBuilder pipelines over explicit channels."""

import operator

import pytest

from stepgraph.channels import BinaryOperatorAggregate, EphemeralValue, LastValue, Topic
from stepgraph.errors import InvalidUpdateError
from stepgraph.pregel import NodeBuilder, Pregel

try:  # where LangGraph's docs import it from
    from stepgraph.pregel._write import ChannelWriteEntry
except ImportError:  # stepgraph exports it from stepgraph.pregel
    from stepgraph.pregel import ChannelWriteEntry


def _shout():
    return NodeBuilder().subscribe_only("a").do(lambda x: x.upper() + "!").write_to("b")


def test_single_node_ephemeral(driver):
    """subscribe_only("a").do(fn).write_to("b") maps input a to output b."""
    app = Pregel(
        nodes={"shout": _shout()},
        channels={"a": EphemeralValue(str), "b": EphemeralValue(str)},
        input_channels=["a"],
        output_channels=["b"],
    )
    assert driver.invoke(app, {"a": "hey"}) == {"b": "HEY!"}


def test_single_channel_input_and_output(driver):
    """With str input/output channels the raw value goes in and comes out."""
    app = Pregel(
        nodes={"shout": _shout()},
        channels={"a": EphemeralValue(str), "b": EphemeralValue(str)},
        input_channels="a",
        output_channels="b",
    )
    assert driver.invoke(app, "hey") == "HEY!"


def test_two_nodes_last_value_and_ephemeral(driver):
    """A LastValue channel keeps its value to the end; an ephemeral one keeps the last write."""
    first = NodeBuilder().subscribe_only("a").do(lambda x: x * 2).write_to("b")
    second = NodeBuilder().subscribe_only("b").do(lambda x: x + 1).write_to("c")
    app = Pregel(
        nodes={"first": first, "second": second},
        channels={"a": EphemeralValue(int), "b": LastValue(int), "c": EphemeralValue(int)},
        input_channels=["a"],
        output_channels=["b", "c"],
    )
    assert driver.invoke(app, {"a": 5}) == {"b": 10, "c": 11}


def test_topic_accumulate(driver):
    """A Topic(accumulate=True) collects every write across steps in order."""
    first = NodeBuilder().subscribe_only("a").do(lambda x: x + "1").write_to("b", "log")
    second = NodeBuilder().subscribe_to("b").do(lambda x: x["b"] + "2").write_to("log")
    app = Pregel(
        nodes={"first": first, "second": second},
        channels={
            "a": EphemeralValue(str),
            "b": EphemeralValue(str),
            "log": Topic(str, accumulate=True),
        },
        input_channels=["a"],
        output_channels=["log"],
    )
    assert driver.invoke(app, {"a": "x"}) == {"log": ["x1", "x12"]}


def test_topic_without_accumulate_keeps_last_step(driver):
    """A plain Topic holds only the values written in the latest step."""
    first = NodeBuilder().subscribe_only("a").do(lambda x: x + "1").write_to("b", "log")
    second = NodeBuilder().subscribe_to("b").do(lambda x: x["b"] + "2").write_to("log")
    app = Pregel(
        nodes={"first": first, "second": second},
        channels={"a": EphemeralValue(str), "b": EphemeralValue(str), "log": Topic(str)},
        input_channels=["a"],
        output_channels=["log"],
    )
    assert driver.invoke(app, {"a": "x"}) == {"log": ["x12"]}


def test_binary_operator_channel(driver):
    """A BinaryOperatorAggregate folds writes with its operator."""
    first = NodeBuilder().subscribe_only("a").do(lambda x: x * 10).write_to("b", "total")
    second = NodeBuilder().subscribe_only("b").do(lambda x: x + 1).write_to("total")
    app = Pregel(
        nodes={"first": first, "second": second},
        channels={
            "a": EphemeralValue(int),
            "b": EphemeralValue(int),
            "total": BinaryOperatorAggregate(int, operator.add),
        },
        input_channels=["a"],
        output_channels=["total"],
    )
    assert driver.invoke(app, {"a": 2}) == {"total": 41}


def _grow_cycle():
    grow = (
        NodeBuilder()
        .subscribe_only("value")
        .do(lambda x: x + x if len(x) < 6 else None)
        .write_to(ChannelWriteEntry("value", skip_none=True))
    )
    return Pregel(
        nodes={"grow": grow},
        channels={"value": EphemeralValue(str)},
        input_channels=["value"],
        output_channels=["value"],
    )


def test_cycle_with_skip_none(driver):
    """A node re-triggering itself stops once it writes None; the last value is the output."""
    assert driver.invoke(_grow_cycle(), {"value": "ab"}) == {"value": "abababab"}


def test_cycle_with_skip_none_streams(driver):
    """The same cycle streams one values chunk per writing step and a None update at the end."""
    chunks = driver.stream(_grow_cycle(), {"value": "ab"}, stream_mode=["values", "updates"])
    assert chunks == [
        ("updates", {"grow": {"value": "abab"}}),
        ("values", {"value": "abab"}),
        ("updates", {"grow": {"value": "abababab"}}),
        ("values", {"value": "abababab"}),
        ("updates", {"grow": None}),
    ]


def test_channel_write_entry_docs_import_path():
    """ChannelWriteEntry is importable from the module LangGraph's docs use."""
    import importlib

    mod = importlib.import_module(NodeBuilder.__module__.split(".")[0] + ".pregel._write")
    assert mod.ChannelWriteEntry is ChannelWriteEntry


def test_write_to_mapper(driver):
    """write_to(key=callable) writes the callable's result of the node output."""
    node = NodeBuilder().subscribe_only("a").do(lambda x: x * 3).write_to(tripled=lambda v: v, half=lambda v: v / 2)
    app = Pregel(
        nodes={"n": node},
        channels={"a": EphemeralValue(int), "tripled": LastValue(int), "half": LastValue(float)},
        input_channels=["a"],
        output_channels=["tripled", "half"],
    )
    assert driver.invoke(app, {"a": 4}) == {"tripled": 12, "half": 6.0}


def test_subscribe_to_several_channels(driver):
    """subscribe_to(x, y) gives the node a dict of both values."""
    seen = []

    def join(values):
        seen.append(values)
        return f"{values['x']}+{values['y']}"

    split = NodeBuilder().subscribe_only("a").do(lambda v: v).write_to("x", "y")
    both = NodeBuilder().subscribe_to("x", "y").do(join).write_to("out")
    app = Pregel(
        nodes={"split": split, "both": both},
        channels={
            "a": EphemeralValue(str),
            "x": LastValue(str),
            "y": LastValue(str),
            "out": LastValue(str),
        },
        input_channels=["a"],
        output_channels=["out"],
    )
    assert driver.invoke(app, {"a": "q"}) == {"out": "q+q"}
    assert seen == [{"x": "q", "y": "q"}]


def test_pregel_stream_values_and_updates(driver):
    """A Pregel graph streams values per step and updates per node."""
    first = NodeBuilder().subscribe_only("a").do(lambda x: x * 2).write_to("b")
    second = NodeBuilder().subscribe_only("b").do(lambda x: x + 1).write_to("c")
    app = Pregel(
        nodes={"first": first, "second": second},
        channels={"a": EphemeralValue(int), "b": LastValue(int), "c": LastValue(int)},
        input_channels=["a"],
        output_channels=["b", "c"],
    )
    assert driver.stream(app, {"a": 1}, stream_mode="values") == [{"b": 2}, {"b": 2, "c": 3}]
    assert driver.stream(app, {"a": 1}, stream_mode="updates") == [
        {"first": {"b": 2}},
        {"second": {"c": 3}},
    ]


def test_pregel_default_stream_mode_is_values(driver):
    """Pregel streams values when no stream_mode is given."""
    app = Pregel(
        nodes={"shout": _shout()},
        channels={"a": EphemeralValue(str), "b": EphemeralValue(str)},
        input_channels=["a"],
        output_channels=["b"],
    )
    assert driver.stream(app, {"a": "hi"}) == [{"b": "HI!"}]


def test_two_writers_to_last_value_in_one_step(driver):
    """Two nodes writing one LastValue channel in the same step raise InvalidUpdateError."""
    one = NodeBuilder().subscribe_only("a").do(lambda x: 1).write_to("b")
    two = NodeBuilder().subscribe_only("a").do(lambda x: 2).write_to("b")
    app = Pregel(
        nodes={"one": one, "two": two},
        channels={"a": EphemeralValue(int), "b": LastValue(int)},
        input_channels=["a"],
        output_channels=["b"],
    )
    with pytest.raises(InvalidUpdateError):
        driver.invoke(app, {"a": 0})


def test_pregel_chain_of_do_steps(driver):
    """Several .do() calls compose left to right."""
    node = NodeBuilder().subscribe_only("a").do(lambda x: x + 1).do(lambda x: x * 10).write_to("b")
    app = Pregel(
        nodes={"n": node},
        channels={"a": EphemeralValue(int), "b": LastValue(int)},
        input_channels="a",
        output_channels="b",
    )
    assert driver.invoke(app, 1) == 20


def test_mock_body_is_called_as_a_function(driver):
    """A callable that answers every attribute (a ``Mock``) is called, not ``invoke``d."""
    from unittest.mock import Mock

    add_one = Mock(side_effect=lambda x: x + 1)
    first = NodeBuilder().subscribe_only("a").do(add_one).write_to("b")
    second = NodeBuilder().subscribe_only("b").do(add_one).write_to("c")
    app = Pregel(
        nodes={"first": first, "second": second},
        channels={"a": LastValue(int), "b": LastValue(int), "c": LastValue(int)},
        input_channels="a",
        output_channels="c",
    )
    assert driver.invoke(app, 2) == 4
    assert [c.args for c in add_one.call_args_list] == [(2,), (3,)]


def test_object_with_invoke_methods_is_invoked(driver):
    """An object whose class has ``invoke``/``ainvoke`` is run through them."""

    class Doubler:
        def __call__(self, x):
            raise AssertionError("must be invoked, not called")

        def invoke(self, x, config=None):
            return x * 2

        async def ainvoke(self, x, config=None):
            return x * 2

    node = NodeBuilder().subscribe_only("a").do(Doubler()).write_to("b")
    app = Pregel(nodes={"n": node}, channels={"a": LastValue(int), "b": LastValue(int)},
                 input_channels="a", output_channels="b")
    assert driver.invoke(app, 4) == 8


def test_map_runs_a_graph_per_element(driver):
    """``Pregel.map()`` is a node body that runs the graph once per list element."""
    inner = Pregel(
        nodes={"inc": NodeBuilder().subscribe_only("x").do(lambda x: x + 1).write_to("y")},
        channels={"x": LastValue(int), "y": LastValue(int)},
        input_channels="x",
        output_channels="y",
    )
    outer = Pregel(
        nodes={
            "each": NodeBuilder().subscribe_only("xs").do(inner.map()).write_to("ys"),
            "total": NodeBuilder().subscribe_only("ys").do(sum).write_to("out"),
        },
        channels={"xs": LastValue(list), "ys": LastValue(list), "out": LastValue(int)},
        input_channels="xs",
        output_channels="out",
    )
    assert driver.invoke(outer, [1, 2, 3]) == 9
    assert inner.map().invoke([5, 6]) == [6, 7]
