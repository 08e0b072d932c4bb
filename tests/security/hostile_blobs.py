"""A corpus of hostile checkpoint blobs: what someone with write access to the database could
plant, and the coded error stepgraph must answer each with.

``corpus(marker)`` returns ``Hostile`` cases whose payloads, if anything in them ran, would
create the file ``marker`` (or run ``id`` into it): tests assert the file never appears.
Every case is the typed blob a saver stores: ``("msgpack", bytes)`` or the legacy
``("json", bytes)``. ``ATTACKS`` groups cases for the closing table of issue 10.

The proof of concept (``poc_msgpack``) ran ``id`` on the main branch before issue 10: it
walks from ``langchain_core.messages.ai`` (an allowed module prefix then) through attribute
paths to ``logging.Formatter``, ``operator.attrgetter``/``methodcaller`` and ``map``, reaching
``os.system`` through a function's ``__globals__``.
"""

from __future__ import annotations

import json
import pickle
from dataclasses import dataclass
from typing import Any

import ormsgpack

Ext = ormsgpack.Ext
SINGLE, POS, KW, METHOD, PYD1, PYD2 = 0, 1, 2, 3, 4, 5
AI, UT = "langchain_core.messages.ai", "langchain_core.messages.utils"


def pack(value: Any) -> bytes:
    return ormsgpack.packb(value)


def ext(code: int, *payload: Any) -> Ext:
    """A msgpack extension laid out as stepgraph and LangGraph write them."""
    return Ext(code, pack(list(payload)))


def raw_ext(code: int, payload: bytes) -> bytes:
    """Raw ext32 bytes (any length, any payload)."""
    return b"\xc9" + len(payload).to_bytes(4, "big") + bytes((code & 0xFF,)) + payload


@dataclass(frozen=True)
class Hostile:
    """One planted blob and the codes stepgraph may answer it with."""

    name: str
    attack: str
    typed: tuple[str, bytes]
    codes: frozenset[str]

    def __repr__(self) -> str:  # pytest ids
        return self.name


def _mp(name: str, attack: str, value: Any, *codes: str) -> Hostile:
    data = value if isinstance(value, bytes) else pack(value)
    return Hostile(name, attack, ("msgpack", data), frozenset(codes))


def _js(name: str, attack: str, value: Any, *codes: str) -> Hostile:
    data = value if isinstance(value, bytes) else json.dumps(value).encode()
    return Hostile(name, attack, ("json", data), frozenset(codes))


def lc2(ident: list[str], **rest: Any) -> dict[str, Any]:
    return {"lc": 2, "type": "constructor", "id": ident, **rest}


def lc1(ident: list[str], **kwargs: Any) -> dict[str, Any]:
    return {"lc": 1, "type": "constructor", "id": ident, "kwargs": kwargs}


# ------------------------------------------------------------------ proofs of concept


def poc_msgpack(marker: str) -> bytes:
    """The blob that ran ``id > marker`` through get_tuple on main before issue 10."""
    fmt = ext(POS, AI, "logging.Formatter", [])
    globals_of = ext(POS, AI, "operator.attrgetter", ["__init__.__globals__"])
    m1 = ext(POS, UT, "inspect.builtins.map", [globals_of, [fmt]])
    get_os = ext(POS, AI, "operator.methodcaller", ["get", "os"])
    m2 = ext(POS, UT, "inspect.builtins.map", [get_os, m1])
    system = ext(POS, AI, "operator.methodcaller", ["system", f"id > {marker}"])
    m3 = ext(POS, UT, "inspect.builtins.map", [system, m2])
    return pack({"messages": ext(SINGLE, "builtins", "tuple", m3)})


def poc_json(marker: str) -> bytes:
    """The same chain in the legacy "json" format (``lc: 2`` constructors)."""
    ai, ut = AI.split("."), UT.split(".")
    fmt = lc2([*ai, "logging.Formatter"])
    globals_of = lc2([*ai, "operator.attrgetter"], args=["__init__.__globals__"])
    m1 = lc2([*ut, "inspect.builtins.map"], args=[globals_of, [fmt]])
    get_os = lc2([*ai, "operator.methodcaller"], args=["get", "os"])
    m2 = lc2([*ut, "inspect.builtins.map"], args=[get_os, m1])
    system = lc2([*ai, "operator.methodcaller"], args=["system", f"id > {marker}"])
    m3 = lc2([*ut, "inspect.builtins.map"], args=[system, m2])
    return json.dumps({"messages": lc2(["builtins", "tuple"], args=[m3])}).encode()


# ------------------------------------------------------------------ builders for the limits


def _nested_objects(levels: int, plain: int) -> bytes:
    """``levels`` tuples inside each other, each holding ``plain`` nested arrays: overflowed
    the C stack (segfault) before issue 10 from about 20 x 1000."""
    inner = b"\x01"
    for _ in range(levels):
        payload = pack("builtins") + pack("tuple")
        payload = b"\x93" + payload + b"\x91" * (plain + 1) + inner
        inner = raw_ext(SINGLE, payload)
    return inner


_M64 = (1 << 64) - 1
_P1, _P2, _P5 = 11400714785074694791, 14029467366897019727, 2870177450012600261
_HASH_MOD = (1 << 61) - 1


def colliding_pairs(n: int) -> list[tuple[int, int]]:
    """``n`` distinct 2-tuples of ints with one hash (CPython's tuple hash is invertible)."""

    def rotl(x: int) -> int:
        return ((x << 31) | (x >> 33)) & _M64

    def rotr(x: int) -> int:
        return ((x >> 31) | (x << 33)) & _M64

    inv1, inv2 = pow(_P1, -1, 1 << 64), pow(_P2, -1, 1 << 64)
    target = (12345 - (2 ^ (_P5 ^ 3527539))) & _M64
    s = rotr((target * inv1) & _M64)
    out: list[tuple[int, int]] = []
    x = 0
    while len(out) < n:
        first = (rotl((_P5 + x * _P2) & _M64) * _P1) & _M64
        y = ((s - first) * inv2) & _M64
        if 0 < y < _HASH_MOD:
            out.append((x, y))
        x += 1
    return out


def _array_key_flood(n: int) -> bytes:
    body = b"".join(b"\x92" + pack(x) + pack(y) + b"\x01" for x, y in colliding_pairs(n))
    return b"\xdf" + n.to_bytes(4, "big") + body


def _big_int(value: int) -> Ext:
    return ext(POS, "builtins", "int", [hex(value), 16])


# ------------------------------------------------------------------ the corpus


def corpus(marker: str) -> list[Hostile]:
    """Every hostile blob, each expected to raise one of its codes (nothing else)."""
    sh = f"touch {marker}"
    cases = [
        # --- the bypasses of the allow-list reported in issue 10
        _mp("poc-msgpack-id", "prefix+attribute walk (PoC)", poc_msgpack(marker), "SG401"),
        _js("poc-json-id", "prefix+attribute walk (PoC)", poc_json(marker), "SG401"),
        _mp("walk-map", "prefix+attribute walk", ext(POS, UT, "inspect.builtins.map", [0, []]),
            "SG401"),
        _mp("walk-methodcaller", "prefix+attribute walk",
            ext(POS, AI, "operator.methodcaller", ["system", sh]), "SG401"),
        _mp("walk-filehandler", "prefix+attribute walk",
            ext(SINGLE, AI, "logging.FileHandler", marker), "SG401"),
        _mp("walk-range-10e7", "prefix+attribute walk",
            ext(SINGLE, "builtins", "tuple", ext(POS, UT, "inspect.builtins.range", [10**7])),
            "SG401"),
        _mp("walk-module-object", "prefix+attribute walk", ext(SINGLE, AI, "logging", []),
            "SG401"),
        _mp("walk-from-allowed-class", "attribute walk from an allowed class",
            ext(SINGLE, "builtins", "tuple.__class__", "x"), "SG401"),
        _mp("walk-globals-of-allowed", "attribute walk from an allowed class",
            ext(SINGLE, "stepgraph.types", "Send.__init__.__globals__", "x"), "SG401"),
        _mp("walk-datetime-method", "attribute walk from an allowed class",
            ext(SINGLE, "datetime", "datetime.fromtimestamp", 0), "SG401"),
        _mp("reexport-name", "re-exported name", ext(SINGLE, "langchain_core.messages",
                                                     "HumanMessage", "x"), "SG401"),
        _mp("dunder-import", "builtin function", ext(SINGLE, "builtins", "__import__", "os"),
            "SG401"),
        # --- the classic deserialization CVE shapes: names of code runners
        *[
            _mp(f"name-{m}.{n}-{code}", "id path into os/subprocess/builtins",
                ext(code, m, n, arg), "SG401")
            for m, n, arg in [
                ("os", "system", sh), ("posix", "system", sh), ("subprocess", "Popen", ["sh"]),
                ("subprocess", "check_output", ["sh", "-c", sh]), ("builtins", "eval", "1"),
                ("builtins", "exec", "1"), ("builtins", "open", marker),
                ("builtins", "getattr", [0, "x"]), ("builtins", "type", ["X", [], {}]),
                ("importlib", "import_module", "os"), ("pty", "spawn", "sh"),
                ("shutil", "rmtree", "/nonexistent"), ("pickle", "loads", b"x"),
                ("functools", "partial", [0]), ("types", "FunctionType", [0, {}]),
                ("ctypes", "CDLL", "libc.so.6"), ("code", "InteractiveInterpreter", []),
                ("webbrowser", "open", "http://127.0.0.1:1"), ("logging", "FileHandler", marker),
                ("runpy", "run_path", marker), ("os", "popen", sh),
            ]
            for code in (SINGLE, POS, KW)
        ],
        _mp("pydantic-code-os", "id path into os/subprocess/builtins",
            ext(PYD2, "os", "system", {"command": sh}, "model_construct", None), "SG401"),
        # --- method extensions: only fixed (class, method) pairs may be called
        _mp("method-fromtimestamp", "method extension",
            ext(METHOD, "datetime", "datetime", 0, "fromtimestamp"), "SG401"),
        _mp("method-path-touch", "method extension",
            ext(METHOD, "pathlib", "PosixPath", marker, "touch"), "SG401"),
        _mp("method-path-read", "method extension",
            ext(METHOD, "pathlib", "Path", "/etc/passwd", "read_text"), "SG401"),
        _mp("method-dunder-class", "method extension",
            ext(METHOD, "builtins", "set", [], "__class__"), "SG401", "SG403"),
        _mp("method-not-a-string", "method extension",
            ext(METHOD, "datetime", "datetime", "x", ["fromisoformat"]), "SG401"),
        _mp("method-model-json", "method extension",
            ext(METHOD, "langchain_core.messages.human", "HumanMessage", "{}",
                "model_validate_json"), "SG401"),
        _mp("pydantic-code-on-set", "wrong extension code for a class",
            ext(PYD2, "builtins", "set", {"x": 1}, "model_construct", None), "SG403"),
        _mp("kw-to-tuple", "wrong extension code for a class",
            ext(KW, "builtins", "tuple", {"iterable": "abc"}), "SG403"),
        _mp("pos-splat-str", "wrong extension code for a class",
            ext(POS, "uuid", "UUID", "12345678123456781234567812345678"), "SG403"),
        # --- pickled payloads and foreign extension types
        Hostile("pickle-blob", "pickled payload",
                ("pickle", pickle.dumps(["os.system", sh])), frozenset({"SG401"})),
        _mp("pickle-ext", "pickled payload",
            ext(SINGLE, "pickle", "loads", pickle.dumps(0)), "SG401"),
        _mp("numpy-ext", "unsupported extension code", Ext(6, pack(["<i8", [1], "C", b"x"])),
            "SG403"),
        *[_mp(f"ext-code-{c}", "unsupported extension code", Ext(c, pack(["os", "system", sh])),
              "SG403") for c in (7, 42, 83, 127)],
        _mp("ext-code-minus-2", "unsupported extension code", b"\xc7\x03\xfe\x93\x01\x02\x03",
            "SG403"),
        _mp("ext-not-array", "malformed extension", Ext(0, pack("os.system")), "SG403"),
        _mp("ext-name-not-str", "malformed extension", Ext(0, pack([["os"], "system", 1])),
            "SG403"),
        _mp("ext-bad-length", "malformed extension", b"\xc9\x00\x00\x10\x00\x00\x93", "SG403"),
        # --- legacy "json" blobs
        *[
            _js(f"json-lc2-{'.'.join(i)}", "constructor-style JSON (lc 2)",
                {"v": lc2(i, args=a)}, "SG401")
            for i, a in [
                (["os", "system"], [sh]), (["subprocess", "Popen"], [["sh", "-c", sh]]),
                (["builtins", "eval"], ["1"]), (["builtins", "exec"], ["1"]),
                (["importlib", "import_module"], ["os"]), (["builtins", "open"], [marker]),
                ([*AI.split("."), "logging.FileHandler"], [marker]),
                ([*UT.split("."), "inspect.builtins.range"], [10**7]),
            ]
        ],
        _js("json-lc2-method", "constructor-style JSON (lc 2)",
            lc2(["pathlib", "Path"], args=[marker], method="touch"), "SG401"),
        _js("json-lc2-method-list", "constructor-style JSON (lc 2)",
            lc2(["datetime", "datetime"], args=[0], method=[None, "fromtimestamp"]), "SG401"),
        *[
            _js(f"json-lc1-{i[-1]}", "constructor-style JSON (lc 1, langchain)",
                {"v": lc1(i, **kw)}, "SG401")
            for i, kw in [
                (["os", "system"], {}),
                (["langchain", "llms", "openai", "OpenAI"], {"openai_api_base": "http://x"}),
                (["langchain_core", "prompts", "chat", "ChatPromptTemplate"],
                 {"messages": [], "template_format": "jinja2"}),
                (["langchain_core", "prompts", "prompt", "PromptTemplate"],
                 {"template": "{{ ''.__class__ }}", "template_format": "jinja2",
                  "input_variables": []}),
                (["langchain", "schema", "messages", "os.system"], {}),
                (["langchain_core", "documents", "base", "Blob"], {"path": "/etc/passwd"}),
            ]
        ],
        _js("json-bad-id", "constructor-style JSON (lc 2)",
            lc2([{"x": 1}, "system"]), "SG403"),
        _js("json-deep", "nesting", b"[" * 100_000 + b"]" * 100_000, "SG406"),
        _js("json-int-digits", "big numbers", b"[" + b"9" * 100_000 + b"]", "SG406"),
        _js("json-decimal-exp", "big numbers",
            lc2(["decimal", "Decimal"], args=["1e999999999999"]), "SG406"),
        _js("json-fraction-exp", "big numbers",
            lc2(["fractions", "Fraction"], args=["1e10000000"]), "SG403", "SG406"),
        _js("json-flood", "hash collisions",
            lc2(["builtins", "set"], args=[[lc2(["builtins", "tuple"], args=[list(p)])
                                             for p in colliding_pairs(200)]]), "SG406"),
        _js("json-corrupt", "corrupt data", b"{\"lc\": 2, ", "SG403"),
        # --- bounded decoding: numbers
        _mp("fraction-1e10000000", "big numbers",
            ext(SINGLE, "fractions", "Fraction", "1e10000000"), "SG403", "SG406"),
        _mp("fraction-digits", "big numbers",
            ext(SINGLE, "fractions", "Fraction", "1/" + "9" * 20_000), "SG406"),
        _mp("decimal-exponent", "big numbers",
            ext(SINGLE, "decimal", "Decimal", "1e999999999999"), "SG406"),
        _mp("decimal-digits", "big numbers",
            ext(SINGLE, "decimal", "Decimal", "9" * 50_000), "SG406"),
        _mp("int-hex-bits", "big numbers", ext(POS, "builtins", "int", ["f" * 40_000, 16]),
            "SG406"),
        _mp("int-decimal-digits", "big numbers", ext(POS, "builtins", "int", ["9" * 50_000, 10]),
            "SG406"),
        _mp("int-single-digits", "big numbers", ext(SINGLE, "builtins", "int", "9" * 50_000),
            "SG406"),
        _mp("fraction-big-ints", "big numbers",
            ext(POS, "fractions", "Fraction", [_big_int(1 << 100_000), 3]), "SG406"),
        _mp("timedelta-extreme", "datetime extremes",
            ext(POS, "datetime", "timedelta", [10**12, 0, 0]), "SG403"),
        _mp("timedelta-float-inf", "datetime extremes",
            ext(POS, "datetime", "timedelta", [1e308, 0, 0]), "SG403"),
        _mp("datetime-year", "datetime extremes",
            ext(KW, "datetime", "datetime", {"year": 10**18, "month": 1, "day": 1}), "SG403"),
        _mp("datetime-iso-long", "datetime extremes",
            ext(METHOD, "datetime", "datetime", "2024-01-01T" + "9" * 100_000, "fromisoformat"),
            "SG403"),
        _mp("zoneinfo-traversal", "file access", ext(SINGLE, "zoneinfo", "ZoneInfo",
                                                     "../../../../etc/passwd"), "SG403"),
        _mp("zoneinfo-absolute", "file access", ext(SINGLE, "zoneinfo", "ZoneInfo", "/etc/passwd"),
            "SG403"),
        # --- bounded decoding: nesting
        _mp("nested-objects-segfault", "nesting", _nested_objects(40, 1000), "SG406"),
        _mp("nested-objects-300", "nesting", _nested_objects(300, 0), "SG406"),
        _mp("nested-arrays-100k", "nesting", b"\x91" * 100_000 + b"\x01", "SG406"),
        _mp("nested-maps-100k", "nesting", b"\x81\xa1k" * 100_000 + b"\x01", "SG406"),
        # --- bounded decoding: hash collisions and sizes
        # (the msgpack backend refuses array keys outright: SG403)
        _mp("flood-array-keys", "hash collisions", _array_key_flood(8000), "SG406", "SG403"),
        _mp("flood-set-tuples", "hash collisions", ext(SINGLE, "builtins", "set", [
            ext(SINGLE, "builtins", "tuple", list(p)) for p in colliding_pairs(3000)]), "SG406"),
        _mp("flood-frozenset-bigints", "hash collisions", ext(SINGLE, "builtins", "frozenset", [
            _big_int(k * _HASH_MOD + 7) for k in range(10, 3010)]), "SG406"),
        _mp("flood-dict-pairs", "hash collisions", ext(SINGLE, "builtins", "dict", [
            [_big_int(k * _HASH_MOD + 5), 1] for k in range(10, 3010)]), "SG406"),
        _mp("flood-uuids", "hash collisions", ext(SINGLE, "builtins", "set", [
            ext(SINGLE, "uuid", "UUID", f"{k * _HASH_MOD + 3:032x}") for k in range(10, 3010)]),
            "SG406"),
        _mp("huge-array-length", "huge declared lengths", b"\xdd\xff\xff\xff\xff\x01", "SG403"),
        _mp("huge-map-length", "huge declared lengths", b"\xdf\xff\xff\xff\xff\x01", "SG403"),
        _mp("huge-str-length", "huge declared lengths", b"\xdb\xff\xff\xff\xffab", "SG403"),
        _mp("huge-bin-length", "huge declared lengths", b"\xc6\xff\xff\xff\xffab", "SG403"),
        _mp("huge-ext-length", "huge declared lengths", b"\xc9\xff\xff\xff\xff\x00\x93", "SG403"),
        _mp("regex-total-size", "regular expressions", [
            ext(POS, "re", "compile", [f"x{i}" + "a" * 40_000, 0]) for i in range(3)], "SG406"),
        _mp("regex-deep-groups", "regular expressions",
            ext(POS, "re", "compile", ["(" * 5000 + ")" * 5000, 0]), "SG406"),
        _mp("dataclass-like-setattr", "model reconstruction",
            ext(PYD2, "langchain_core.messages.human", "HumanMessage", ["not", "a", "map"],
                "model_construct", None), "SG403"),
        _mp("model-fields-set-bad", "model reconstruction",
            ext(PYD2, "langchain_core.messages.human", "HumanMessage", {"content": "x"},
                "model_construct", {"a": 1}), "SG403"),
        _mp("corrupt-truncated", "corrupt data", b"\x93\x01", "SG403"),
        _mp("corrupt-reserved-byte", "corrupt data", b"\xc1", "SG403"),
    ]
    names = [c.name for c in cases]
    assert len(names) == len(set(names)), "duplicate case names"
    return cases


def attack_counts(cases: list[Hostile]) -> dict[str, int]:
    """How many cases each attack has (for the closing table)."""
    out: dict[str, int] = {}
    for case in cases:
        out[case.attack] = out.get(case.attack, 0) + 1
    return out
