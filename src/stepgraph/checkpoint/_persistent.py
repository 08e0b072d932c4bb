"""``PersistentDict``: a ``defaultdict`` written to a file on ``sync``/``close``.

LangGraph's ``InMemorySaver(factory=partial(PersistentDict, filename=...))`` keeps its
tables in such dicts. stepgraph's file format is data only (tagged JSON: dicts, lists,
tuples, bytes, strings, numbers), never pickle, so a file someone else wrote cannot make
``load`` import or call anything.
"""

from __future__ import annotations

import base64
import json
import os
import tempfile
from collections import defaultdict
from typing import Any, Self

__all__ = ["PersistentDict"]

_MAX_DEPTH = 64


def _encode(value: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("PersistentDict: value nested too deeply to store")
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, (bytes, bytearray, memoryview)):
        return {"b": base64.b64encode(bytes(value)).decode("ascii")}
    if isinstance(value, tuple):
        return {"t": [_encode(v, depth + 1) for v in value]}
    if isinstance(value, list):
        return {"l": [_encode(v, depth + 1) for v in value]}
    if isinstance(value, dict):
        return {"d": [[_encode(k, depth + 1), _encode(v, depth + 1)] for k, v in value.items()]}
    raise TypeError(
        f"PersistentDict stores only dicts, lists, tuples, bytes, strings and numbers, "
        f"not {type(value).__name__}"
    )


def _decode(value: Any, depth: int = 0) -> Any:
    if depth > _MAX_DEPTH:
        raise ValueError("PersistentDict: file nests values too deeply")
    if not isinstance(value, dict):
        if isinstance(value, list):
            raise ValueError("PersistentDict: malformed file (untagged list)")
        return value
    if len(value) != 1:
        raise ValueError("PersistentDict: malformed file (bad tag)")
    ((tag, body),) = value.items()
    if tag == "b" and isinstance(body, str):
        return base64.b64decode(body)
    if tag in ("t", "l") and isinstance(body, list):
        items = [_decode(v, depth + 1) for v in body]
        return tuple(items) if tag == "t" else items
    if tag == "d" and isinstance(body, list):
        return {_decode(k, depth + 1): _decode(v, depth + 1) for k, v in body}
    raise ValueError(f"PersistentDict: malformed file (unknown tag {tag!r})")


class PersistentDict(defaultdict):  # type: ignore[type-arg]
    """A dict kept in memory and written to ``filename`` on ``sync()`` and ``close()``.

    ``load()`` reads the file back (a missing or empty file loads nothing). Used as a
    context manager, leaving it closes it (writes, then clears the memory copy).
    """

    def __init__(self, *args: Any, filename: str, **kwds: Any) -> None:
        self.flag = "c"
        self.mode: int | None = None
        self.format = "json"
        self.filename = filename
        super().__init__(*args, **kwds)

    def sync(self) -> None:
        """Write the dict to its file (atomically: a temporary file, then a rename)."""
        if self.flag == "r":
            return
        payload = json.dumps(_encode(dict(self)), separators=(",", ":"))
        directory = os.path.dirname(os.path.abspath(self.filename))
        fd, tmp = tempfile.mkstemp(dir=directory, prefix=".persistentdict-")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as fh:
                fh.write(payload)
            os.replace(tmp, self.filename)
        except BaseException:
            if os.path.exists(tmp):
                os.remove(tmp)
            raise
        if self.mode is not None:
            os.chmod(self.filename, self.mode)

    def load(self) -> None:
        """Merge the file's contents into the dict."""
        if self.flag == "n" or not os.path.exists(self.filename):
            return
        with open(self.filename, encoding="utf-8") as fh:
            text = fh.read()
        if not text.strip():
            return
        data = _decode(json.loads(text))
        if not isinstance(data, dict):
            raise ValueError("PersistentDict: malformed file (not a dict)")
        self.update(data)

    def close(self) -> None:
        """Write the file, then clear the memory copy."""
        self.sync()
        self.clear()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()
