"""A serving library moves from MiniLM to the default English model behind the scenes.

The fast-model-first machinery (interim.py) already lets MiniLM answer for every highlight
that waits for the English model's vector. A move is that situation made on purpose: the
library's MiniLM vectors are copied into the fast tables and every highlight is queued
there, the library records the new model, and the indexes are attached again. Search by
meaning keeps answering through MiniLM's vectors while the English worker embeds everything
with all-mpnet-base-v2 behind it (it waits while the fast queue has work; with the vectors
copied, that queue only checks and empties). Nothing is embedded twice with MiniLM, unless
the fast model is MiniLM's int8 build (a different model id): then its queue re-embeds.

`start_default_model` is what an embedded library's server calls after attaching: it starts
the background install (mpnet/auto.py) when this library uses MiniLM only because the
default was missing or not yet moved to. Its `on_moved` lets what else embeds with the
English model follow (the app re-attaches article passages: local/passages/attach.py).
"""

from __future__ import annotations

import logging
import sqlite3
from collections.abc import Callable
from typing import TYPE_CHECKING

from screvi_mcp.local.search import embedding_queue, registry
from screvi_mcp.local.search.vector_tables import INTERIM_TABLES, MINILM_TABLES, VectorTables
from screvi_mcp.local.storage.library import Library

if TYPE_CHECKING:
    from screvi_mcp.local.search.index import SemanticIndex

log = logging.getLogger("screvi_mcp.local.search")


def start_default_model(library: Library, on_moved: Callable[[], object] = lambda: None) -> bool:
    """Start installing and moving to all-mpnet-base-v2 in the background, where this
    library serves with MiniLM although no model was chosen; True when started. `on_moved`
    runs on the install's thread once the highlights have moved."""
    from screvi_mcp.local.search.embedder import MINILM_MODEL_ID
    from screvi_mcp.local.search.mpnet import auto

    index = _english_index(library)
    # The model id first: a library already on the default model (or a model of its own)
    # costs its first request no file-system checks (skip_reason creates the model cache).
    if index is None or index.embedder.model_id != MINILM_MODEL_ID:
        return False
    if auto.skip_reason() is not None:
        return False
    return auto.start(id(library), lambda: move_to_default(library, on_moved), library.on_close)


def move_to_default(library: Library, on_moved: Callable[[], object] = lambda: None) -> bool:
    """Move the library's English index to the configured model (mpnet, now installed),
    then call `on_moved`; True when moved. Search stays keyword-only only while the indexes
    are re-attached."""
    from screvi_mcp.local.search import embedding_rows
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index
    from screvi_mcp.local.search.embedder import EmbeddingModelError, load_embedder
    from screvi_mcp.local.search.index import index_model_id
    from screvi_mcp.local.search.mpnet import MPNET_NAME

    old = _english_index(library)
    if old is None or library.closed:
        return False
    try:
        new_id = index_model_id(load_embedder())
    except EmbeddingModelError as failure:
        log.warning("%s cannot be loaded, search keeps MiniLM: %s", MPNET_NAME, failure)
        return False
    if new_id == old.model_id:
        return False
    seed_fast_tables(library, old.model_id, new_id)
    detach_semantic_index(library)  # the old worker stores no MiniLM vector from here on
    library.set_setting(embedding_rows.MODEL_SETTING, new_id)
    with library.write() as conn:  # copied above; mpnet's vectors replace them one by one
        embedding_rows.delete_other_models(conn, new_id)
        # Queued here, before the new worker starts (not by its first round): whoever waits
        # for the queue to drain must not find it empty before the backlog is in it.
        _queue_all_missing(conn, new_id, MINILM_TABLES)
    if library.closed or attach_semantic_index(library) is None:
        return False
    log.warning(
        "%s is installed; this library moves to it in the background, MiniLM answering for "
        "each highlight until its new vector exists (%d to embed)",
        MPNET_NAME,
        len(embedding_rows.missing_seqs(library.connection(), new_id)),
    )
    on_moved()
    return True


def seed_fast_tables(library: Library, minilm_id: str, new_id: str) -> None:
    """Copy MiniLM's English vectors into the fast tables and queue every highlight still
    without a `new_id` vector there, in one transaction (a write after it queues itself
    through migration 0017's triggers)."""
    with library.write() as conn:
        conn.execute(
            f"INSERT INTO {INTERIM_TABLES.vectors}(seq, model, text_hash, vector)"
            f" SELECT seq, model, text_hash, vector FROM {MINILM_TABLES.vectors}"
            " WHERE model = ? ON CONFLICT(seq) DO UPDATE SET model = excluded.model,"
            " text_hash = excluded.text_hash, vector = excluded.vector",
            (minilm_id,),
        )
        _queue_all_missing(conn, new_id, INTERIM_TABLES)


def _queue_all_missing(conn: sqlite3.Connection, new_id: str, queue: VectorTables) -> None:
    """Queue in `queue` every live highlight without a `new_id` vector, not queued yet."""
    from screvi_mcp.local.search import embedding_rows

    waiting = embedding_rows.missing_seqs(conn, new_id)
    queued = embedding_queue.in_queue(conn, waiting, queue)
    embedding_queue.enqueue(conn, [seq for seq in waiting if seq not in queued], queue)


def _english_index(library: Library) -> SemanticIndex | None:
    index = registry.semantic_index_for(library)
    if index is None:
        return None  # keyword-only: nothing to move (and numpy may be missing)
    from screvi_mcp.local.search.index import SemanticIndex

    return index if isinstance(index, SemanticIndex) else None
