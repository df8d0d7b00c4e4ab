"""The `highlight_embeddings` table (migration 0002): vectors persisted beside highlights."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np

from screvi_mcp.local.search.embedding_text import embedding_text, text_hash
from screvi_mcp.local.search.vector_tables import INTERIM_TABLES, MINILM_TABLES, VectorTables
from screvi_mcp.local.search.vectors import Matrix

MODEL_SETTING = "search.embedding_model"


@dataclass(frozen=True)
class HighlightText:
    seq: int
    text: str
    hash: str


def live_texts(conn: sqlite3.Connection, seqs: list[int]) -> list[HighlightText]:
    """Embedding texts of those of `seqs` that are live highlights."""
    rows = conn.execute(
        "SELECT h.seq, h.content, h.note FROM highlights h"
        " LEFT JOIN sources s ON s.id = h.source_id"
        " WHERE h.seq IN (SELECT value FROM json_each(?))"
        " AND h.deleted_at IS NULL AND (h.source_id IS NULL OR s.deleted_at IS NULL)",
        (json.dumps(seqs),),
    )
    texts = []
    for row in rows:
        text = embedding_text(str(row[1]), row[2])
        texts.append(HighlightText(int(row[0]), text, text_hash(text)))
    return texts


def stored_hashes(
    conn: sqlite3.Connection, model: str, seqs: list[int], tables: VectorTables = MINILM_TABLES
) -> dict[int, str]:
    rows = conn.execute(
        f"SELECT seq, text_hash FROM {tables.vectors}"
        " WHERE model = ? AND seq IN (SELECT value FROM json_each(?))",
        (model, json.dumps(seqs)),
    )
    return {int(row[0]): str(row[1]) for row in rows}


def save(
    conn: sqlite3.Connection,
    model: str,
    texts: list[HighlightText],
    vectors: Matrix,
    tables: VectorTables = MINILM_TABLES,
) -> None:
    conn.executemany(
        f"INSERT INTO {tables.vectors}(seq, model, text_hash, vector) VALUES (?, ?, ?, ?)"
        " ON CONFLICT(seq) DO UPDATE SET model = excluded.model,"
        " text_hash = excluded.text_hash, vector = excluded.vector",
        [
            (item.seq, model, item.hash, vector.astype("<f4").tobytes())
            for item, vector in zip(texts, vectors, strict=True)
        ],
    )


def latest_change(conn: sqlite3.Connection, tables: VectorTables = MINILM_TABLES) -> int:
    """The id of the newest embedding write (0 when none is logged)."""
    return int(conn.execute(f"SELECT coalesce(max(id), 0) FROM {tables.changes}").fetchone()[0])


def oldest_change(conn: sqlite3.Connection, tables: VectorTables = MINILM_TABLES) -> int | None:
    row = conn.execute(f"SELECT min(id) FROM {tables.changes}").fetchone()
    return None if row[0] is None else int(row[0])


def changes_after(
    conn: sqlite3.Connection, after: int, tables: VectorTables = MINILM_TABLES
) -> list[tuple[int, int]]:
    """(change id, seq) of every embedding write after change `after`, oldest first."""
    rows = conn.execute(
        f"SELECT id, seq FROM {tables.changes} WHERE id > ? ORDER BY id", (after,)
    ).fetchall()
    return [(int(row[0]), int(row[1])) for row in rows]


def prune_changes(
    conn: sqlite3.Connection, keep: int, tables: VectorTables = MINILM_TABLES
) -> None:
    conn.execute(
        f"DELETE FROM {tables.changes} WHERE id <= (SELECT max(id) FROM {tables.changes}) - ?",
        (keep,),
    )


def drop_interim(conn: sqlite3.Connection, seqs: list[int]) -> None:
    """The fast model's vector and queue row of highlights whose English vector is being
    stored (migration 0017, interim.py): in every library, so that the fast tables only ever
    hold the English backlog, whether or not a fast index is attached here."""
    for table in (INTERIM_TABLES.vectors, INTERIM_TABLES.queue):
        conn.execute(
            f"DELETE FROM {table} WHERE seq IN (SELECT value FROM json_each(?))",
            (json.dumps(seqs),),
        )


def delete_other_models(
    conn: sqlite3.Connection, model: str, tables: VectorTables = MINILM_TABLES
) -> None:
    conn.execute(f"DELETE FROM {tables.vectors} WHERE model != ?", (model,))


def delete(conn: sqlite3.Connection, seqs: list[int], tables: VectorTables = MINILM_TABLES) -> None:
    conn.execute(
        f"DELETE FROM {tables.vectors} WHERE seq IN (SELECT value FROM json_each(?))",
        (json.dumps(seqs),),
    )


def count_vectors(
    conn: sqlite3.Connection, model: str, tables: VectorTables = MINILM_TABLES
) -> int:
    """Stored vectors of `model` (the dead included: they are few)."""
    sql = f"SELECT count(*) FROM {tables.vectors} WHERE model = ?"
    return int(conn.execute(sql, (model,)).fetchone()[0])


def load_live(
    conn: sqlite3.Connection, model: str, dimensions: int, tables: VectorTables = MINILM_TABLES
) -> tuple[list[int], Matrix]:
    """Every stored vector of `model` for a live highlight, as one matrix.

    Rows are copied into one preallocated matrix a block at a time, so opening peaks at
    about the matrix's own size rather than three copies of it (blobs, joined bytes, array).
    """
    count = count_vectors(conn, model, tables)
    matrix: Matrix = np.empty((count, dimensions), dtype=np.float32)
    seqs: list[int] = []
    for block_seqs, block in stream_live(conn, model, dimensions, tables):
        if len(seqs) + len(block_seqs) > count:  # written since the count: grow to fit
            extra = len(seqs) + len(block_seqs) - count
            matrix = np.concatenate([matrix, np.empty((extra, dimensions), np.float32)])
            count = matrix.shape[0]
        matrix[len(seqs) : len(seqs) + len(block_seqs)] = block
        seqs.extend(block_seqs)
    return seqs, matrix[: len(seqs)]


def stream_live(
    conn: sqlite3.Connection,
    model: str,
    dimensions: int,
    tables: VectorTables = MINILM_TABLES,
    block_rows: int = 4096,
) -> Iterator[tuple[list[int], Matrix]]:
    """Every stored vector of `model` for a live highlight, a block of rows at a time.

    Read without joins and with plain tuples: at 100k highlights this is the whole cost of
    opening the index, and the dead are few, so they are skipped as rows stream in.
    """
    cursor = conn.cursor()
    cursor.row_factory = None
    cursor.execute(f"SELECT seq, vector FROM {tables.vectors} WHERE model = ?", (model,))
    dead: set[int] | None = None
    while True:
        block = cursor.fetchmany(block_rows)
        if not block:
            break
        if dead is None:  # a scan of every highlight (20 s at 1M here): only with vectors
            dead = dead_seqs(conn)
        rows = [row for row in block if row[0] not in dead] if dead else block
        if rows:
            yield [row[0] for row in rows], _matrix(rows, dimensions)


def dead_seqs(conn: sqlite3.Connection) -> set[int]:
    """Soft-deleted highlights and those under a soft-deleted source."""
    rows = conn.execute(
        "SELECT h.seq FROM highlights h LEFT JOIN sources s ON s.id = h.source_id"
        " WHERE h.deleted_at IS NOT NULL OR s.deleted_at IS NOT NULL"
    )
    return {int(row[0]) for row in rows}


def load_vectors(
    conn: sqlite3.Connection,
    model: str,
    dimensions: int,
    seqs: list[int],
    tables: VectorTables = MINILM_TABLES,
) -> tuple[list[int], Matrix]:
    """Stored vectors of `model` for those of `seqs` that have one.

    One primary-key lookup per seq (CROSS JOIN keeps that order): with `seq IN (...)`
    SQLite chose the model index and read 2,000 rows 2-4x slower (a compact matrix's short
    list, compact_matrix.py)."""
    rows = conn.execute(
        f"SELECT e.seq, e.vector FROM json_each(?) AS j CROSS JOIN {tables.vectors} AS e"
        " ON e.seq = j.value WHERE e.model = ?",
        (json.dumps(seqs), model),
    ).fetchall()
    return [int(row[0]) for row in rows], _matrix(rows, dimensions)


def _matrix(rows: list[Any], dimensions: int) -> Matrix:
    blob = b"".join(row[1] for row in rows)
    return np.frombuffer(blob, dtype="<f4").astype(np.float32).reshape(len(rows), dimensions)


def missing_seqs(
    conn: sqlite3.Connection, model: str, tables: VectorTables = MINILM_TABLES
) -> list[int]:
    """Live highlights without a vector from `model`."""
    rows = conn.execute(
        "SELECT h.seq FROM highlights h LEFT JOIN sources s ON s.id = h.source_id"
        f" LEFT JOIN {tables.vectors} e ON e.seq = h.seq AND e.model = ?"
        " WHERE e.seq IS NULL AND h.deleted_at IS NULL"
        " AND (h.source_id IS NULL OR s.deleted_at IS NULL) ORDER BY h.seq",
        (model,),
    )
    return [int(row[0]) for row in rows]


def chunks(items: list[int], size: int) -> Iterator[list[int]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]
