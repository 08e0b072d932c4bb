"""Fuzzing the type references of blobs: no object outside the allow-list is ever created.

Hypothesis builds msgpack extensions and legacy JSON constructors from pools of dangerous and
legitimate module and class names, attribute paths, random dotted names, every extension
code, method names and nested arguments (themselves often extensions). Each blob is decoded
with the default serializer (both msgpack backends), and through every saver after being
planted in its storage. Three monitors watch each decode:

* the resolver is instrumented: every object ``TypeRegistry.resolve`` returns must be an
  entry of the built-in allow-list (or a class registered on the serializer);
* the decoded value is walked: every object in it must be of an allowed type;
* an audit hook records process starts, exec/compile, imports and file writes: none may
  happen (and the marker file the payloads try to create never appears).

Any result other than a value or a ``SerializationError`` fails the test.
"""

from __future__ import annotations

import asyncio
import collections
import json
import operator
import re
import sqlite3
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, TypedDict

import ormsgpack
import pytest
from hostile_blobs import raw_ext
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from stepgraph.checkpoint.serde import JsonPlusSerializer, SerializationError, types
from stepgraph.checkpoint.serde._allowlist import _FIXED_IMPORTS, builtin_table, fixed_import
from stepgraph.graph import START, StateGraph

MARKER = "/tmp/stepgraph-fuzz-marker-never-created"

MODULES = [
    "builtins", "os", "posix", "subprocess", "sys", "datetime", "collections", "decimal",
    "fractions", "uuid", "pathlib", "pathlib._local", "re", "zoneinfo", "ipaddress",
    "operator", "functools", "logging", "inspect", "importlib", "pickle", "types", "code",
    "shutil", "stepgraph.types", "stepgraph.store.base", "stepgraph.checkpoint.serde.types",
    "stepgraph.checkpoint.serde._allowlist", "stepgraph.checkpoint.base", "langgraph.types",
    "langgraph.constants", "langchain_core.messages", "langchain_core.messages.ai",
    "langchain_core.messages.utils", "langchain_core.messages.human",
    "langchain_core.documents.base", "langchain_core.load.load", "langchain_core.prompts.chat",
    __name__, "", ".", "os.path", "builtins.__dict__",
]  # fmt: skip
NAMES = [
    "tuple", "set", "frozenset", "dict", "list", "int", "complex", "map", "filter", "range",
    "eval", "exec", "getattr", "__import__", "open", "type", "object", "system", "popen",
    "Popen", "check_output", "methodcaller", "attrgetter", "partial", "FileHandler",
    "Formatter", "import_module", "loads", "datetime", "date", "time", "timedelta",
    "timezone", "deque", "OrderedDict", "Counter", "Decimal", "Fraction", "UUID", "Path",
    "PosixPath", "compile", "ZoneInfo", "IPv4Address", "Send", "Interrupt", "Command",
    "Overwrite", "Item", "HumanMessage", "AIMessage", "Document", "Blob", "ChatPromptTemplate",
    "Reviver", "SerializedException", "decode_surrogates", "compile_pattern", "builtin_table",
    "check_args", "ValueError", "SystemExit", "KeyboardInterrupt", "inspect.builtins.map",
    "operator.methodcaller", "logging.FileHandler", "Send.__init__", "tuple.__class__",
    "datetime.fromtimestamp", "__class__", "__globals__", "__builtins__", "os.system",
    "<locals>.X", "", "Victim", "Victim.Inner", "victim_function", "TypeRegistry",
    "JsonPlusSerializer", "SaverError",
]  # fmt: skip
METHODS = ["fromisoformat", "fromtimestamp", "model_construct", "model_validate",
           "model_validate_json", "construct", "__class__", "__init__", "read_text", "touch",
           "system", "fromhex", None, 1]  # fmt: skip
STRINGS = [f"touch {MARKER}", MARKER, "id", "__globals__", "os", "2024-01-02T03:04:05",
           "1e10000000", "12345678123456781234567812345678", "UTC", "a+", "/etc/passwd"]


class Victim:
    """A class of an allowed module (the test module) that is never registered."""

    class Inner:
        pass

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        raise AssertionError("a blob constructed an unregistered class")


def victim_function(*args: Any) -> None:
    raise AssertionError("a blob called a function")


def _real_pairs() -> list[tuple[str, str]]:
    """``(module, attribute)`` pairs that exist: every public name of the pool's modules
    (functions, classes, submodules), so the fuzzer names real targets often."""
    import importlib

    out: list[tuple[str, str]] = []
    for module in MODULES:
        try:
            mod = importlib.import_module(module)
        except Exception:
            continue
        out.extend((module, name) for name in sorted(vars(mod)) if not name.startswith("__"))
    return out


REAL_PAIRS = _real_pairs()
identifier = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)
dotted = st.lists(identifier, min_size=1, max_size=3).map(".".join)
module_names = st.sampled_from(MODULES) | dotted
class_names = st.sampled_from(NAMES) | dotted
pairs = st.sampled_from(REAL_PAIRS) | st.tuples(module_names, class_names)
leaves = st.one_of(
    st.none(), st.booleans(), st.integers(-(2**63), 2**64 - 1), st.floats(),
    st.text(max_size=12), st.binary(max_size=12), st.sampled_from(STRINGS),
)  # fmt: skip
codes = st.sampled_from([0, 1, 2, 3, 4, 5]) | st.integers(-128, 127)


class RawExt:
    """An extension of any code (-128..127; the libraries only build 0..127)."""

    __slots__ = ("code", "data")

    def __init__(self, code: int, data: bytes) -> None:
        self.code, self.data = code, data


def _pack(value: Any) -> bytes:
    """msgpack bytes of fuzz values (``RawExt`` included)."""
    if isinstance(value, RawExt):
        return raw_ext(value.code, value.data)
    if isinstance(value, list):
        return _header(0x90, 0xDC, len(value)) + b"".join(_pack(v) for v in value)
    if isinstance(value, dict):
        return _header(0x80, 0xDE, len(value)) + b"".join(
            _pack(k) + _pack(v) for k, v in value.items())
    return ormsgpack.packb(value)


def _header(fix: int, wide: int, n: int) -> bytes:
    return bytes((fix | n,)) if n < 16 else bytes((wide,)) + n.to_bytes(2, "big")


def _ext(code: int, module: str, name: str, arg: Any, extra: list[Any]) -> RawExt:
    return RawExt(code, _pack([module, name, arg, *extra]))


def _data(children: st.SearchStrategy[Any]) -> st.SearchStrategy[Any]:
    return st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=6), children,
                                                            max_size=3)


exts = st.deferred(lambda: st.builds(
    lambda code, pair, arg, extra: _ext(code, pair[0], pair[1], arg, extra), codes, pairs, args,
    st.lists(st.sampled_from(METHODS) | st.lists(st.text(max_size=4), max_size=2), max_size=2),
))
args = st.recursive(leaves | exts, _data, max_leaves=8)
msgpack_blobs = st.recursive(exts | leaves, _data, max_leaves=6).map(_pack)


def _constructor(lc: int, module: str, name: str, a: Any, kw: Any, method: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"lc": lc, "type": "constructor", "id": [*module.split("."), name]}
    if a is not None:
        out["args"] = a
    if kw is not None:
        out["kwargs"] = kw
    if method is not None:
        out["method"] = method
    return out


json_leaves = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.text(max_size=10) \
    | st.sampled_from(STRINGS)
constructors = st.deferred(lambda: st.builds(
    lambda lc, pair, a, kw, method: _constructor(lc, pair[0], pair[1], a, kw, method),
    st.sampled_from([1, 2, 3]), pairs,
    st.none() | st.lists(json_args, max_size=3), st.none() | st.dictionaries(
        st.text(max_size=6), json_args, max_size=2),
    st.none() | st.sampled_from(METHODS) | st.lists(st.sampled_from(METHODS), max_size=2),
))
json_args = st.recursive(json_leaves | constructors, lambda c: st.lists(c, max_size=3),
                         max_leaves=6)
json_blobs = json_args.map(lambda v: json.dumps(v).encode())
typed_blobs = msgpack_blobs.map(lambda b: ("msgpack", b)) | json_blobs.map(lambda b: ("json", b))


# ------------------------------------------------------------------ the monitors


def _allowed_targets(serde: JsonPlusSerializer) -> set[int]:
    allowed = {id(obj) for obj in builtin_table().values()}
    allowed |= {id(obj) for key in _FIXED_IMPORTS if (obj := fixed_import(key)) is not None}
    allowed |= {id(obj) for obj in serde.registry._classes.values()}
    allowed |= {id(obj) for obj in types._GLOBAL_CLASSES.values()}
    return allowed


def _allowed_types() -> set[type]:
    out = {dict, list, str, bytes, bytearray, int, float, bool, type(None), re.Pattern}
    out |= {obj for obj in builtin_table().values() if isinstance(obj, type)}
    out |= {obj for key in _FIXED_IMPORTS if isinstance(obj := fixed_import(key), type)}
    out |= set(types._GLOBAL_CLASSES.values())
    try:
        import msgpack

        out.add(msgpack.Timestamp)  # msgpack's own extension -1 (the fallback backend)
    except ImportError:
        pass
    return out


ALLOWED_TYPES = _allowed_types()


def assert_only_allowed(value: Any, depth: int = 0) -> None:
    """Every object reachable in a decoded value is of an allowed type."""
    assert type(value) in ALLOWED_TYPES, f"decoding created a {type(value)!r}"
    if depth > 60:
        return
    if isinstance(value, dict):
        for k, v in value.items():
            assert_only_allowed(k, depth + 1)
            assert_only_allowed(v, depth + 1)
    elif isinstance(value, (list, tuple, set, frozenset, collections.deque)):
        for item in value:
            assert_only_allowed(item, depth + 1)
    elif isinstance(value, BaseException):
        for item in value.args:
            assert_only_allowed(item, depth + 1)
    elif hasattr(value, "__dict__") and not isinstance(value, type):
        for item in vars(value).values():
            assert_only_allowed(item, depth + 1)


@contextmanager
def resolver_monitor(serde: JsonPlusSerializer) -> Iterator[list[Any]]:
    """Record what the resolver returns; fail on anything outside the allow-list."""
    original = types.TypeRegistry.resolve
    allowed = _allowed_targets(serde)
    returned: list[Any] = []

    def resolve(self: Any, module: Any, name: Any) -> Any:
        obj = original(self, module, name)
        returned.append(obj)
        assert id(obj) in allowed, f"the resolver returned {obj!r} for {module!r}/{name!r}"
        return obj

    types.TypeRegistry.resolve = resolve  # type: ignore[method-assign]
    try:
        yield returned
    finally:
        types.TypeRegistry.resolve = original  # type: ignore[method-assign]


def check_decode(serde: JsonPlusSerializer, typed: tuple[str, bytes], watch: Any) -> None:
    """Decode under all three monitors."""
    with resolver_monitor(serde), watch.reading():
        try:
            value = serde.loads_typed(typed)
        except SerializationError:
            return
    assert_only_allowed(value)


@pytest.fixture(scope="module")
def warm() -> None:
    """First-use imports of the decoder's built-in types, outside the audit watch."""
    for backend in ("ormsgpack", "msgpack"):
        for case in [("builtins", "tuple"), ("decimal", "Decimal"), ("zoneinfo", "ZoneInfo"),
                     ("langchain_core.messages.human", "HumanMessage")]:
            try:
                JsonPlusSerializer(backend=backend).loads_typed(
                    ("msgpack", ormsgpack.packb(ormsgpack.Ext(0, ormsgpack.packb([*case, "x"])))))
            except Exception:
                pass
    for key in _FIXED_IMPORTS:
        fixed_import(key)


FUZZ = settings(max_examples=250, deadline=None, derandomize=True,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.function_scoped_fixture,
                                       HealthCheck.filter_too_much])


@pytest.mark.parametrize("backend", ["ormsgpack", "msgpack"])
@FUZZ
@given(typed=typed_blobs)
def test_fuzzed_type_references_never_leave_the_allow_list(
    backend: str, typed: tuple[str, bytes], warm: None, watch: Any
) -> None:
    check_decode(JsonPlusSerializer(backend=backend), typed, watch)
    assert not Path(MARKER).exists()


@FUZZ
@given(typed=typed_blobs)
def test_fuzzed_references_with_an_allowed_module_prefix(
    typed: tuple[str, bytes], warm: None, watch: Any
) -> None:
    """``allowed_modules=[this test module, "langchain_core"]`` still allows only classes
    defined in them under their exact names (never ``Victim``'s constructor: it raises)."""
    serde = JsonPlusSerializer(allowed_modules=[__name__, "langchain_core"])
    try:
        check_decode(serde, typed, watch)
    except AssertionError as exc:
        assert "unregistered class" not in str(exc) and "called a function" not in str(exc)
        raise


# ------------------------------------------------------------------ through every saver


class State(TypedDict):
    messages: Annotated[list, operator.add]


def _node(state: State) -> dict[str, Any]:
    return {"messages": [1]}


def _graph(saver: Any) -> Any:
    return StateGraph(State).add_node("n", _node).add_edge(START, "n").compile(checkpointer=saver)


class Planted:
    """One seeded thread per saver kind; each example overwrites its messages blobs."""

    def __init__(self, kind: str, tmp: Path, pg_dsn: str | None) -> None:
        self.kind = kind
        self.config = {"configurable": {"thread_id": "fz"}}
        self.memory = None
        if kind == "memory":
            from stepgraph.checkpoint.memory import InMemorySaver

            self.memory = InMemorySaver()
            _graph(self.memory).invoke({"messages": [0]}, self.config)
        elif kind.startswith("sqlite"):
            from stepgraph.checkpoint.sqlite import SqliteSaver

            self.path = str(tmp / f"{kind}.db")
            with SqliteSaver.from_conn_string(self.path) as saver:
                _graph(saver).invoke({"messages": [0]}, self.config)
        else:
            from stepgraph.checkpoint.postgres import PostgresSaver

            assert pg_dsn is not None
            self.dsn = pg_dsn
            self.config = {"configurable": {"thread_id": f"fz{uuid.uuid4().hex[:6]}"}}
            with PostgresSaver.from_conn_string(pg_dsn) as saver:
                saver.setup()
                _graph(saver).invoke({"messages": [0]}, self.config)

    def plant(self, typed: tuple[str, bytes]) -> None:
        typ = "" if typed[0] == "msgpack" else typed[0]
        tid = self.config["configurable"]["thread_id"]
        if self.memory is not None:
            for key in [k for k in self.memory.blobs if k[2] == "messages"]:
                self.memory.blobs[key] = (typed[0], typed[1], None)
            return
        sql = ("UPDATE sg_checkpoint_blobs SET type = ?, blob = ?, base_version = NULL "
               "WHERE thread_id = ? AND channel = 'messages'")
        if self.kind.startswith("sqlite"):
            with sqlite3.connect(self.path) as conn:
                conn.execute(sql, (typ, typed[1], tid))
        else:
            import psycopg

            with psycopg.connect(self.dsn, autocommit=True) as conn:
                conn.execute(sql.replace("?", "%s"), (typ, typed[1], tid))

    def read(self, watch: Any) -> None:
        """get_tuple, list and get_state on a saver of this kind (each under the watch)."""
        if self.memory is not None:
            self._sync_reads(self.memory, watch)
        elif self.kind == "sqlite":
            from stepgraph.checkpoint.sqlite import SqliteSaver

            with SqliteSaver.from_conn_string(self.path) as saver:
                self._sync_reads(saver, watch)
        elif self.kind == "postgres":
            from stepgraph.checkpoint.postgres import PostgresSaver

            with PostgresSaver.from_conn_string(self.dsn) as saver:
                self._sync_reads(saver, watch)
        else:
            asyncio.run(self._async_reads(watch))

    def _sync_reads(self, saver: Any, watch: Any) -> None:
        graph = _graph(saver)
        for read in (lambda: saver.get_tuple(self.config), lambda: list(saver.list(self.config)),
                     lambda: graph.get_state(self.config)):
            with watch.reading():
                try:
                    read()
                except SerializationError:
                    continue
            snapshot = graph.get_state(self.config)
            assert_only_allowed(snapshot.values)

    async def _async_reads(self, watch: Any) -> None:
        if self.kind == "sqlite-async":
            from stepgraph.checkpoint.sqlite.aio import AsyncSqliteSaver as Saver

            opened = Saver.from_conn_string(self.path)
        else:
            from stepgraph.checkpoint.postgres.aio import AsyncPostgresSaver as Saver

            opened = Saver.from_conn_string(self.dsn)
        async with opened as saver:
            graph = _graph(saver)

            async def alist() -> list[Any]:
                return [t async for t in saver.alist(self.config)]

            for read in (lambda: saver.aget_tuple(self.config), alist,
                         lambda: graph.aget_state(self.config)):
                with watch.reading():
                    try:
                        await read()
                    except SerializationError:
                        pass


SAVER_FUZZ = settings(max_examples=20, deadline=None, derandomize=True,
                      suppress_health_check=[HealthCheck.too_slow,
                                             HealthCheck.function_scoped_fixture])


@pytest.fixture(params=["memory", "sqlite", "sqlite-async", "postgres", "postgres-async"])
def planted(request: pytest.FixtureRequest, tmp_path: Path) -> Planted:
    dsn = request.getfixturevalue("pg_schema") if request.param.startswith("postgres") else None
    return Planted(request.param, tmp_path, dsn)


@SAVER_FUZZ
@given(typed=typed_blobs)
def test_fuzzed_blobs_planted_in_every_saver(
    planted: Planted, typed: tuple[str, bytes], warm: None, watch: Any
) -> None:
    planted.plant(typed)
    with resolver_monitor(JsonPlusSerializer()):
        planted.read(watch)
    assert not Path(MARKER).exists()
