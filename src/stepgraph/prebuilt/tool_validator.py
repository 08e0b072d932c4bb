"""``ValidationNode``: check the tool calls of the last ``AIMessage`` against schemas.

It does not run tools. Each call becomes a ``ToolMessage``: the validated arguments as JSON,
or the formatted error with ``additional_kwargs={"is_error": True}`` so the graph can route
back to the model.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, cast

from langchain_core.messages import AIMessage, ToolCall, ToolMessage
from langchain_core.runnables import Runnable, RunnableConfig
from langchain_core.runnables.config import ensure_config, get_executor_for_config
from langchain_core.tools import BaseTool, create_schema_from_function
from pydantic import BaseModel, ValidationError
from pydantic.v1 import BaseModel as BaseModelV1
from pydantic.v1 import ValidationError as ValidationErrorV1

__all__ = ["ValidationNode"]


def _default_format_error(error: BaseException, call: ToolCall, schema: Any) -> str:
    return f"{error!r}\n\nRespond after fixing all validation errors."


class ValidationNode(Runnable[Any, Any]):
    """Validate every tool call of the last ``AIMessage`` (a list or ``{"messages": ...}``).

    ``schemas``: pydantic models (named by class), tools (their ``args_schema``) or
    functions (a schema from the signature). ``format_error(error, call, schema) -> str``
    writes the error message.
    """

    def __init__(
        self,
        schemas: Sequence[BaseTool | type[BaseModel] | Callable[..., Any]],
        *,
        format_error: Callable[[BaseException, ToolCall, Any], str] | None = None,
        name: str = "validation",
        tags: list[str] | None = None,
    ) -> None:
        self.name = name
        self.tags = tags
        self._format_error = format_error or _default_format_error
        self.schemas_by_name: dict[str, Any] = {}
        for schema in schemas:
            if isinstance(schema, BaseTool):
                args = schema.args_schema
                if args is None:
                    raise ValueError(f"Tool {schema.name} does not have an args_schema defined.")
                if not (isinstance(args, type) and issubclass(args, BaseModel | BaseModelV1)):
                    raise ValueError(
                        "Validation node only works with tools that have a pydantic BaseModel "
                        f"args_schema. Got {schema.name} with args_schema: {args}."
                    )
                self.schemas_by_name[schema.name] = args
            elif isinstance(schema, type) and issubclass(schema, BaseModel | BaseModelV1):
                self.schemas_by_name[schema.__name__] = schema
            elif callable(schema):
                self.schemas_by_name[schema.__name__] = create_schema_from_function(
                    "Validation", schema
                )
            else:
                raise ValueError(
                    "Unsupported input to ValidationNode. Expected BaseModel, tool or function. "
                    f"Got: {type(schema)}."
                )

    def _validate(self, call: ToolCall) -> ToolMessage:
        schema = self.schemas_by_name[call["name"]]
        try:
            if issubclass(schema, BaseModel):
                content = schema.model_validate(call["args"]).model_dump_json()
            else:
                content = schema.validate(call["args"]).json()
            return ToolMessage(content=content, name=call["name"], tool_call_id=cast(str, call["id"]))
        except (ValidationError, ValidationErrorV1) as e:
            return ToolMessage(
                content=self._format_error(e, call, schema),
                name=call["name"],
                tool_call_id=cast(str, call["id"]),
                additional_kwargs={"is_error": True},
            )

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """One ``ToolMessage`` per tool call, in the shape of the input."""
        if isinstance(input, list):
            as_list, messages = True, input
        elif messages := input.get("messages", []):
            as_list = False
        else:
            raise ValueError("No message found in input")
        message = messages[-1]
        if not isinstance(message, AIMessage):
            raise ValueError("Last message is not an AIMessage")
        with get_executor_for_config(ensure_config(config)) as pool:
            outputs = list(pool.map(self._validate, message.tool_calls))
        return outputs if as_list else {"messages": outputs}

    async def ainvoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """Same as ``invoke`` (validation is CPU work)."""
        return self.invoke(input, config)
