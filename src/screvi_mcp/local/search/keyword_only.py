"""Why a library's search is keyword-only, for the answers that must say so.

Attaching the semantic index can fail (a model that does not load, a library embedded by
another model): search then matches words only, and an agent told to "lower min_relevance"
would be misled. The reason is kept here, per library, and /search reports it.
"""

from __future__ import annotations

import weakref

from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage.library import Library

_REASONS: weakref.WeakKeyDictionary[Library, str] = weakref.WeakKeyDictionary()
NOT_ATTACHED = "semantic search is not set up for this library"


def record(library: Library, reason: str) -> None:
    _REASONS[library] = reason


def reason_for(library: Library) -> str | None:
    """None when search uses meaning; else why it matches keywords only."""
    if semantic_index_for(library) is not None:
        return None
    return _REASONS.get(library, NOT_ATTACHED)
