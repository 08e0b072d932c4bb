"""TypeRegistry: which (module, name) pairs a blob may name."""

from __future__ import annotations

import collections
import datetime
import re
import sys
from dataclasses import dataclass

import pytest

from stepgraph.checkpoint.serde import SerializationError, SerializedException, TypeRegistry
from stepgraph.checkpoint.serde.types import decode_surrogates, register_type
from stepgraph.types import Command, Interrupt, Overwrite, Send


@dataclass
class Registered:
    value: int


class Plain:
    pass


def plain_function() -> None:
    """A function in an allowed module: must never resolve."""


def test_stdlib_value_types_resolve_without_registration() -> None:
    """Built-in value types and builtin exceptions are allowed by default."""
    registry = TypeRegistry()
    assert registry.resolve("datetime", "datetime") is datetime.datetime
    assert registry.resolve("collections", "deque") is collections.deque
    assert registry.resolve("builtins", "tuple") is tuple
    assert registry.resolve("builtins", "ValueError") is ValueError
    # LangGraph writes patterns as ("re", "compile"): a fixed stepgraph builder, not re.compile
    assert registry.resolve("re", "compile")("a+", 0) == re.compile("a+")


def test_stepgraph_types_and_langgraph_aliases_resolve() -> None:
    """stepgraph's value types resolve under their own and LangGraph's names."""
    registry = TypeRegistry()
    for cls in (Send, Interrupt, Overwrite, Command):
        assert registry.resolve("stepgraph.types", cls.__name__) is cls
        assert registry.resolve("langgraph.types", cls.__name__) is cls
    assert registry.resolve("langgraph.constants", "Send") is Send


@pytest.mark.parametrize(
    ("module", "name"),
    [
        ("os", "system"),
        ("builtins", "eval"),
        ("builtins", "getattr"),
        ("builtins", "open"),
        ("builtins", "bytearray"),
        ("subprocess", "Popen"),
        ("importlib", "import_module"),
    ],
)
def test_dangerous_names_are_refused(module: str, name: str) -> None:
    """Callables outside the allow-list raise SG401 naming module.name."""
    with pytest.raises(SerializationError) as info:
        TypeRegistry().resolve(module, name)
    assert info.value.code == "SG401"
    assert f"{module}.{name}" in str(info.value)
    assert "register" in (info.value.hint or "")


def test_refused_name_is_not_imported() -> None:
    """Resolving a refused name never imports its module."""
    assert "this" not in sys.modules
    with pytest.raises(SerializationError):
        TypeRegistry().resolve("this", "s")
    assert "this" not in sys.modules


def test_register_allows_a_class_by_qualname() -> None:
    """A registered class resolves without importing anything."""
    registry = TypeRegistry([Registered])
    assert registry.resolve(__name__, "Registered") is Registered
    assert registry.knows(Registered) and not registry.knows(Plain)


def test_register_allows_local_classes() -> None:
    """Classes defined in a function resolve by their qualname once registered."""

    class Local:
        pass

    registry = TypeRegistry()
    registry.register(Local)
    assert registry.resolve(__name__, Local.__qualname__) is Local
    assert registry.resolve(__name__, "Local") is Local


def test_allowed_module_prefix_allows_classes_only() -> None:
    """allow_modules covers classes of the module and submodules, never functions."""
    registry = TypeRegistry(modules=[__name__.split(".")[0]])
    assert registry.resolve(__name__, "Plain") is Plain
    with pytest.raises(SerializationError) as info:
        registry.resolve(__name__, "plain_function")
    assert info.value.code == "SG401"


def test_module_prefix_does_not_match_sibling_names() -> None:
    """Allowing module "json" does not allow a module merely starting with "json"."""
    registry = TypeRegistry(modules=["json"])
    with pytest.raises(SerializationError):
        registry.resolve("jsonschema_fake", "Thing")


def test_allow_names_allows_one_class() -> None:
    """A (module, name) pair allows that class only."""
    registry = TypeRegistry(names=[(__name__, "Plain")])
    assert registry.resolve(__name__, "Plain") is Plain
    with pytest.raises(SerializationError):
        registry.resolve(__name__, "Registered")


def test_allow_all_still_refuses_functions() -> None:
    """allow_all allows any importable class, but never a function."""
    registry = TypeRegistry(allow_all=True)
    assert registry.resolve("fractions", "Fraction").__name__ == "Fraction"
    with pytest.raises(SerializationError):
        registry.resolve("os", "system")


def test_allowed_module_prefix_never_imports() -> None:
    """A module prefix allows classes of loaded modules only: a blob never causes an import."""
    registry = TypeRegistry(modules=["no_such_module_xyz"])
    with pytest.raises(SerializationError) as info:
        registry.resolve("no_such_module_xyz", "Thing")
    assert info.value.code == "SG401" and "not imported" in str(info.value)


def test_exact_name_whose_module_is_missing_is_sg403() -> None:
    """An exactly allowed name whose module cannot be imported gives a clear SG403."""
    registry = TypeRegistry(names=[("no_such_module_xyz", "Thing")])
    with pytest.raises(SerializationError) as info:
        registry.resolve("no_such_module_xyz", "Thing")
    assert info.value.code == "SG403"


def test_non_string_names_are_corrupt() -> None:
    """A pair that is not two strings is a corrupt blob, not a lookup."""
    with pytest.raises(SerializationError) as info:
        TypeRegistry().resolve(["os"], "system")
    assert info.value.code == "SG403"


def test_copy_is_independent() -> None:
    """Registrations on a copy do not leak back into the original."""
    registry = TypeRegistry()
    clone = registry.copy()
    clone.register(Registered)
    assert clone.knows(Registered) and not registry.knows(Registered)


@pytest.mark.usefixtures("clean_global_registry")
def test_register_type_applies_to_every_registry() -> None:
    """register_type allows a class in registries created before and after."""
    before = TypeRegistry()
    assert register_type(Plain) is Plain
    assert before.resolve(__name__, "Plain") is Plain
    assert TypeRegistry().knows(Plain)


def test_register_rejects_non_classes() -> None:
    """Registering something that is not a class is a TypeError."""
    with pytest.raises(TypeError):
        TypeRegistry().register(plain_function)  # type: ignore[arg-type]


def test_serialized_exception_str_is_the_original_repr() -> None:
    """SerializedException prints like LangGraph's string and keeps the type name."""
    exc = SerializedException("app.errors.Boom", "Boom('x')")
    assert str(exc) == "Boom('x')" and exc.type_name == "app.errors.Boom"
    assert isinstance(exc, Exception) and "app.errors.Boom" in repr(exc)


def test_decode_surrogates_restores_lone_surrogates() -> None:
    """decode_surrogates inverts surrogatepass encoding."""
    text = "a\ud800b"
    assert decode_surrogates(text.encode("utf-8", "surrogatepass")) == text
