"""Semantic-search helpers: the embedding adapter, text extraction by path, vector math.

Vectors are lists of floats in memory and little-endian float32 blobs in SQL stores;
similarity is cosine, computed exactly by every store over the items a search matches: with
numpy when it is installed and there are enough vectors to gain from it, else in Python.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import math
import re
import struct
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from stepgraph.store.base import IndexConfig, StoreError

__all__ = [
    "Embedder", "Index", "best_scores", "cosine", "get_text_at_path", "norm", "pack", "tokenize_path",
    "unpack",
]  # fmt: skip

NUMPY_MIN_VECTORS = 64
"""Below this many vectors a search scores them in Python (numpy's set-up costs more)."""

Vector = list[float]
_TOKEN = re.compile(r"\[[^\]]*\]|[^.\[\]]+")


def _embed_error(what: str, hint: str) -> StoreError:
    return StoreError(what, code="SG433", hint=hint)


def _run_sync(awaitable: Any) -> Any:
    """Await ``awaitable`` from sync code (in a helper thread when a loop already runs here)."""

    async def wait() -> Any:
        return await awaitable

    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(wait())
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(asyncio.run, wait()).result()


def _is_async(fn: Any) -> bool:
    return inspect.iscoroutinefunction(fn) or inspect.iscoroutinefunction(
        getattr(fn, "__call__", None)  # noqa: B004 - callable objects with async __call__
    )


class Embedder:
    """One interface over the accepted ``embed`` values (see ``IndexConfig.embed``)."""

    def __init__(self, embed: Any) -> None:
        if isinstance(embed, str):
            embed = _init_embeddings(embed)
        self._obj = embed if hasattr(embed, "embed_documents") else None
        if self._obj is None and not callable(embed):
            raise _embed_error(
                f"index['embed'] must be callable or have embed_documents, got {embed!r}.",
                "pass a function list[str] -> list[list[float]] or a LangChain Embeddings",
            )
        self._fn: Callable[..., Any] = embed

    @property
    def model(self) -> Any:
        """The loaded function or ``Embeddings`` (a model string already initialised)."""
        return self._obj if self._obj is not None else self._fn

    def documents(self, texts: Sequence[str]) -> list[Vector]:
        """Embed ``texts`` (blocking)."""
        out = self._obj.embed_documents(list(texts)) if self._obj else self._fn(list(texts))
        return _run_sync(out) if inspect.isawaitable(out) else out

    async def adocuments(self, texts: Sequence[str]) -> list[Vector]:
        """Embed ``texts`` without blocking the event loop."""
        if self._obj is not None:
            if hasattr(self._obj, "aembed_documents"):
                return await self._obj.aembed_documents(list(texts))
            return await asyncio.to_thread(self._obj.embed_documents, list(texts))
        if _is_async(self._fn):
            return await self._fn(list(texts))
        out = await asyncio.to_thread(self._fn, list(texts))
        return await out if inspect.isawaitable(out) else out

    def query(self, text: str) -> Vector:
        """Embed one search query (blocking)."""
        if self._obj is not None and hasattr(self._obj, "embed_query"):
            return self._obj.embed_query(text)
        return self.documents([text])[0]

    async def aquery(self, text: str) -> Vector:
        """Async ``query``."""
        if self._obj is not None and hasattr(self._obj, "aembed_query"):
            return await self._obj.aembed_query(text)
        return (await self.adocuments([text]))[0]


def _init_embeddings(spec: str) -> Any:
    try:
        from langchain.embeddings import init_embeddings  # type: ignore[import-not-found]
    except ImportError as exc:
        raise _embed_error(
            f"index['embed']={spec!r} names a model, which needs the langchain package.",
            "pip install langchain, or pass an embedding function or Embeddings object",
        ) from exc
    try:
        return init_embeddings(spec)
    except Exception as exc:  # a missing provider package, an unknown provider, no API key
        raise _embed_error(
            f"index['embed']={spec!r} could not be loaded by LangChain's init_embeddings: "
            f"{type(exc).__name__}: {exc}",
            "install the provider's package (e.g. langchain-openai) and its credentials, or pass an "
            "embedding function or Embeddings object",
        ) from exc


def tokenize_path(path: str) -> list[str]:
    """``"a.b[0].c[*]"`` -> ``["a", "b", "[0]", "c", "[*]"]``."""
    return _TOKEN.findall(path)


def _as_text(value: Any) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, (dict, list, tuple)):
        return [json.dumps(value, sort_keys=True, ensure_ascii=False, default=str)]
    return [str(value)]


def _walk(obj: Any, tokens: Sequence[str], pos: int) -> list[str]:
    if pos == len(tokens):
        return _as_text(obj)
    token = tokens[pos]
    if token in ("[*]", "*"):
        if isinstance(obj, (list, tuple)):
            children: Any = obj
        elif isinstance(obj, dict) and token == "*":
            children = obj.values()
        else:
            return []
        return [t for child in children for t in _walk(child, tokens, pos + 1)]
    if token.startswith("["):
        if not isinstance(obj, (list, tuple)):
            return []
        try:
            return _walk(obj[int(token[1:-1])], tokens, pos + 1)
        except (ValueError, IndexError):
            return []
    if isinstance(obj, dict) and token in obj:
        return _walk(obj[token], tokens, pos + 1)
    return []


def get_text_at_path(obj: Any, path: str | Sequence[str]) -> list[str]:
    """The texts at ``path`` in ``obj`` (``"$"``: the whole object as sorted-key JSON)."""
    if not path or path == "$":
        return [json.dumps(obj, sort_keys=True, ensure_ascii=False, default=str)]
    tokens = tokenize_path(path) if isinstance(path, str) else list(path)
    return _walk(obj, tokens, 0)


class Index:
    """A store's ``IndexConfig``, checked and ready: dims, embedder and default fields."""

    def __init__(self, config: IndexConfig) -> None:
        if "dims" not in config or "embed" not in config:
            raise _embed_error(
                f"index config needs 'dims' and 'embed', got keys {sorted(config)}.",
                'index={"dims": 1536, "embed": my_embed_fn, "fields": ["text"]}',
            )
        self.dims = int(config["dims"])
        self.embedder = Embedder(config["embed"])
        self.fields: tuple[str, ...] = tuple(config.get("fields") or ("$",))

    def texts(self, value: dict[str, Any], fields: Sequence[str] | None) -> list[tuple[str, str]]:
        """``(field id, text)`` pairs to embed; a path yielding n texts gets ids ``path.i``."""
        out: list[tuple[str, str]] = []
        for path in self.fields if fields is None else fields:
            texts = get_text_at_path(value, path)
            if len(texts) == 1:
                out.append((path, texts[0]))
            else:
                out.extend((f"{path}.{i}", text) for i, text in enumerate(texts))
        return out

    def check(self, vectors: Sequence[Sequence[float]], expected: int) -> list[Vector]:
        """``vectors`` as float lists, after checking their count and dimensions."""
        vectors = list(vectors)
        if len(vectors) != expected:
            raise _embed_error(
                f"The embedding function returned {len(vectors)} vectors for {expected} texts.",
                "embed must return exactly one vector per input text, in order",
            )
        out = [[float(x) for x in vec] for vec in vectors]
        for vec in out:
            if len(vec) != self.dims:
                raise _embed_error(
                    f"An embedding has {len(vec)} dimensions; the index expects {self.dims}.",
                    "set index['dims'] to the size of your embedding model's vectors",
                )
        return out


def cosine(query: Vector, query_norm: float, vec: Vector) -> float:
    """Cosine similarity of ``query`` (with its precomputed norm) and ``vec``; 0 for zeros."""
    length = norm(vec)
    if not length or not query_norm:
        return 0.0
    return math.fsum(a * b for a, b in zip(query, vec, strict=False)) / (query_norm * length)


def _numpy() -> Any:
    try:
        import numpy
    except ImportError:
        return None
    return numpy


def best_scores(query: Vector, groups: Sequence[Sequence[Vector]], *, use_numpy: bool | None = None) -> list[float]:
    """Each group's best cosine similarity to ``query`` (an item's vectors are one group)."""
    count = sum(len(g) for g in groups)
    np = _numpy() if use_numpy is not False and (use_numpy or count >= NUMPY_MIN_VECTORS) else None
    if np is not None:
        try:
            matrix = np.asarray([v for g in groups for v in g], dtype=np.float64).reshape(count, len(query))
        except ValueError:  # vectors of another size (an index whose dims changed): score in Python
            np = None
    if np is None:
        query_norm = norm(query)
        return [max(cosine(query, query_norm, v) for v in g) for g in groups]
    q = np.asarray(query, dtype=np.float64)
    lengths = np.linalg.norm(matrix, axis=1) * float(np.linalg.norm(q))
    safe = np.where(lengths > 0, lengths, 1.0)
    sims = np.where(lengths > 0, (matrix @ q) / safe, 0.0)
    out: list[float] = []
    start = 0
    for g in groups:
        out.append(float(sims[start:start + len(g)].max()))
        start += len(g)
    return out


def norm(vec: Vector) -> float:
    """Euclidean length of ``vec``."""
    return math.sqrt(math.fsum(x * x for x in vec))


def pack(vec: Vector) -> bytes:
    """``vec`` as a little-endian float32 blob."""
    return struct.pack(f"<{len(vec)}f", *vec)


def unpack(blob: bytes) -> Vector:
    """The vector in a ``pack`` blob."""
    return list(struct.unpack(f"<{len(blob) // 4}f", bytes(blob)))
