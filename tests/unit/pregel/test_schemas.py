"""Input/output/context schemas of low-level ``Pregel`` graphs and ``@entrypoint`` workflows."""

from dataclasses import dataclass, field
from typing import Any

import pytest
from typing_extensions import TypedDict

from stepgraph.channels import EphemeralValue, LastValue
from stepgraph.func import entrypoint
from stepgraph.pregel import NodeBuilder, Pregel


def _app(input_channels, output_channels, **kwargs):
    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("b")
    return Pregel(
        nodes={"n": node},
        channels={"a": LastValue(int), "b": LastValue(str), "c": EphemeralValue(float)},
        input_channels=input_channels,
        output_channels=output_channels,
        **kwargs,
    )


def test_one_channel_gives_a_root_model_of_its_type():
    app = _app("a", "b")
    assert app.input_schema.model_json_schema() == {"title": "LangGraphInput", "type": "integer"}
    assert app.output_schema.model_json_schema() == {"title": "LangGraphOutput", "type": "string"}
    assert app.get_input_jsonschema() == app.input_schema.model_json_schema()
    assert app.input_schema.model_validate(3).root == 3


def test_channel_lists_give_models_with_optional_fields():
    app = _app(["a", "c"], ["b"])
    assert app.get_input_jsonschema() == {
        "title": "LangGraphInput",
        "type": "object",
        "properties": {
            "a": {"title": "A", "type": "integer", "default": None},
            "c": {"title": "C", "type": "number", "default": None},
        },
    }
    assert app.get_output_jsonschema()["properties"] == {
        "b": {"title": "B", "type": "string", "default": None}
    }


def test_schema_names_follow_the_graph_name():
    app = _app("a", ["b"], name="adder")
    assert app.get_input_jsonschema()["title"] == "adder_input"
    assert _app("a", "b", name="Adder").get_output_jsonschema()["title"] == "AdderOutput"


def test_reserved_channel_names_keep_their_key():
    node = NodeBuilder().subscribe_only("a").do(lambda x: x).write_to("schema")
    app = Pregel(nodes={"n": node}, channels={"a": LastValue(int), "schema": LastValue(int)},
                 input_channels="a", output_channels=["schema"])
    assert list(app.get_output_jsonschema()["properties"]) == ["schema"]


def test_context_schema_of_a_dataclass_shows_defaults():
    @dataclass
    class Ctx:
        x: int
        y: str = field(default="foo")

    app = _app("a", "b", context_schema=Ctx)
    assert app.get_context_jsonschema() == {
        "title": "Ctx",
        "type": "object",
        "properties": {
            "x": {"title": "X", "type": "integer"},
            "y": {"title": "Y", "type": "string", "default": "foo"},
        },
        "required": ["x"],
    }
    assert _app("a", "b").get_context_jsonschema() is None


def test_deprecated_config_schema_nests_the_context_under_configurable():
    class Ctx(TypedDict):
        model: str

    app = _app("a", "b", context_schema=Ctx)
    with pytest.warns(DeprecationWarning):
        schema = app.get_config_jsonschema()
    assert schema["title"] == "LangGraphConfig"
    assert schema["$defs"]["Ctx"]["properties"] == {"model": {"title": "Model", "type": "string"}}
    with pytest.warns(DeprecationWarning):
        with_tags = app.get_config_jsonschema(include=["tags"])
    assert set(with_tags["properties"]) == {"configurable", "tags"}


def test_entrypoint_schemas_come_from_its_annotations():
    @entrypoint()
    def typed(xs: list[int]) -> list[str]:
        return [str(x) for x in xs]

    assert typed.get_input_jsonschema() == {
        "title": "LangGraphInput", "type": "array", "items": {"type": "integer"},
    }
    assert typed.get_output_jsonschema() == {
        "title": "LangGraphOutput", "type": "array", "items": {"type": "string"},
    }

    @entrypoint()
    def untyped(x):
        return x

    assert untyped.get_input_jsonschema() == {"title": "LangGraphInput"}
    assert untyped.get_output_jsonschema() == {"title": "LangGraphOutput"}


def test_entrypoint_final_gives_the_returned_type():
    @entrypoint()
    def saves(x: str, *, previous: Any = None) -> entrypoint.final[int, list[str]]:
        return entrypoint.final(value=1, save=[x])

    assert saves.get_output_jsonschema() == {"title": "LangGraphOutput", "type": "integer"}

    @entrypoint()
    def bare(x: str, *, previous: Any = None) -> entrypoint.final:
        return entrypoint.final(value=1, save=[x])

    assert bare.get_output_jsonschema() == {"title": "LangGraphOutput"}
    assert saves.invoke("a") == 1
