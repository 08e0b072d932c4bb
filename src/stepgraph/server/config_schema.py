"""The shape of ``langgraph.json`` / ``stepgraph.json``: every key LangGraph's CLI knows, typed.

``parse_config(data, source)`` checks types and refuses keys that are not part of the schema
(with a did-you-mean suggestion). Whether a known key is honoured, accepted as a build-time
key or refused is decided afterwards by ``config_policy``.

The models follow LangGraph's configuration reference (``langgraph_cli.schemas.Config`` and
the server's own ``webhooks`` / ``checkpointer`` / ``store`` additions). Values are strict
JSON types: ``"10"`` is not an integer and ``1`` is not a string.
"""

from __future__ import annotations

import difflib
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from stepgraph.server.config_errors import CONFIG_INVALID, CONFIG_UNKNOWN_KEY, ConfigError, Problem

__all__ = [
    "AuthConfig", "CheckpointerConfig", "Config", "CorsConfig", "GraphDef", "HttpConfig",
    "StoreConfig", "WebhookUrlPolicy", "WebhooksConfig", "parse_config", "validation_problems",
]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True, frozen=True)

    def given(self) -> set[str]:
        """The keys present in the file (by their JSON names)."""
        out = set()
        for name in self.model_fields_set:
            alias = type(self).model_fields[name].alias
            out.add(alias or name)
        return out


class GraphDef(_Model):
    """``{"path": "./file.py:var", "description": "..."}``."""

    path: str
    description: str | None = None


class CorsConfig(_Model):
    """``http.cors``: the arguments of Starlette's ``CORSMiddleware``."""

    allow_origins: list[str] | None = None
    allow_methods: list[str] | None = None
    allow_headers: list[str] | None = None
    allow_credentials: bool | None = None
    allow_origin_regex: str | None = None
    expose_headers: list[str] | None = None
    max_age: int | None = Field(None, ge=0)


class HeaderRules(_Model):
    """``http.configurable_headers`` / ``http.logging_headers``."""

    includes: list[str] | None = None
    excludes: list[str] | None = None
    include: list[str] | None = None
    exclude: list[str] | None = None


class HttpConfig(_Model):
    """``http``: the built-in HTTP server."""

    app: str | None = None
    disable_assistants: bool | None = None
    disable_threads: bool | None = None
    disable_runs: bool | None = None
    disable_store: bool | None = None
    disable_mcp: bool | None = None
    disable_a2a: bool | None = None
    disable_meta: bool | None = None
    disable_ui: bool | None = None
    studio: bool | None = None
    disable_webhooks: bool | None = None
    cors: CorsConfig | None = None
    configurable_headers: HeaderRules | None = None
    logging_headers: HeaderRules | None = None
    middleware_order: Literal["auth_first", "middleware_first"] | None = None
    enable_custom_route_auth: bool | None = None
    mount_prefix: str | None = None


class WebhookUrlPolicy(_Model):
    """``webhooks.url``: which webhook URLs a run may name."""

    require_https: bool | None = None
    allowed_domains: list[str] | None = None
    allowed_ports: list[int] | None = None
    max_url_length: int | None = Field(None, gt=0)
    disable_loopback: bool | None = None
    disable_private_ips: bool | None = None


class WebhooksConfig(_Model):
    """``webhooks``: outbound delivery of run results."""

    env_prefix: str | None = None
    url: WebhookUrlPolicy | None = None
    headers: dict[str, str] | None = None
    allowed_fields: list[str] | None = None


class IndexConfig(_Model):
    """``store.index``: semantic search."""

    dims: int
    embed: str
    fields: list[str] | None = None


class StoreTTLConfig(_Model):
    """``store.ttl``."""

    refresh_on_read: bool | None = None
    default_ttl: float | None = None
    sweep_interval_minutes: int | None = None


class StoreConfig(_Model):
    """``store``: the long-term memory store."""

    path: str | None = None
    index: IndexConfig | None = None
    ttl: StoreTTLConfig | None = None


class ThreadTTLConfig(_Model):
    """``checkpointer.ttl``."""

    strategy: Literal["delete", "keep_latest"] | None = None
    default_ttl: float | None = None
    sweep_interval_minutes: int | None = None
    sweep_limit: int | None = None


class SerdeConfig(_Model):
    """``checkpointer.serde``."""

    allowed_json_modules: list[list[str]] | bool | None = None
    allowed_msgpack_modules: list[list[str]] | bool | None = None
    pickle_fallback: bool | None = None


class CheckpointerConfig(_Model):
    """``checkpointer``."""

    backend: Literal["default", "custom", "mongo"] | None = None
    path: str | None = None
    uri: str | None = None
    ttl: ThreadTTLConfig | None = None
    serde: SerdeConfig | None = None


class SecurityConfig(_Model):
    """``auth.openapi``: OpenAPI security schemes and requirements."""

    securitySchemes: dict[str, dict[str, Any]] | None = None  # noqa: N815 - the JSON key
    security: list[dict[str, list[str]]] | None = None
    paths: dict[str, dict[str, list[dict[str, list[str]]]]] | None = None


class AuthCacheConfig(_Model):
    """``auth.cache``."""

    cache_keys: list[str] | None = None
    ttl_seconds: int | None = Field(None, ge=0)
    max_size: int | None = Field(None, ge=0)


class AuthConfig(_Model):
    """``auth``: custom authentication (``langgraph_sdk.Auth``)."""

    path: str
    disable_studio_auth: bool | None = None
    allow_langsmith_api_keys: bool | None = None
    openapi: SecurityConfig | None = None
    cache: AuthCacheConfig | None = None


class EncryptionConfig(_Model):
    """``encryption``."""

    path: str


class SourceConfig(_Model):
    """``source``: a uv project as the deployment source."""

    kind: Literal["uv"]
    root: str | None = None
    package: str | None = None


class Config(_Model):
    """The whole file. ``graphs`` / ``env`` / ``keep_pkg_tools`` are unions checked by hand
    (for clearer messages than a union error); everything else is typed here."""

    schema_: str | None = Field(None, alias="$schema")
    graphs: dict[str, Any]
    dependencies: list[str] | None = None
    env: Any = None
    python_version: str | None = None
    node_version: str | None = None
    api_version: str | None = None
    internal_docker_tag: str | None = Field(None, alias="_INTERNAL_docker_tag")
    base_image: str | None = None
    image_distro: Literal["debian", "wolfi", "bookworm"] | None = None
    pip_config_file: str | None = None
    pip_installer: Literal["auto", "pip", "uv"] | None = None
    source: SourceConfig | None = None
    dockerfile_lines: list[str] | None = None
    keep_pkg_tools: Any = None
    store: StoreConfig | None = None
    checkpointer: CheckpointerConfig | None = None
    auth: AuthConfig | None = None
    encryption: EncryptionConfig | None = None
    http: HttpConfig | None = None
    webhooks: WebhooksConfig | None = None
    ui: dict[str, str] | None = None
    ui_config: dict[str, Any] | None = None
    project_root: str | None = None
    package: str | None = None


def _json_names(model: type[BaseModel]) -> list[str]:
    return [f.alias or name for name, f in model.model_fields.items()]


def _model_at(model: type[BaseModel], loc: tuple[Any, ...]) -> type[BaseModel] | None:
    """The model class that holds the key at ``loc`` (``loc`` without the key itself)."""
    import types
    import typing

    current: Any = model
    for part in loc:
        if not (isinstance(current, type) and issubclass(current, BaseModel)):
            return None
        field = next((f for n, f in current.model_fields.items() if (f.alias or n) == part), None)
        if field is None:
            return None
        current = field.annotation
        while True:  # unwrap Optional / Union to its model member
            origin = typing.get_origin(current)
            if origin in (typing.Union, types.UnionType):
                members = [a for a in typing.get_args(current)
                           if isinstance(a, type) and issubclass(a, BaseModel)]
                current = members[0] if members else None
                continue
            break
    return current if isinstance(current, type) and issubclass(current, BaseModel) else None


def dotted(loc: tuple[Any, ...] | list[Any]) -> str:
    """``("http", "cors", "max_age")`` -> ``http.cors.max_age`` (indexes as ``[0]``)."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += ("." if out else "") + str(part)
    return out


def _short(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def validation_problems(exc: ValidationError, model: type[BaseModel],
                        prefix: tuple[Any, ...] = ()) -> list[Problem]:
    """Turn pydantic's errors into problems naming the dotted key."""
    problems: list[Problem] = []
    for err in exc.errors():
        loc = tuple(err["loc"])
        key = dotted(prefix + loc)
        if err["type"] == "extra_forbidden":
            holder = _model_at(model, loc[:-1])
            names = _json_names(holder) if holder is not None else []
            close = difflib.get_close_matches(str(loc[-1]), names, n=1)
            where = f"`{dotted(prefix + loc[:-1])}`" if prefix + loc[:-1] else "the config"
            hint = f"did you mean `{close[0]}`?" if close else (
                f"known keys of {where}: {', '.join(names)}" if names else None)
            problems.append(Problem(CONFIG_UNKNOWN_KEY, key, f"unknown key (not a key of {where})", hint))
        elif err["type"] == "missing":
            problems.append(Problem(CONFIG_INVALID, key, "is required", None))
        else:
            msg = str(err["msg"]).removeprefix("Value error, ")
            problems.append(Problem(CONFIG_INVALID, key, f"{msg} (got {_short(err.get('input'))})", None))
    return problems


def parse_config(data: Any, source: str) -> Config:
    """Validate the decoded JSON of a config file; ``ConfigError`` lists every problem."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a JSON object, got {type(data).__name__}")
    try:
        return Config.model_validate(data)
    except ValidationError as exc:
        raise ConfigError.from_problems(source, validation_problems(exc, Config)) from None
