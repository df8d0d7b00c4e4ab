"""Which library has a passage index: attached when the app opens a library, detached when
it closes. Without the `local` extra (numpy, the model) nothing is attached and passage
search is by keywords alone; the answer says so."""

from __future__ import annotations

import logging
import threading
import time
import weakref
from typing import TYPE_CHECKING

from screvi_mcp.local.storage.library import Library

if TYPE_CHECKING:
    from screvi_mcp.local.passages.index import PassageIndex
    from screvi_mcp.local.passages.multilingual import MultilingualPassageIndex

log = logging.getLogger("screvi_mcp.local.passages")

_INDEXES: weakref.WeakKeyDictionary[Library, PassageIndex] = weakref.WeakKeyDictionary()
_MULTILINGUAL: weakref.WeakKeyDictionary[Library, MultilingualPassageIndex] = (
    weakref.WeakKeyDictionary()
)
_lock = threading.Lock()


def index_for(library: Library) -> PassageIndex | None:
    return _INDEXES.get(library)


def multilingual_for(library: Library) -> MultilingualPassageIndex | None:
    """The multilingual vectors of non-English articles' passages, if attached."""
    return _MULTILINGUAL.get(library)


def attach(library: Library, *, queue_now: bool = False) -> PassageIndex | None:
    """Load the passage vectors and start the worker that embeds queued passages. Passages
    lacking a vector are queued on the worker's thread, or with `queue_now` before this
    returns (so that whoever waits for the queue to drain never sees it empty first)."""
    with _lock:
        existing = _INDEXES.get(library)
        if existing is not None:
            return existing
        try:
            from screvi_mcp.local.passages.index import PassageIndex
            from screvi_mcp.local.search.embedder import load_embedder

            embedder = load_embedder()
        except Exception as exc:  # no extra, or a model that cannot be loaded
            log.info("article passages: keyword search only (%s)", exc)
            drain(library)
            return None
        index = PassageIndex(library, embedder)
        index.load()
        _INDEXES[library] = index
        from screvi_mcp.local.passages import multilingual

        foreign = multilingual.load(library)
        if foreign is not None:
            _MULTILINGUAL[library] = foreign
    library.passage_listeners.append(index.worker.wake)
    library.on_close(index.worker.stop)

    def first() -> None:  # on the worker's thread: opening the library stays quick
        drain(library)
        index.queue_missing()

    if queue_now:
        index.queue_missing()
    index.worker.start(first=first)
    if foreign is not None:
        _start_multilingual(library, foreign)
    return index


def _start_multilingual(library: Library, index: MultilingualPassageIndex) -> None:
    library.passage_listeners.append(index.worker.wake)
    library.on_close(index.worker.stop)

    def first() -> None:
        index.decide_languages()
        index.queue_missing()

    index.worker.start(first=first)


def follow_english_model(library: Library) -> bool:
    """Re-attach the passage index when the configured English model is no longer the one
    it embeds with: after the background move to the default model (model_move.py), which
    passes this as its `on_moved`. True when re-attached.

    Passages have no fast-model tables as highlights do, so this is what a restart did:
    the new index loads the vectors it has (none, the first time), queues every passage
    for the new model, and a passage is found by keywords until its new vector exists. The
    multilingual passage index is re-attached with it (its vectors are kept, only reloaded).
    """
    index = _INDEXES.get(library)
    if index is None or library.closed:
        return False
    try:
        from screvi_mcp.local.search.embedder import load_embedder

        model_id = load_embedder().model_id
    except Exception as exc:  # the new model failed to load: keep the one that works
        log.info("article passages stay on %s (%s)", index.embedder.model_id, exc)
        return False
    if model_id == index.embedder.model_id:
        return False
    detach(library)
    if library.closed:  # the server stopped meanwhile: nothing to attach to
        return False
    return attach(library, queue_now=True) is not None


def drain(library: Library) -> int:
    """Cut the passages of every article still waiting (a backlog left by migration 0016 on
    a library with many bodies), a bounded step per transaction; returns the steps taken."""
    from screvi_mcp.local.storage.store import passages as passage_rows

    steps = 0
    while not library.closed and passage_rows.has_pending(library.connection()):
        with library.write():
            pass  # the write's flush rebuilds the next FLUSH_LIMIT articles
        steps += 1
    return steps


def detach(library: Library) -> None:
    with _lock:
        indexes = [_INDEXES.pop(library, None), _MULTILINGUAL.pop(library, None)]
    for index in indexes:
        if index is None:
            continue
        if index.worker.wake in library.passage_listeners:
            library.passage_listeners.remove(index.worker.wake)
        index.worker.stop()


def wait_until_embedded(library: Library, timeout: float) -> bool:
    """Until no passage waits for a vector (True) or `timeout` seconds pass (False): for
    tests, benchmarks and one-shot commands; a server never waits on this."""
    deadline = time.monotonic() + timeout
    for index in (_INDEXES.get(library), _MULTILINGUAL.get(library)):
        if index is None:
            continue
        if not index.worker.wait_until_empty(index.pending, deadline):
            return False
        index.sync(library.connection())
    return True
