"""A fast model first, the English model filling in behind (issue 30).

all-mpnet-base-v2 embeds a highlight in 2x MiniLM's CPU: a 50,000-clipping import takes it
minutes idle and half an hour on a busy machine. Where the English model is not MiniLM,
MiniLM also embeds what waits for the English model, in tables of its own (migration 0017),
and search ranks those highlights through MiniLM (its int8 build, minilm/int8.py, where
install-model made one) until their English vector exists:

- the transaction that stores a highlight's English vector deletes its MiniLM vector and
  queue row (`embedding_rows.drop_interim`, in every library), so the fast set only ever
  holds the English backlog;
- each model ranks its own rows with its own query vector, and the two lists meet only as
  similarities on the shared calibrated scale (calibration.py), never as vectors; a fast
  match whose highlight has an English vector by now is dropped, so none is ranked twice;
- the English worker waits while the fast queue has work (`yields`): on two cores the two
  models would only slow each other, and the fast one makes everything findable first.

Both queues are SQLite rows, so the backlog survives restarts. Nothing here runs when the
English model is MiniLM itself.
"""

from __future__ import annotations

import logging
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.storage.library import Library

if TYPE_CHECKING:
    from screvi_mcp.local.search.embedder import Embedder
    from screvi_mcp.local.search.index import SemanticIndex
    from screvi_mcp.local.search.interim_index import InterimIndex

log = logging.getLogger("screvi_mcp.local.search")

_INDEXES: weakref.WeakKeyDictionary[Library, InterimIndex] = weakref.WeakKeyDictionary()
_attach_lock = threading.Lock()


def index_for(library: Library) -> InterimIndex | None:
    return _INDEXES.get(library)


def attach(library: Library, english: SemanticIndex, *, backfill: str) -> InterimIndex | None:
    """The fast index beside `english` (None when the English model is MiniLM already, or
    MiniLM cannot load: search then waits for the English model, as before)."""
    from screvi_mcp.local.search.embedder import (
        MINILM_MODEL_ID,
        EmbeddingModelError,
        load_english_embedder,
    )
    from screvi_mcp.local.search.interim_index import InterimIndex

    if english.embedder.model_id == MINILM_MODEL_ID:
        return None
    with _attach_lock:
        existing = _INDEXES.get(library)
        if existing is not None:
            return existing

        try:
            fast = _fast_model() or load_english_embedder("minilm")
        except EmbeddingModelError as exc:
            log.info("no fast model beside the English one: %s", exc)
            return None
        index = InterimIndex(library, fast, english)
        index.load()
        wire(library, index)
    if backfill == "now":
        index.worker.drain()
    library.on_close(index.worker.stop)
    index.worker.start()
    return index


def _fast_model() -> Embedder | None:
    """MiniLM's int8 build where install-model made one (half the CPU), else None."""
    from screvi_mcp.local.search.minilm import int8

    try:
        return int8.load_built()
    except Exception as exc:  # a damaged build: the shipped file serves, and the log says why
        log.warning("the int8 build of MiniLM cannot be loaded (%s); using the shipped one", exc)
        return None


def drain(library: Library, progress: Callable[[int, int], None] | None = None) -> None:
    """Embed the fast queue on this thread (a one-shot command: findable by meaning soonest);
    `progress` gets (embedded so far, waiting at the start) after each round."""
    index = _INDEXES.get(library)
    if index is None:
        return
    total = index.pending()

    def report() -> None:
        if progress is not None and total:
            progress(total - min(total, index.pending()), total)

    report()
    index.worker.drain(after_round=report)
    report()


def wire(library: Library, index: InterimIndex) -> None:
    """Make `index` the fast side of its English index (attach does, with its worker)."""
    library.add_listener(index)
    _INDEXES[library] = index
    index.english.defers_to = index.yields


def detach(library: Library) -> None:
    index = _INDEXES.pop(library, None)
    if index is None:
        return
    library.listeners[:] = [each for each in library.listeners if each is not index]
    english = index.english
    english.defers_to = None
    index.worker.stop()


def with_fast_matches(
    library: Library,
    english_matches: list[SemanticMatch],
    text: str,
    filters: Filters,
    min_relevance: float,
    limit: int,
) -> list[SemanticMatch]:
    """`english_matches` (the English index's ranking, just made) with the fast model's
    matches among highlights that have no English vector yet, best similarity first."""
    index = _INDEXES.get(library)
    if index is None:
        return english_matches
    conn = library.connection()
    index.sync(conn)
    if not len(index.matrix):
        return english_matches  # nothing waits: no second query embedding
    english = index.english
    fast = [
        # On the English model's cosine scale, through the shared similarity: the verifier
        # and fusion's tie-break read cosines as the English model's.
        SemanticMatch(match.seq, english.calibration.min_cosine(match.similarity), match.similarity)
        for match in index.semantic_ranking(conn, text, filters, min_relevance, limit)
        if match.seq not in english.matrix
    ]
    if not fast:
        return english_matches
    return sorted([*english_matches, *fast], key=lambda match: -match.similarity)[:limit]
