"""The constrained field types every request and response model is built from.

Ids (threads, assistants, runs, checkpoints), store keys and namespace labels are strings
without control characters (U+0000-U+001F, U+007F-U+009F) and of bounded length, the same
on SQLite and PostgreSQL; page sizes, offsets, delays and TTLs are bounded numbers. Each rule
is declared once here: pydantic enforces it and the OpenAPI document shows it.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    ValidationError,
    WrapValidator,
)
from pydantic_core import PydanticCustomError

from stepgraph.server.request_limits import (
    MAX_ID_LENGTH,
    MAX_KEY_LENGTH,
    MAX_LABEL_LENGTH,
    MAX_LABELS,
    MAX_NS_LENGTH,
    MAX_OFFSET,
    MAX_PAGE,
)

__all__ = [
    "SAFE_TEXT",
    "CheckpointId",
    "Id",
    "JsonObject",
    "Label",
    "Namespace",
    "NamespacePrefix",
    "NodeNames",
    "Offset",
    "OptId",
    "CheckpointNs",
    "OneOrMany",
    "Page",
    "QueryModel",
    "RequestModel",
    "ResponseModel",
    "SafeStr",
    "SearchFilter",
    "SortOrder",
    "StoreKey",
    "StrList",
    "Uuid",
    "as_dict",
    "expected",
    "partial",
]

SAFE_TEXT = r"^[^\x00-\x1f\x7f-\x9f]*$"
"""No control characters: the pattern of every id, key and label."""


class RequestModel(BaseModel):
    """A request body: JSON types as sent (no coercion of ``"10"`` to ``10``); unknown keys
    are ignored, as LangGraph's server ignores them; ``null`` means "not given"."""

    model_config = ConfigDict(strict=True, extra="ignore", frozen=True)


class QueryModel(BaseModel):
    """Query parameters: strings converted to the declared types (``"10"`` -> ``10``,
    ``"true"``/``"1"``/``"yes"`` -> ``True``); unknown parameters are ignored."""

    model_config = ConfigDict(extra="ignore", frozen=True)


class ResponseModel(BaseModel):
    """A response body (documentation only: responses are not re-validated at run time)."""

    model_config = ConfigDict(extra="allow")


def expected(what: str) -> WrapValidator:
    """Collapse a union's per-member errors into one: ``expected <what>``."""

    def wrap(value: Any, handler: Any) -> Any:
        try:
            return handler(value)
        except ValidationError as exc:
            if value is None:
                raise
            errors = exc.errors()
            if all(err["loc"] and isinstance(err["loc"][0], int) for err in errors):
                raise  # the container is right, some items are not: keep their precise errors
            for err in errors:
                index = next((p for p in err["loc"] if isinstance(p, int)), None)
                if index is not None:  # a union member matched the container: say which item
                    raise PydanticCustomError("custom_item", "item {index}: {msg}",
                                              {"index": index, "msg": err["msg"]}) from None
            raise PydanticCustomError("custom_expected", "expected {what}", {"what": what}) from None

    return WrapValidator(wrap)


def _uuid(value: str) -> str:
    try:
        uuid.UUID(value)
    except ValueError:
        raise PydanticCustomError("custom_uuid", "must be a UUID") from None
    return value


SafeStr = Annotated[str, Field(pattern=SAFE_TEXT)]
Id = Annotated[str, Field(min_length=1, max_length=MAX_ID_LENGTH, pattern=SAFE_TEXT)]
"""A thread/assistant/graph id, node name or other short name."""
Uuid = Annotated[str, Field(max_length=64, json_schema_extra={"format": "uuid"}), AfterValidator(_uuid)]
OptId = Annotated[str, Field(max_length=MAX_ID_LENGTH, pattern=SAFE_TEXT)]
"""An id where an empty string means "none" (as clients send it)."""
CheckpointId = OptId
CheckpointNs = Annotated[str, Field(max_length=MAX_NS_LENGTH, pattern=SAFE_TEXT)]
StoreKey = Annotated[str, Field(min_length=1, max_length=MAX_KEY_LENGTH, pattern=SAFE_TEXT)]
Label = Annotated[str, Field(min_length=1, max_length=MAX_LABEL_LENGTH, pattern=r"^[^.\x00-\x1f\x7f-\x9f]*$")]
"""A namespace label: non-empty, no ``.`` (the query string joins labels with dots)."""
Namespace = Annotated[list[Label], Field(min_length=1, max_length=MAX_LABELS)]
NamespacePrefix = Annotated[list[Label], Field(max_length=MAX_LABELS)]
Page = Annotated[int, Field(ge=1, le=MAX_PAGE)]
Offset = Annotated[int, Field(ge=0, le=MAX_OFFSET)]
SortOrder = Literal["asc", "desc"]
JsonObject = dict[str, Any]


def _bounded_filter(value: dict[str, Any]) -> dict[str, Any]:
    from stepgraph.server.storage.sqlquery import pattern_problem

    problem = pattern_problem(value)
    if problem is not None:
        raise PydanticCustomError("custom_filter", "filter is {problem}", {"problem": problem})
    return value


SearchFilter = Annotated[JsonObject, AfterValidator(_bounded_filter), Field(description=(
    "Matches records whose field contains this JSON (PostgreSQL's @> semantics); at most 1000 "
    "values, 64 levels and 4 nested lists."))]
"""A containment filter of a search (run in SQL, bounded by ``storage.sqlquery``'s limits)."""


def _listify(value: Any) -> Any:
    return [value] if isinstance(value, str) else value


def OneOrMany(item: Any, what: str) -> Any:  # noqa: N802 - a type factory
    """A list of ``item``; a single value is taken as a one-item list (schema shows both)."""
    return Annotated[list[item], BeforeValidator(_listify, json_schema_input_type=item | list[item]),
                     expected(what)]


StrList = OneOrMany(Id, "a string or a list of strings")
"""A list of names; a single string is a one-item list."""


def _star_or_names(value: Any) -> Any:
    if isinstance(value, str) and value != "*":
        return [value]
    return value


NodeNames = Annotated[Literal["*"] | list[Id], BeforeValidator(_star_or_names,
                      json_schema_input_type=Literal["*"] | list[Id] | Id),
                      expected('"*" or a list of node names')]
"""``"*"`` (every node) or node names (a single name is a one-item list)."""


def partial(model: type[ResponseModel], doc: str | None = None) -> type[ResponseModel]:
    """``model`` with every field optional: what a ``select`` query answers."""
    from pydantic import create_model

    fields: dict[str, Any] = {name: (info.annotation | None, None) for name, info in model.model_fields.items()}
    return create_model(f"{model.__name__}Fields", __base__=ResponseModel,
                        __doc__=doc or f"Some fields of a {model.__name__} (those ``select`` names).", **fields)


def as_dict(model: BaseModel | None) -> dict[str, Any] | None:
    """A request model back as the JSON object that was sent (unsent fields left out)."""
    return None if model is None else model.model_dump(exclude_unset=True)
