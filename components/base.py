"""The contract every building block keeps, as Haystack components do.

* The constructor validates its arguments and loads nothing heavy (a bad argument fails at once,
  with a message that says what is valid).
* ``warm_up()`` loads what the component needs; it is idempotent, so calling it again (say, from
  a second service sharing the component) does nothing.
* Its methods return typed values (``SearchHit``, ``list[float]``, arrays of a stated shape), never
  untyped tuples.

:class:`~components.embedder.Embedder`, :class:`~components.index.PassageIndex`, the rerankers
in :mod:`components.reranker` and the generators in :mod:`components.generator` all keep it;
``tests/test_components.py`` checks each.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable


@runtime_checkable
class Component(Protocol):
    def warm_up(self) -> None:
        """Load what the component needs; a second call does nothing."""
        ...
