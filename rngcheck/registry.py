"""The things of one kind, by name: one registry style for every kind rngcheck keeps.

Backends (their entry points fill one), conformance axes, generators, numbers conventions,
statistical tests and diagnosis ids are each a :class:`Registry`. The rules, the same for all:

1. A name is registered once; a second registration of the same name is a bug (ValueError).
2. The registry may be filled lazily: ``load``, given at construction, runs once, on the first
   read, and imports or builds what it holds (a registry never depends on an import's side effect
   having happened already).
3. Order is registration order (the order tables, reports and the CLI list them in).
4. Asking for a name it does not hold is one line naming the kind and the names it knows
   (``error``, RngcheckError unless the kind says another class).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import Generic, TypeVar

from .errors import RngcheckError

T = TypeVar("T")


class Registry(Generic[T]):
    """Named things of one kind (rules 1-4 of this module)."""

    def __init__(self, kind: str, load: Callable[[], object] | None = None,
                 error: type[Exception] = RngcheckError) -> None:
        self.kind = kind
        self._load = load
        self._error = error
        self._items: dict[str, T] = {}
        self._loading = False

    def _loaded(self) -> dict[str, T]:
        if self._load is not None and not self._loading:
            load, self._loading = self._load, True
            try:
                load()
                self._load = None
            finally:
                self._loading = False
        return self._items

    def add(self, name: str, item: T) -> T:
        """Register ``item`` as ``name`` (rule 1); returns it, so that ``X = registry.add(...)`` reads well."""
        if not name:
            raise ValueError(f"a {self.kind} needs a name")
        if name in self._items:
            raise ValueError(f"{self.kind} {name!r} is registered twice")
        self._items[name] = item
        return item

    def get(self, name: str) -> T:
        """The item registered as ``name``; rule 4's one-line error otherwise."""
        items = self._loaded()
        if name in items:
            return items[name]
        raise self._error(f"unknown {self.kind} {name!r} (known: {', '.join(items) or 'none'})")

    def find(self, name: str) -> T | None:
        return self._loaded().get(name)

    def names(self) -> tuple[str, ...]:
        return tuple(self._loaded())

    def items(self) -> list[tuple[str, T]]:
        return list(self._loaded().items())

    def values(self) -> list[T]:
        return list(self._loaded().values())

    def __contains__(self, name: object) -> bool:
        return name in self._loaded()

    def __iter__(self) -> Iterator[str]:
        return iter(self.names())

    def __len__(self) -> int:
        return len(self._loaded())

    def __getitem__(self, name: str) -> T:
        return self.get(name)
