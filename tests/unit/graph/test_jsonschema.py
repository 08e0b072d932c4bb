"""JSON schemas of a graph's input and output (``get_input_jsonschema`` / ``get_output_jsonschema``)."""

from dataclasses import dataclass, field
from typing import Annotated, NotRequired

from typing_extensions import TypedDict

from stepgraph.graph import START, StateGraph


def _compiled(schema):
    builder = StateGraph(schema)
    builder.add_node("n", lambda s: s)
    builder.add_edge(START, "n")
    return builder.compile()


def test_dataclass_fields_without_default_are_required_unless_optional():
    @dataclass
    class State:
        a: str
        b: int | None
        c: Annotated[float | None, "meta"]
        d: str | None = None
        e: list[int] = field(default_factory=list)
        f: str = field(default=...)
        g: Annotated[int, "meta"] = 42

    graph = _compiled(State)
    for schema in (graph.get_input_jsonschema(), graph.get_output_jsonschema()):
        assert schema["required"] == ["a", "f"]
        assert set(schema["properties"]) == set("abcdefg")


def test_typed_dict_required_keys():
    class State(TypedDict):
        a: str
        b: NotRequired[int]

    schema = _compiled(State).get_input_jsonschema()
    assert schema["required"] == ["a"]
    assert set(schema["properties"]) == {"a", "b"}
