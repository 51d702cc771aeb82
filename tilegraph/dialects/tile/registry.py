"""Registries keyed by ``tile`` op class, for the code that gives ops a meaning elsewhere.

The op classes hold IR and facts; the interpreter's kernels, the fast executor's batched
forms and the cost model's cycles are registered per op class by those packages, xDSL
``@impl`` style. :class:`OpClassRegistry` is the one mechanism they share: a decorator
that registers a value for classes, and a lookup through an op's class hierarchy (the most
derived registered class wins, so a family sharing a base class may share one entry).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Generic, TypeVar

V = TypeVar("V")
F = TypeVar("F")


class OpClassRegistry(Generic[V]):
    """Values of type ``V`` per op class; ``what`` names them in errors ("a kernel")."""

    def __init__(self, what: str) -> None:
        self.what = what
        self._by_class: dict[type, V] = {}

    def register(self, *op_classes: type) -> Callable[[F], F]:
        """A decorator registering its function for ``op_classes``. Registering a class
        twice is an error: two modules would disagree about the op."""

        def register(value: F) -> F:
            for cls in op_classes:
                if cls in self._by_class:
                    name = getattr(cls, "name", cls.__name__)
                    raise ValueError(f"'{name}' ({cls.__name__}) already has {self.what}")
                self._by_class[cls] = value  # pyright: ignore[reportArgumentType]
            return value

        return register

    def lookup(self, op_class: type[Any]) -> V | None:
        """The value registered for ``op_class`` or its nearest base, else None."""
        for cls in op_class.__mro__:
            found = self._by_class.get(cls)
            if found is not None:
                return found
        return None
