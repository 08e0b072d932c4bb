"""``stepgraph._introspect``: a function's signature and hints are read once, and again
when the function changed."""

from __future__ import annotations

import inspect
from typing import get_type_hints

from stepgraph import _introspect


def test_remembered_until_the_function_changes() -> None:
    def f(a: int, b: str = "x") -> int:
        return a

    first = _introspect.type_hints(f)
    assert first == get_type_hints(f)
    assert _introspect.type_hints(f) is first
    sig = _introspect.signature(f)
    assert sig == inspect.signature(f) and _introspect.signature(f) is sig

    f.__annotations__ = {"a": float, "return": float}
    assert _introspect.type_hints(f) == {"a": float, "return": float}
    f.__defaults__ = ("y",)
    assert _introspect.signature(f).parameters["b"].default == "y"


def test_a_failed_lookup_is_not_remembered() -> None:
    def g(a: NotYetDefined) -> None:  # noqa: F821
        return None

    try:
        _introspect.type_hints(g)
    except NameError:
        pass
    else:
        raise AssertionError("an unresolvable annotation must raise")
    globals()["NotYetDefined"] = int
    try:
        assert _introspect.type_hints(g) == {"a": int, "return": type(None)}
    finally:
        del globals()["NotYetDefined"]


def test_other_callables_are_not_remembered() -> None:
    class C:
        def __call__(self, x: int) -> int:
            return x

    c = C()
    assert _introspect.signature(c) == inspect.signature(c)
    assert _introspect.type_hints(C.__call__) == {"x": int, "return": int}


def test_derived_facts_are_computed_once_per_function_until_it_changes() -> None:
    calls: list[object] = []

    def count_params(fn: object) -> int:
        calls.append(fn)
        return len(inspect.signature(fn).parameters)  # type: ignore[arg-type]

    def f(a: int, b: int = 1) -> int:
        return a + b

    assert _introspect.derived(f, count_params) == 2
    assert _introspect.derived(f, count_params) == 2
    assert calls == [f]
    f.__defaults__ = (2,)  # a changed function is read again
    assert _introspect.derived(f, count_params) == 2 and calls == [f, f]


def test_a_failed_derivation_is_not_remembered() -> None:
    attempts: list[int] = []

    def flaky(fn: object) -> str:
        attempts.append(1)
        if len(attempts) == 1:
            raise NameError("not yet")
        return "ok"

    def g() -> None:
        return None

    try:
        _introspect.derived(g, flaky)
    except NameError:
        pass
    assert _introspect.derived(g, flaky) == "ok" and len(attempts) == 2


def test_a_dead_function_is_forgotten_and_its_id_not_trusted() -> None:
    import gc

    def make() -> object:
        def h(x: int) -> int:
            return x

        return h

    fn = make()
    assert _introspect.derived(fn, lambda f: f.__name__) == "h"
    key = id(fn)
    assert key in _introspect._DERIVED
    del fn
    gc.collect()
    assert key not in _introspect._DERIVED  # (the weak reference's callback dropped it)


def test_another_function_at_a_reused_id_is_computed_anew() -> None:
    def a(x: int) -> int:
        return x

    def b(y: int) -> int:
        return y

    def first_param(fn: object) -> str:
        return next(iter(inspect.signature(fn).parameters))  # type: ignore[arg-type]

    assert _introspect.derived(a, first_param) == "x"
    # an entry whose weak reference names another function is not used for this one
    ref, stamp, values = _introspect._DERIVED[id(a)]
    _introspect._DERIVED[id(b)] = (ref, stamp, values)
    assert _introspect.derived(b, first_param) == "y"
    assert _introspect.derived(a, first_param) == "x"
