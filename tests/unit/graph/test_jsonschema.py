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


def test_dataclass_state_schema_shows_defaults_and_channel_types():
    import operator

    @dataclass
    class State:
        name: str
        items: Annotated[list[int], operator.add] = field(default_factory=list)
        note: str | None = None

    schema = _compiled(State).get_input_jsonschema()
    assert schema["title"] == "LangGraphInput"  # a model of the keys, named after the graph
    assert schema["required"] == ["name"]
    assert schema["properties"]["items"] == {
        "title": "Items", "type": "array", "items": {"type": "integer"}, "default": [],
    }
    assert schema["properties"]["note"]["default"] is None


def test_typed_dict_schema_is_pydantics():
    """The keys come in pydantic's order, so a dumped schema reads as LangGraph's does."""
    import json

    class State(TypedDict, total=False):
        a: str
        steps: Annotated[list[str], lambda x, y: x + y]

    assert json.dumps(_compiled(State).get_output_jsonschema()) == (
        '{"properties": {"a": {"title": "A", "type": "string"}, "steps": {"items": '
        '{"type": "string"}, "title": "Steps", "type": "array"}}, "title": "State", '
        '"type": "object"}'
    )
