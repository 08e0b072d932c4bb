"""The ``store`` section of the config: semantic search (``store.index``) and the store-wide
TTL policy (``store.ttl``).

``store_settings(checker, store, check_ref)`` checks the section at start-up and returns
``StoreSettings``; ``load_embed`` turns ``index.embed`` into what ``IndexConfig["embed"]``
takes (a callable or a LangChain ``Embeddings``) when the app is created.
"""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from stepgraph.server.config_schema import StoreConfig

__all__ = ["StoreSettings", "index_config", "load_embed", "store_settings"]

# Providers LangChain's ``init_embeddings("provider:model")`` knows.
_PROVIDERS = frozenset({
    "openai", "azure_openai", "google_vertexai", "google_genai", "bedrock", "cohere", "mistralai",
    "huggingface", "ollama", "fireworks", "together", "nomic", "voyageai", "anthropic",
})


@dataclass
class StoreSettings:
    """``store.index`` (``embed`` still a reference) and ``store.ttl`` as store configs."""

    index: dict[str, Any] | None = None
    ttl: dict[str, Any] | None = None
    sweep_minutes: float | None = None
    """How often the server sweeps expired items (``store.ttl.sweep_interval_minutes``)."""


_PROVIDER_PACKAGES = {
    "openai": "langchain_openai", "azure_openai": "langchain_openai",
    "google_vertexai": "langchain_google_vertexai", "google_genai": "langchain_google_genai",
    "bedrock": "langchain_aws", "cohere": "langchain_cohere", "mistralai": "langchain_mistralai",
    "huggingface": "langchain_huggingface", "ollama": "langchain_ollama",
    "fireworks": "langchain_fireworks", "together": "langchain_together", "nomic": "langchain_nomic",
    "voyageai": "langchain_voyageai", "anthropic": "langchain_anthropic",
}


def _provider_package_missing(embed: str) -> str | None:
    """Why ``"provider:model"`` cannot load here (``None``: it can, as far as we can tell)."""
    provider, sep, model = embed.partition(":")
    if not sep or not model:
        return "is not of the form \"provider:model\" (e.g. \"openai:text-embedding-3-small\")"
    package = _PROVIDER_PACKAGES.get(provider)
    if package is None:
        return f"names the unknown embedding provider {provider!r} (known: {', '.join(sorted(_PROVIDERS))})"
    if importlib.util.find_spec(package) is None:
        return f"needs the package {package.replace('_', '-')}, which is not installed"
    return None


def is_provider(embed: str) -> bool:
    """Whether ``embed`` names an embedding model (``"openai:text-embedding-3-small"``)
    rather than code (``"./embed.py:fn"``, ``"package.module:fn"``)."""
    target, sep, attr = embed.partition(":")
    if not sep:
        return True
    return target in _PROVIDERS or not attr.isidentifier()


def store_settings(c: Any, store: StoreConfig | None, check_ref: Any) -> StoreSettings:
    """Check ``store`` (``c`` is config_policy's checker)."""
    out = StoreSettings()
    if store is None:
        return out
    if store.path is not None:
        c.refuse("store.path", "a custom store is not supported",
                 "remove it: the server's store (SQLite, or PostgreSQL with --database-url) is used")
    index = store.index
    if index is not None:
        ok = True
        if index.dims <= 0:
            c.invalid("store.index.dims", f"must be a positive number of dimensions, got {index.dims}")
            ok = False
        if is_provider(index.embed):
            missing = _provider_package_missing(index.embed)
            if missing and importlib.util.find_spec("langchain") is not None:
                c.refuse("store.index.embed", f"{index.embed!r} {missing}",
                         'install the provider\'s package, or point it at code: "./embed.py:embed" '
                         "(a function list[str] -> list[list[float]] or an Embeddings)")
                ok = False
            elif importlib.util.find_spec("langchain") is None:
                c.refuse("store.index.embed", f"{index.embed!r} names an embedding model, which needs "
                         "LangChain's init_embeddings (the `langchain` package is not installed)",
                         'pip install langchain and the provider\'s package, or point it at code: '
                         '"./embed.py:embed" (a function list[str] -> list[list[float]] or an Embeddings)')
                ok = False
        elif check_ref(c, "store.index.embed", index.embed, "embedding functions") is None:
            ok = False
        fields = index.fields
        if fields is not None and (not fields or not all(isinstance(f, str) and f for f in fields)):
            c.invalid("store.index.fields", f"expected a non-empty list of JSON paths such as \"text\", got {fields!r}")
            ok = False
        if ok:
            out.index = {"dims": index.dims, "embed": index.embed, **({"fields": list(fields)} if fields else {})}
    ttl = store.ttl
    if ttl is not None:
        ok = True
        if ttl.default_ttl is not None and not 0 < ttl.default_ttl < float("inf"):
            c.invalid("store.ttl.default_ttl", "must be a positive number of minutes")
            ok = False
        if ttl.sweep_interval_minutes is not None and ttl.sweep_interval_minutes < 1:
            c.invalid("store.ttl.sweep_interval_minutes", "must be at least 1 minute")
            ok = False
        if ok:
            out.ttl = {"refresh_on_read": True if ttl.refresh_on_read is None else ttl.refresh_on_read,
                       "default_ttl": ttl.default_ttl, "sweep_interval_minutes": ttl.sweep_interval_minutes}
            out.sweep_minutes = float(ttl.sweep_interval_minutes or 5)
    return out


def load_embed(embed: str, base_dir: Path) -> Any:
    """What ``index.embed`` names: the object at a code reference, else the model string
    (the store hands it to LangChain's ``init_embeddings``)."""
    if is_provider(embed):
        return embed
    from stepgraph.server.config_errors import ConfigError
    from stepgraph.server.graphs import import_target

    target, _, attr = embed.rpartition(":")
    try:
        module = import_target(target, base_dir)
    except ConfigError:
        raise
    except Exception as exc:  # noqa: BLE001 - the user's module failing to import
        raise ConfigError(f"store.index.embed: importing {target} failed: {type(exc).__name__}: {exc}") from None
    try:
        return getattr(module, attr)
    except AttributeError:
        raise ConfigError(f"store.index.embed: {target} has no attribute {attr!r}") from None


def index_config(settings: StoreSettings, base_dir: Path) -> dict[str, Any] | None:
    """``store.index`` ready for a store's ``index=`` (the embed reference loaded)."""
    if settings.index is None:
        return None
    return {**settings.index, "embed": load_embed(settings.index["embed"], base_dir)}
