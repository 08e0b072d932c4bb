"""stepgraph's intentional differences: mistakes LangGraph ignores silently raise coded errors.

Not compared with LangGraph (which logs and carries on, or raises a bare KeyError).
"""

import re

import pytest
from typing_extensions import TypedDict

from stepgraph.errors import InvalidUpdateError, StepgraphError
from stepgraph.graph import START, StateGraph
from stepgraph.types import Command, Send

pytestmark = pytest.mark.stepgraph_only


class S(TypedDict):
    n: int


def _graph(node, *, router=None, path_map=None, extra=()):
    g = StateGraph(S)
    g.add_node("a", node)
    for name in extra:
        g.add_node(name, lambda s: None)
    g.add_edge(START, "a")
    if router is not None:
        if path_map is None:
            g.add_conditional_edges("a", router)
        else:
            g.add_conditional_edges("a", router, path_map)
    return g.compile()


def _raise(driver, app) -> InvalidUpdateError:
    with pytest.raises(InvalidUpdateError) as info:
        driver.invoke(app, {"n": 0})
    err = info.value
    assert isinstance(err, StepgraphError)
    assert err.code.startswith("SG")
    assert re.fullmatch(r"SG\d{3}", err.code)
    return err


def _assert_names(err, *fragments):
    msg = str(err)
    for fragment in fragments:
        assert fragment in msg, (fragment, msg)


def test_send_to_unknown_node(driver):
    """A router's Send to a node that does not exist raises, naming node, target and step."""
    app = _graph(lambda s: {"n": 1}, router=lambda s: [Send("ghost", 1)], extra=("w",))
    err = _raise(driver, app)
    _assert_names(err, "'a'", "'ghost'", "step 1")
    assert str(err).startswith(f"[{err.code}]")


def test_command_goto_unknown_node(driver):
    """Command(goto="nowhere") from a node raises, naming node, target and step."""
    err = _raise(driver, _graph(lambda s: Command(goto="nowhere")))
    _assert_names(err, "'a'", "'nowhere'", "step 1")


def test_command_goto_send_unknown_node(driver):
    """Command(goto=Send("ghost", ...)) from a node raises too."""
    err = _raise(driver, _graph(lambda s: Command(goto=Send("ghost", {}))))
    _assert_names(err, "'a'", "'ghost'", "step 1")


def test_router_returns_unknown_node_without_path_map(driver):
    """A router without path_map returning an unknown name raises, naming node, target and step."""
    err = _raise(driver, _graph(lambda s: {"n": 1}, router=lambda s: "missing"))
    _assert_names(err, "'a'", "'missing'", "step 1")


def test_node_returns_unknown_state_key(driver):
    """A node returning a key the state lacks raises, naming node, key and step."""
    err = _raise(driver, _graph(lambda s: {"n": 1, "bogus": 2}))
    _assert_names(err, "'a'", "'bogus'", "step 1")


def test_unknown_key_in_later_step_names_that_step(driver):
    """The step number in the message is the step the bad write happened in."""
    g = StateGraph(S)
    g.add_node("first", lambda s: {"n": 1})
    g.add_node("second", lambda s: {"oops": 1})
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    err = _raise(driver, g.compile())
    _assert_names(err, "'second'", "'oops'", "step 2")


def test_node_returns_int(driver):
    """A node returning an int raises InvalidUpdateError("Expected dict, ...")."""
    err = _raise(driver, _graph(lambda s: 42))
    _assert_names(err, "Expected dict", "42", "'a'")


def test_path_map_miss_is_invalid_update_and_key_error(driver):
    """A router result missing from its path_map raises an InvalidUpdateError that is a KeyError."""
    app = _graph(lambda s: {"n": 1}, router=lambda s: "x", path_map={"y": "b"}, extra=("b",))
    with pytest.raises(KeyError) as info:
        driver.invoke(app, {"n": 0})
    err = info.value
    assert isinstance(err, InvalidUpdateError)
    assert err.code.startswith("SG")
    _assert_names(err, "'a'", "'x'", "step 1")


def test_error_has_task_note(driver):
    """These errors carry the usual 'During task with name' note."""
    err = _raise(driver, _graph(lambda s: {"bogus": 1}))
    assert any("During task with name 'a'" in n for n in err.__notes__)


def test_errors_raise_from_stream_too(driver):
    """The same error surfaces when streaming, after the earlier steps were yielded."""
    g = StateGraph(S)
    g.add_node("first", lambda s: {"n": 1})
    g.add_node("second", lambda s: Command(goto="nowhere"))
    g.add_edge(START, "first")
    g.add_edge("first", "second")
    chunks, err = driver.stream_partial(g.compile(), {"n": 0}, stream_mode="updates")
    assert chunks == [{"first": {"n": 1}}]
    assert isinstance(err, InvalidUpdateError)
    assert err.code.startswith("SG")


def test_compile_error_codes():
    """Edge and entrypoint mistakes at compile time are ValueErrors with an SG1xx code."""

    def check(build):
        with pytest.raises(ValueError) as info:
            build()
        assert isinstance(info.value, StepgraphError)
        assert re.fullmatch(r"SG1\d\d", info.value.code)

    def unknown_target():
        g = StateGraph(S)
        g.add_node("a", lambda s: None)
        g.add_edge(START, "a")
        g.add_edge("a", "zzz")
        g.compile()

    def no_entry():
        g = StateGraph(S)
        g.add_node("a", lambda s: None)
        g.compile()

    def bad_path_map_target():
        g = StateGraph(S)
        g.add_node("a", lambda s: None)
        g.add_edge(START, "a")
        g.add_conditional_edges("a", lambda s: "x", {"x": "nope"})
        g.compile()

    for build in (unknown_target, no_entry, bad_path_map_target):
        check(build)
