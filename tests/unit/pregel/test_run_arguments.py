"""Run-method arguments: every one LangGraph takes does something, any other is refused
with a coded ``UnsupportedArgumentError`` (SG311 unknown keyword, SG312 bad value)."""

from __future__ import annotations

import operator
from typing import Annotated, Any, TypedDict

import pytest

from stepgraph.errors import UnsupportedArgumentError
from stepgraph.graph import START, StateGraph


class State(TypedDict):
    x: int
    log: Annotated[list[str], operator.add]


def _graph(**compile_kwargs: Any) -> Any:
    def inc(state: State) -> dict[str, Any]:
        if state["x"] < 0:
            raise ValueError("negative")
        return {"x": state["x"] + 1, "log": ["inc"]}

    return StateGraph(State).add_node("inc", inc).add_edge(START, "inc").compile(**compile_kwargs)


@pytest.mark.parametrize("method", ["invoke", "stream"])
def test_unknown_keyword_argument_is_refused_with_sg311(method: str) -> None:
    graph = _graph()
    with pytest.raises(UnsupportedArgumentError) as info:
        result = getattr(graph, method)({"x": 1}, colour="red")
        list(result)
    assert info.value.code == "SG311"
    assert isinstance(info.value, TypeError)
    assert "colour" in str(info.value)


async def test_async_twins_refuse_unknown_keyword_arguments() -> None:
    graph = _graph()
    with pytest.raises(UnsupportedArgumentError, match="SG311"):
        await graph.ainvoke({"x": 1}, colour="red")
    with pytest.raises(UnsupportedArgumentError, match="SG311"):
        async for _ in graph.astream({"x": 1}, colour="red"):
            pass
    with pytest.raises(UnsupportedArgumentError, match="SG311"):
        async for _ in graph.astream_events({"x": 1}, colour="red"):
            pass


def test_stream_events_and_compile_refuse_unknown_keyword_arguments() -> None:
    with pytest.raises(UnsupportedArgumentError, match="SG311"):
        list(_graph().stream_events({"x": 1}, colour="red"))
    with pytest.raises(UnsupportedArgumentError, match="SG311") as info:
        _graph(checkpointr=None)
    assert "checkpointr" in str(info.value)


@pytest.mark.parametrize(("kwargs", "word"), [
    ({"version": "v3"}, "version"), ({"durability": "never"}, "durability"),
])
def test_unsupported_values_are_refused_with_sg312(kwargs: dict[str, Any], word: str) -> None:
    with pytest.raises(UnsupportedArgumentError) as info:
        _graph().invoke({"x": 1}, **kwargs)
    assert info.value.code == "SG312" and word in str(info.value)


def test_checkpoint_during_is_still_mapped_with_a_warning() -> None:
    with pytest.warns(Warning, match="checkpoint_during"):
        assert _graph().invoke({"x": 1, "log": []}, checkpoint_during=False)["x"] == 2


def test_print_mode_prints_parts_without_yielding_them(capsys: pytest.CaptureFixture[str]) -> None:
    graph = _graph()
    parts = list(graph.stream({"x": 1, "log": []}, stream_mode="values", print_mode="updates"))
    assert parts == [{"x": 1, "log": []}, {"x": 2, "log": ["inc"]}]
    out = capsys.readouterr().out
    assert "[updates]" in out and "{'inc': {'x': 2, 'log': ['inc']}}" in out
    assert "[values]" not in out


def test_invoke_print_mode_and_debug_print(capsys: pytest.CaptureFixture[str]) -> None:
    assert _graph().invoke({"x": 1, "log": []}, print_mode=["values"]) == {"x": 2, "log": ["inc"]}
    out = capsys.readouterr().out
    assert out.count("[values]") == 2 and "[updates]" not in out
    _graph().invoke({"x": 1, "log": []}, debug=True)
    out = capsys.readouterr().out
    assert "[values]" in out and "[updates]" in out
    _graph(debug=True).invoke({"x": 1, "log": []})
    assert "[updates]" in capsys.readouterr().out
    _graph(debug=True).invoke({"x": 1, "log": []}, debug=False)
    assert capsys.readouterr().out == ""


def test_bad_print_mode_is_refused() -> None:
    with pytest.raises(ValueError, match="Unknown stream mode"):
        _graph().invoke({"x": 1}, print_mode="valuez")


def test_batch_return_exceptions() -> None:
    graph = _graph()
    out = graph.batch([{"x": 1, "log": []}, {"x": -5, "log": []}], return_exceptions=True)
    assert out[0] == {"x": 2, "log": ["inc"]} and isinstance(out[1], ValueError)
    with pytest.raises(ValueError, match="negative"):
        graph.batch([{"x": -5, "log": []}])


async def test_abatch_return_exceptions() -> None:
    out = await _graph().abatch([{"x": -5, "log": []}, {"x": 1, "log": []}], return_exceptions=True)
    assert isinstance(out[0], ValueError) and out[1] == {"x": 2, "log": ["inc"]}
