"""Wiring the semantic index into a library: at start-up, and after a change of model.

`attach_semantic_index` is what the app calls when it opens a library; `reindex` is what
`screvi-mcp reindex` runs. Neither module-level import here needs numpy: without the
`local` extra, attaching logs once and search stays keyword-only.
"""

from __future__ import annotations

import logging
import os
import sys
import threading
from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from screvi_mcp.local.search import blas_threads, interim, keyword_only, multilingual, registry
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.preflight import LOCAL_EXTRA_HINT

if TYPE_CHECKING:
    from screvi_mcp.local.search.index import SemanticIndex

log = logging.getLogger("screvi_mcp.local.search")

Progress = Callable[[int, int], None]

# How long a one-shot command waits, after its own drain, for rows another worker holds.
DRAIN_WAIT_SECONDS = 120.0
# A wait for the queue to empty gives up when it has not shrunk for this long (a stuck or
# failing worker), however much time it was otherwise allowed.
STALL_SECONDS = 60.0

_warned: set[str] = set()
_attach_lock = threading.Lock()


class SemanticSearchUnavailable(RuntimeError):
    """The optional extra or the configured model is missing."""


def attach_semantic_index(
    library: Library, *, backfill: str = "background"
) -> SemanticIndex | None:
    """Load the library's vectors and keep them in sync; None when search stays keyword-only.

    Opening embeds nothing that is already embedded: vectors are read from SQLite into one
    matrix, and the index's worker starts draining the embedding queue (what writes queued,
    here or in a process that died before embedding it). `backfill` also queues live
    highlights lacking a vector for the current model and says who embeds them: the worker
    (`"background"`), this call before it returns (`"now"`), or nobody beyond the queue
    (`"never"`). If the library was embedded by another model, nothing is re-embedded here:
    search stays keyword-only and the log says to run `screvi-mcp reindex`.
    """
    with _attach_lock:
        existing = _attached(library)
        if existing is not None:
            return existing
        try:
            index = _build_index(library, keep_recorded=True)
        except SemanticSearchUnavailable as exc:
            _warn_once(str(exc))
            keyword_only.record(library, str(exc))
            return None
        from screvi_mcp.local.search.embedding_rows import MODEL_SETTING

        recorded = library.get_setting(MODEL_SETTING)
        if recorded is None:
            library.set_setting(MODEL_SETTING, index.model_id)
        elif recorded != index.model_id:
            reason = (
                f"the library was embedded by {recorded!r} but the configured model is "
                f"{index.model_id!r}: search is keyword-only until `screvi-mcp reindex` runs"
            )
            _warn_once(reason)
            keyword_only.record(library, reason)
            return None
        blas_threads.use_one_blas_thread()  # numpy is loaded by now (the index imports it)
        index.load()
        library.add_listener(index)
        registry.register(library, index)
    if backfill == "now":
        _queue_missing(index)
        index.worker.drain()
    library.on_close(index.worker.stop)
    multilingual.attach(library, backfill=backfill)
    interim.attach(library, index, backfill=backfill)
    # In the background, even finding what lacks a vector (a scan of every highlight) is
    # left to the worker's thread: opening stays as quick as loading the matrix.
    index.worker.start(first=lambda: _queue_missing(index) if backfill == "background" else None)
    return index


def reindex(library: Library, progress: Progress | None = None, *, everything: bool = False) -> int:
    """Embed every live highlight with the configured model; returns how many were embedded.

    Resumable: vectors already made by the configured model for unchanged text are kept
    (unless `everything`), so an interrupted run continues where it stopped. Vectors of
    other models are dropped at the end and the library records the new model. `progress`
    is called with (done, total) after each batch; `stderr_progress_bar()` draws one.
    """
    from screvi_mcp.local.search import embedding_rows

    index = _attached(library) or _build_index(library)
    conn = library.connection()
    if everything:
        with library.write() as write_conn:
            write_conn.execute(
                "DELETE FROM highlight_embeddings WHERE model = ?", (index.model_id,)
            )
        index.matrix.clear()
    todo = embedding_rows.missing_seqs(conn, index.model_id)
    if progress is not None:
        progress(0, len(todo))
    embedded = index.embed(todo, progress)
    # What the queue still holds is either just embedded above (dropped without work) or
    # written since: leave nothing behind for a server that may not be running.
    index.worker.drain()
    with library.write() as write_conn:
        embedding_rows.delete_other_models(write_conn, index.model_id)
    library.set_setting(embedding_rows.MODEL_SETTING, index.model_id)
    index.load()
    return embedded


def embed_waiting_highlights(library: Library, progress: Progress | None = None) -> bool:
    """Embed, before returning, whatever waits in the library's queue (or lacks a vector):
    for one-shot commands that write and exit, so the next search finds it by meaning.
    False when semantic search is unavailable (keyword-only: nothing to do). `progress`
    gets (embedded so far, waiting at the start) after each round, when anything waits."""
    index = attach_semantic_index(library, backfill="never")
    if index is None:
        return False
    _queue_missing(index)
    total = index.pending()

    def report() -> None:
        if progress is not None and total:
            progress(total - min(total, index.pending()), total)

    report()
    interim.drain(library)  # the fast model first: findable by meaning soonest
    # On this thread, beside the worker's own round if one is running.
    index.worker.drain(after_round=report)
    # The multilingual queue is left to the next server (its rows persist): at 4x MiniLM's
    # cost it would hold a one-shot import for minutes.
    index.wait_until_embedded(DRAIN_WAIT_SECONDS)
    report()
    detach_semantic_index(library)
    return True


def wait_for_vectors(
    library: Library,
    *,
    deadline: float | None = None,
    progress: Progress | None = None,
    poll: float = 0.2,
) -> int:
    """Wait until the attached index's worker has embedded every queued highlight; returns
    how many still wait (0 when done, or when search is keyword-only: nothing to wait for).

    For a long job that writes through a running index (a sync) and should leave every
    highlight findable by meaning when it reports done. Bounded: it stops at `deadline`
    (`time.monotonic()`) and after `STALL_SECONDS` in which the queue did not shrink.
    `progress` gets (embedded so far, total at the start). The multilingual queue is left
    to its worker, as in `embed_waiting_highlights`."""
    import time

    index = registry.semantic_index_for(library)
    if index is None or library.closed:
        return 0
    from screvi_mcp.local.search.index import SemanticIndex

    if not isinstance(index, SemanticIndex):
        return 0
    pending = index.pending()
    total = pending
    shrank_at = time.monotonic()
    while pending:
        if progress is not None:
            progress(total - pending, total)
        now = time.monotonic()
        if (deadline is not None and now >= deadline) or now - shrank_at >= STALL_SECONDS:
            break
        index.worker.wake()
        time.sleep(poll)
        left = index.pending()
        if left < pending:
            shrank_at = time.monotonic()
        pending = left
    if not pending:
        index.sync(library.connection())  # vectors another process committed, into the matrix
        if progress is not None and total:
            progress(total, total)
    return pending


def stderr_progress_bar(
    stream: TextIO | None = None, width: int = 40, label: str = "embedding"
) -> Progress:
    """A one-line text progress bar for `reindex`, drawn on stderr (stdout may be MCP's)."""
    out = stream or sys.stderr

    def draw(done: int, total: int) -> None:
        filled = width if total == 0 else width * done // total
        out.write(f"\r{label} [{'#' * filled}{'.' * (width - filled)}] {done}/{total}")
        if done >= total:
            out.write("\n")
        out.flush()

    return draw


def detach_semantic_index(library: Library) -> None:
    interim.detach(library)
    multilingual.detach(library)
    index = _attached(library)
    library.listeners[:] = [each for each in library.listeners if each is not index]
    registry.unregister(library)
    if index is not None:
        index.worker.stop()


def _build_index(library: Library, *, keep_recorded: bool = False) -> SemanticIndex:
    """The index for the configured model; `keep_recorded` lets a library embedded with
    MiniLM keep it when no model is set (model_choice.py), where `reindex` moves it."""
    try:
        from screvi_mcp.local.search.calibration import CalibrationFileError
        from screvi_mcp.local.search.embedder import MODEL_DIR_ENV, EmbeddingModelError
        from screvi_mcp.local.search.embedding_rows import MODEL_SETTING
        from screvi_mcp.local.search.index import SemanticIndex
        from screvi_mcp.local.search.model_choice import choose_model
        from screvi_mcp.local.search.verifier import load_verifier
    except ImportError as exc:
        raise SemanticSearchUnavailable(
            f"semantic search is off, search is keyword-only: {exc.name or exc} is not "
            f"installed ({LOCAL_EXTRA_HINT})"
        ) from exc
    try:
        choice = choose_model(library.get_setting(MODEL_SETTING) if keep_recorded else None)
    except EmbeddingModelError as exc:
        raise SemanticSearchUnavailable(
            f"semantic search is off, search is keyword-only: {exc}"
        ) from exc
    except CalibrationFileError as exc:
        raise SemanticSearchUnavailable(
            f"semantic search is off, search is keyword-only: {exc}; fix or remove the "
            f"calibration.json beside the model in {MODEL_DIR_ENV}"
        ) from exc
    except Exception as exc:  # a model file onnxruntime or tokenizers cannot read
        raise SemanticSearchUnavailable(
            "semantic search is off, search is keyword-only: the model in "
            f"{os.environ.get(MODEL_DIR_ENV, '').strip() or 'the bundled package'} could not "
            f"be loaded ({type(exc).__name__}); fix or unset {MODEL_DIR_ENV}"
        ) from exc
    if choice.note:
        _warn_once(choice.note)
    verifier = load_verifier(choice.calibration, choice.embedder, choice.judge)
    return SemanticIndex(library, choice.embedder, choice.calibration, verifier)


def _attached(library: Library) -> SemanticIndex | None:
    index = registry.semantic_index_for(library)
    if index is None:
        return None
    from screvi_mcp.local.search.index import SemanticIndex

    return index if isinstance(index, SemanticIndex) else None


def _queue_missing(index: SemanticIndex) -> None:
    """Queue live highlights that have no vector (a new model, or rows from before the queue
    existed); those already queued keep their place."""
    from screvi_mcp.local.search import embedding_queue
    from screvi_mcp.local.search.embedding_rows import missing_seqs

    library = index.library
    missing = missing_seqs(library.connection(), index.model_id)
    # Claimed rows count as queued: re-queuing them reset their claim, and a drain beside
    # the worker then embedded them a second time.
    unqueued = sorted(set(missing) - embedding_queue.in_queue(library.connection(), missing))
    if unqueued:
        log.info("queued %d highlights that have no vector yet", len(unqueued))
        with library.write() as conn:
            embedding_queue.enqueue(conn, unqueued)


def _warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning(message)
