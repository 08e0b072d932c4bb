"""Compact checkpoint rows: packed versions and timestamps, and rows stored as diffs.

A checkpoint row of a chat holds little that changes from one step to the next: a timestamp,
two or three channel versions, one ``versions_seen`` entry. ``pack`` turns a checkpoint (its
values stripped) into a plain dict with short keys, versions of stepgraph's
``"%012d.%06x"`` form as one integer each, and an ISO timestamp as integer microseconds; any
value that does not fit those forms is kept as it is, under a separate key, so ``unpack``
restores the checkpoint exactly. ``diff`` writes only what changed against the parent's
packed dict (each key: set, delete, or a nested diff) and ``patch`` applies it; a saver
stores a full packed dict every few rows so a read applies a bounded number of diffs.

Packed keys: ``v`` format version, ``n`` name table (channel and node names, referred to by
index below, so a diff names a channel in one byte), ``ts``/``tr`` timestamp (micros / raw),
``cv``/``cr`` channel versions (packed / raw), ``vs``/``vr`` versions seen (packed by node /
raw), ``um``/``uc`` updated channels (bit mask over the sorted channel names / raw), ``iv``
small channel values stored inline, ``md`` the checkpoint's metadata (its step and source
change by a few bytes a row), ``x`` any other checkpoint key.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime, timedelta
from typing import Any

__all__ = ["diff", "pack", "patch", "unpack"]

_VERSION = re.compile(r"\d{12}\.[0-9a-f]{6}")
_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)
_MICROSECOND = timedelta(microseconds=1)
_KNOWN = {"v", "id", "ts", "channel_versions", "versions_seen", "updated_channels",
          "channel_values"}  # fmt: skip

_SET, _DEL, _SUB = 0, 1, 2


def _pack_version(v: Any) -> int | None:
    """A stepgraph version string (``"000000000042.3fa9c1"``) as one int, else ``None``;
    remembered in ``_PACKED``."""
    if type(v) is not str or len(v) != 19:
        return None
    n = _PACKED.get(v)
    if n is None:
        if not _VERSION.fullmatch(v):
            return None
        n = (int(v[:12]) << 24) | int(v[13:], 16)
        if len(_PACKED) >= _PACKED_MAX:
            _PACKED.clear()
        _PACKED[v] = n
    return n


@functools.lru_cache(maxsize=16384)
def _unpack_version(n: int) -> str:
    return f"{n >> 24:012d}.{n & 0xFFFFFF:06x}"


class _Names:
    """The row chain's name table: channel and node names as small integers.

    Starts as the parent row's table, shared (``names`` is never changed in place), and is
    copied only when a name is added, so a row that adds none keeps its parent's list."""

    __slots__ = ("names", "ids", "_own")

    def __init__(self, names: list[str] | None) -> None:
        if names is None:
            self.names: list[str] = []
            self.ids: dict[str, int] = {}
            self._own = True
        else:
            self.names = names
            self.ids = _ids_of(names)
            self._own = False

    def id(self, name: str) -> int:
        found = self.ids.get(name)
        if found is None:
            found = self.add(name)
        return found

    def add(self, name: str) -> int:
        if not self._own:
            self.names, self.ids, self._own = list(self.names), dict(self.ids), True
        found = self.ids[name] = len(self.names)
        self.names.append(name)
        return found


_last_ids: tuple[list[str], dict[str, int]] = ([], {})
"""The ids of the last name table looked up (rows of a chain share their parent's table)."""


def _ids_of(names: list[str]) -> dict[str, int]:
    """``{name: index}`` of a name table (shared: do not change it)."""
    global _last_ids
    last = _last_ids
    if last[0] is names and len(last[1]) == len(names):
        return last[1]
    ids = {name: i for i, name in enumerate(names)}
    _last_ids = (names, ids)
    return ids


_PACKED: dict[str, int] = {}
"""Version strings packed before (``_pack_version``): one C dict lookup each in
the fast path of ``_pack_versions``; emptied when it holds ``_PACKED_MAX`` of them."""
_PACKED_MAX = 16384


def _pack_versions(
    versions: dict[str, Any], names: _Names
) -> tuple[dict[int, int], dict[str, Any]]:
    """``(packed {name id: version}, raw {name: version} of the rest)``. Usually every
    name is in the table and every version was packed before (a row repeats its parent's
    versions but the few a step made): then one comprehension does it all."""
    ids = names.ids
    try:
        return {ids[key]: _PACKED[v] for key, v in versions.items()}, {}
    except (KeyError, TypeError):
        pass  # a new name or version (or an unhashable one): one at a time
    packed: dict[int, int] = {}
    raw: dict[str, Any] = {}
    for key, v in versions.items():
        n = _pack_version(v) if type(key) is str else None
        if n is None:
            raw[key] = v
        else:
            packed[names.id(key)] = n
    return packed, raw


_CANONICAL_TS = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.(?!000000)\d{6}\+00:00")
"""What ``datetime.now(UTC).isoformat()`` writes (microseconds not zero): such a string is
exactly what its parsed time formats back to, so no round trip is needed to check it."""


@functools.lru_cache(maxsize=64)
def _second_micros(second: str) -> int | None:
    """Micros since the epoch of a canonical timestamp's whole second (``YYYY-MM-DDTHH:MM:SS``,
    UTC): shared by every row written within that second, so parsed once for all of them."""
    try:
        return (datetime.fromisoformat(second + "+00:00") - _EPOCH) // _MICROSECOND
    except ValueError:
        return None


def _pack_ts(ts: Any) -> int | None:
    if type(ts) is not str:
        return None
    if _CANONICAL_TS.fullmatch(ts):
        second = _second_micros(ts[:19])
        if second is not None:
            return second + int(ts[20:26])
    try:
        when = datetime.fromisoformat(ts)
    except ValueError:
        return None
    if _CANONICAL_TS.fullmatch(ts):
        return (when - _EPOCH) // _MICROSECOND
    if when.utcoffset() != timedelta(0):
        return None
    micros = (when - _EPOCH) // timedelta(microseconds=1)
    return micros if _unpack_ts(micros) == ts else None


def _unpack_ts(micros: int) -> str:
    return (_EPOCH + timedelta(microseconds=micros)).isoformat()


def pack(
    checkpoint: dict[str, Any],
    inline: dict[str, Any],
    metadata: dict[str, Any],
    names: list[str] | None = None,
) -> dict[str, Any]:
    """The packed form of ``checkpoint`` (``id`` and ``channel_values`` left out).

    ``names`` is the parent row's name table (``packed["n"]``): reusing it keeps a diff small.
    """
    table = _Names(names)
    out: dict[str, Any] = {"v": checkpoint.get("v")}
    ts = checkpoint.get("ts")
    micros = _pack_ts(ts)
    if micros is not None:
        out["ts"] = micros
    elif "ts" in checkpoint:
        out["tr"] = ts
    versions = checkpoint.get("channel_versions") or {}
    out["cv"], raw = _pack_versions(versions, table)
    if raw:
        out["cr"] = raw
    seen: dict[int, dict[int, int]] = {}
    seen_raw: dict[str, dict[str, Any]] = {}
    for node, by_channel in (checkpoint.get("versions_seen") or {}).items():
        packed, raw = _pack_versions(by_channel, table)
        if raw or type(node) is not str:
            seen_raw[node] = {**raw, **{table.names[i]: _unpack_version(v)
                                        for i, v in packed.items()}}  # fmt: skip
        else:
            seen[table.id(node)] = packed
    out["vs"] = seen
    if seen_raw:
        out["vr"] = seen_raw
    if "updated_channels" in checkpoint:
        updated = checkpoint["updated_channels"]
        mask = _mask(updated, versions)
        if mask is None:
            out["uc"] = updated
        else:
            out["um"] = mask
    if inline:
        out["iv"] = {table.id(channel): value for channel, value in inline.items()}
    extra = {k: v for k, v in checkpoint.items() if k not in _KNOWN}
    if extra:
        out["x"] = extra
    out["md"] = metadata
    out["n"] = table.names
    return out


def _mask(updated: Any, versions: dict[str, Any]) -> bytes | None:
    """``updated`` as a bit mask over the sorted channel names, when that restores it exactly
    (``_unmask`` lists the set bits in name order: so when ``updated`` is strictly increasing)."""
    if type(updated) is not list:
        return None
    names, index = _sorted_index(tuple(versions))
    bits = 0
    previous: str | None = None
    for name in updated:
        i = index.get(name) if type(name) is str else None
        if i is None or (previous is not None and not previous < name):
            return None
        previous = name
        bits |= 1 << i
    return bits.to_bytes((len(names) + 7) // 8, "little")


@functools.lru_cache(maxsize=256)
def _sorted_index(channels: tuple[Any, ...]) -> tuple[list[Any], dict[Any, int]]:
    """``(sorted names, {name: index})``: the channels of a graph are the same at every
    step, so this is sorted once per graph, not once per row (callers only read it)."""
    names = sorted(channels)
    return names, {name: i for i, name in enumerate(names)}


def _unmask(mask: bytes, names: list[str]) -> list[str]:
    """The names whose bit is set (linear: a stored mask may be as long as the names)."""
    return [name for i, name in enumerate(names) if i >> 3 < len(mask) and mask[i >> 3] >> (i & 7) & 1]


def unpack(
    packed: dict[str, Any], checkpoint_id: str
) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
    """``(checkpoint without channel_values, inline values by channel, metadata)``."""
    names: list[str] = packed.get("n", [])
    cp: dict[str, Any] = {"v": packed.get("v"), "id": checkpoint_id}
    if "ts" in packed:
        cp["ts"] = _unpack_ts(packed["ts"])
    elif "tr" in packed:
        cp["ts"] = packed["tr"]
    versions: dict[str, Any] = {names[i]: _unpack_version(n) for i, n in packed["cv"].items()}
    versions.update(packed.get("cr", {}))
    cp["channel_versions"] = versions
    seen: dict[str, dict[str, Any]] = {
        names[node]: {names[i]: _unpack_version(n) for i, n in by_channel.items()}
        for node, by_channel in packed.get("vs", {}).items()
    }
    for node, raw in packed.get("vr", {}).items():
        seen[node] = dict(raw)
    cp["versions_seen"] = seen
    if "um" in packed:
        cp["updated_channels"] = _unmask(packed["um"], sorted(versions))
    elif "uc" in packed:
        cp["updated_channels"] = packed["uc"]
    cp.update(_copy(packed.get("x", {})))
    inline = {names[i]: value for i, value in packed.get("iv", {}).items()}
    return cp, inline, _copy(packed.get("md", {}))


def _copy(value: Any) -> Any:
    """A copy of nested dicts and lists (packed dicts are cached and must not be shared)."""
    if type(value) is dict:
        return {k: _copy(v) for k, v in value.items()}
    if type(value) is list:
        return [_copy(v) for v in value]
    return value


_SUB_GROUPED = 4
"""Diff op of a nested int-keyed map: ``[4, nested diff, [[value, [keys]], ...]]``, the keys
set to one shared value listed once (a step gives all the channels it updates the same new
version)."""


def diff(old: dict[Any, Any], new: dict[Any, Any]) -> dict[Any, Any]:
    """What turns ``old`` into ``new``: ``{key: [0, value] | [1] | [2, nested diff] |
    [4, nested diff, groups]}``."""
    out: dict[Any, Any] = {}
    shared = 0  # keys of ``new`` also in ``old`` (all of them: nothing was deleted)
    for key, value in new.items():
        if key in old:
            shared += 1
            before = old[key]
            if type(before) is type(value):
                if before == value:
                    continue
                if type(value) is dict:
                    nested = diff(before, value)
                    groups = _groups(nested) if len(nested) > 1 else None
                    out[key] = [_SUB_GROUPED, nested, groups] if groups else [_SUB, nested]
                    continue
        out[key] = [_SET, value]
    if shared != len(old):
        for key in old:
            if key not in new:
                out[key] = [_DEL]
    return out


def _groups(changes: dict[Any, Any]) -> list[list[Any]]:
    """Take the sets of one shared int value out of an int-keyed diff; returns the groups."""
    by_value: dict[int, list[int]] = {}
    for key, change in changes.items():
        if type(key) is not int:
            return []
        if change[0] == _SET and type(change[1]) is int:
            keys = by_value.get(change[1])
            if keys is None:
                by_value[change[1]] = [key]
            else:
                keys.append(key)
    groups = [[value, keys] for value, keys in by_value.items() if len(keys) > 1]
    for _, keys in groups:
        for key in keys:
            del changes[key]
    return groups


def patch(old: dict[Any, Any], changes: dict[Any, Any]) -> dict[Any, Any]:
    """``old`` with ``changes`` (from ``diff``) applied; ``old`` is not modified."""
    out = dict(old)
    for key, change in changes.items():
        op = change[0]
        if op == _SET:
            out[key] = change[1]
        elif op == _DEL:
            out.pop(key, None)
        else:
            nested = patch(out.get(key) or {}, change[1])
            if op == _SUB_GROUPED:
                for value, keys in change[2]:
                    for k in keys:
                        nested[k] = value
            out[key] = nested
    return out


_DELTA = 3
"""Diff op of a row's timestamp: microseconds after the parent's."""


def _predict(parent: dict[str, Any]) -> dict[str, Any]:
    """What a child row most likely holds: its parent's, one step further, from the loop."""
    md = parent.get("md")
    if type(md) is dict and type(md.get("step")) is int:
        return {**parent, "md": {**md, "step": md["step"] + 1, "source": "loop"}}
    return parent


def row_diff(parent: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    """``diff`` of a packed row against its parent's: against the predicted next step, and
    with the timestamp as an offset from the parent's."""
    changes = diff(_predict(parent), row)
    ts = changes.get("ts")
    if ts is not None and ts[0] == _SET and type(parent.get("ts")) is int and type(ts[1]) is int:
        changes["ts"] = [_DELTA, ts[1] - parent["ts"]]
    return changes


def row_patch(parent: dict[str, Any], changes: dict[str, Any]) -> dict[str, Any]:
    """The packed row that ``row_diff`` described."""
    ts = changes.get("ts")
    if ts is not None and ts[0] == _DELTA:
        changes = {**changes, "ts": [_SET, parent["ts"] + ts[1]]}
    return patch(_predict(parent), changes)
