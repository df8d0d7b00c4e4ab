"""Which library has a semantic index attached.

A weak mapping, so that the index lives exactly as long as its library and nothing in
`Library` itself has to know that search exists. The engine sees the index only through the
`SemanticSide` protocol, so it imports nothing that needs numpy.
"""

from __future__ import annotations

import sqlite3
import weakref
from typing import Protocol

from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.storage.library import Library


class SemanticSide(Protocol):
    def semantic_ranking(
        self,
        conn: sqlite3.Connection,
        text: str,
        filters: Filters,
        min_relevance: float,
        limit: int,
    ) -> list[SemanticMatch]: ...

    def verify(
        self, conn: sqlite3.Connection, text: str, matches: list[SemanticMatch]
    ) -> dict[int, float]: ...


_INDEXES: weakref.WeakKeyDictionary[Library, SemanticSide] = weakref.WeakKeyDictionary()


def register(library: Library, index: SemanticSide) -> None:
    _INDEXES[library] = index


def semantic_index_for(library: Library) -> SemanticSide | None:
    return _INDEXES.get(library)


def unregister(library: Library) -> None:
    _INDEXES.pop(library, None)
