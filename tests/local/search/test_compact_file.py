"""The compact index's codes saved beside the library: read back instead of rebuilt, brought
up to date from the change log, and rebuilt when they cannot be trusted."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest
from synthetic_vectors import unit_rows

from screvi_mcp.local.search import compact_file
from screvi_mcp.local.search.compact_matrix import CompactMatrix
from screvi_mcp.local.search.vectors import Matrix

DIMENSIONS = 384
STAMP = compact_file.Stamp("model", DIMENSIONS, change=7, vectors=1500)


def _matrix(rows: Matrix, seqs: list[int]) -> CompactMatrix:
    by_seq = dict(zip(seqs, rows, strict=True))

    def fetch(wanted: list[int]) -> tuple[list[int], Matrix]:
        found = [seq for seq in wanted if seq in by_seq]
        return found, np.array([by_seq[s] for s in found], dtype=np.float32).reshape(-1, 384)

    matrix = CompactMatrix(DIMENSIONS, fetch, capacity=16)
    matrix.min_candidates = 200
    return matrix


def test_codes_read_back_rank_as_the_codes_saved(tmp_path: Path) -> None:
    rng = np.random.default_rng(21)
    rows, seqs = unit_rows(rng, 1500), list(range(10, 1510))
    saved = _matrix(rows, seqs)
    saved.extend(seqs, rows)
    saved.remove([10, 500])  # rows moved: the file holds the matrix as it is
    path = tmp_path / "codes"
    saved.save(path, STAMP)
    read = _matrix(rows, seqs)
    with open(path, "rb") as source:
        header = compact_file.read_header(source)
        assert header is not None and compact_file.stamp_of(header) == STAMP
        assert read.read(source, int(header["count"]))
    assert len(read) == 1498 and 10 not in read and 1509 in read
    for query in (rows[3], rows[900], unit_rows(rng, 1)[0]):
        assert read.top(query, 0.0, 100) == saved.top(query, 0.0, 100)
    read.upsert([5000], rows[:1])  # and it keeps growing past what it read
    assert len(read) == 1499 and 5000 in read


def test_an_empty_matrix_saves_and_reads(tmp_path: Path) -> None:
    path = tmp_path / "codes"
    _matrix(unit_rows(np.random.default_rng(2), 1), [1]).save(path, STAMP)
    read = _matrix(unit_rows(np.random.default_rng(2), 1), [1])
    with open(path, "rb") as source:
        header = compact_file.read_header(source)
        assert header is not None and header["count"] == 0
        assert read.read(source, 0)
    assert len(read) == 0 and read.top(unit_rows(np.random.default_rng(3), 1)[0], 0.0, 5) == []


def test_a_file_cut_short_or_of_another_format_is_not_read(tmp_path: Path) -> None:
    rng = np.random.default_rng(22)
    rows, seqs = unit_rows(rng, 300), list(range(300))
    matrix = _matrix(rows, seqs)
    matrix.extend(seqs, rows)
    path = tmp_path / "codes"
    matrix.save(path, STAMP)
    whole = path.read_bytes()
    path.write_bytes(whole[:-10])
    with open(path, "rb") as source:
        header = compact_file.read_header(source)
        assert header is not None
        assert not matrix.read(source, int(header["count"]))
    assert len(matrix) == 0
    path.write_bytes(whole.replace(b'"version": 1', b'"version": 0'))
    with open(path, "rb") as source:
        assert compact_file.read_header(source) is None
    path.write_bytes(b"not codes at all")
    with open(path, "rb") as source:
        assert compact_file.read_header(source) is None


# -- a library opened compactly ------------------------------------------------------------


@pytest.fixture
def compact_index(semantic_library: object) -> object:
    from screvi_mcp.local.search.registry import semantic_index_for
    from screvi_mcp.local.storage.library import Library

    assert isinstance(semantic_library, Library)
    index = semantic_index_for(semantic_library)
    assert index is not None
    index.compact_from_rows = 0
    return index


TEXTS = [
    "The boat rolled all night and my stomach turned with every wave.",
    "Compound interest is the eighth wonder of the world.",
    "We suffer more often in imagination than in reality.",
    "A garden needs patience more than it needs water.",
]


def _write(library: object, *contents: str) -> list[str]:
    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights
    from testsupport.embeddings import wait_until_embedded

    assert isinstance(library, Library)
    made = highlights.create_many(
        library, [HighlightCreate(content=t) for t in contents], bulk=True
    )
    wait_until_embedded(library.path)
    return [item["id"] for item in made]


def _best(index: object, text: str) -> int:
    from screvi_mcp.local.search.filters import Filters
    from screvi_mcp.local.search.index import SemanticIndex

    assert isinstance(index, SemanticIndex)
    ranked = index.semantic_ranking(index.library.connection(), text, Filters(), 0.0, 5)
    return ranked[0].seq


def _seq(library: object, highlight_id: str) -> int:
    from screvi_mcp.local.storage.library import Library

    assert isinstance(library, Library)
    row = library.connection().execute("SELECT seq FROM highlights WHERE id = ?", (highlight_id,))
    return int(row.fetchone()[0])


def test_opening_again_reads_the_saved_codes(compact_index: object) -> None:
    from screvi_mcp.local.search.index import SemanticIndex

    assert isinstance(compact_index, SemanticIndex)
    library = compact_index.library
    ids = _write(library, *TEXTS)
    compact_index.load()
    path = compact_file.codes_path(library.path, compact_index.tables.vectors)
    assert isinstance(compact_index.matrix, CompactMatrix) and path.exists()
    if os.name == "posix":
        assert path.stat().st_mode & 0o077 == 0  # private, as the library
    written = path.stat().st_mtime_ns
    compact_index.load()  # current: read, not rebuilt (nor written again)
    assert isinstance(compact_index.matrix, CompactMatrix) and len(compact_index.matrix) == 4
    assert path.stat().st_mtime_ns == written
    assert _best(compact_index, "seasick on a ferry") == _seq(library, ids[0])


def test_changes_after_the_codes_are_read_from_sqlite(compact_index: object) -> None:
    from screvi_mcp.local.search.index import SemanticIndex
    from screvi_mcp.local.storage.store import highlights

    assert isinstance(compact_index, SemanticIndex)
    library = compact_index.library
    ids = _write(library, *TEXTS)
    compact_index.load()  # saves the codes of these four
    path = compact_file.codes_path(library.path, compact_index.tables.vectors)
    written = path.read_bytes()
    (added,) = _write(library, "Debt is a claim on your future self's time.")
    highlights.delete(library, ids[1])
    compact_index.load()
    assert path.read_bytes() == written  # caught up from the log, the file left as it was
    matrix = compact_index.matrix
    assert isinstance(matrix, CompactMatrix) and len(matrix) == 4
    assert _seq(library, ids[1]) not in matrix
    assert _best(compact_index, "money borrowed against tomorrow") == _seq(library, added)


def test_codes_that_disagree_with_the_library_are_rebuilt(compact_index: object) -> None:
    from screvi_mcp.local.search.index import SemanticIndex

    assert isinstance(compact_index, SemanticIndex)
    library = compact_index.library
    _write(library, *TEXTS)
    compact_index.load()
    path = compact_file.codes_path(library.path, compact_index.tables.vectors)
    with open(path, "rb") as source:
        header = compact_file.read_header(source)
    assert header is not None
    stale = compact_file.Stamp(header["model"], header["dimensions"], header["change"], 3)
    matrix = compact_index.matrix
    assert isinstance(matrix, CompactMatrix)
    matrix.remove([next(iter(matrix._row_of))])  # what a file of 3 vectors would hold
    matrix.save(path, stale)
    compact_index.load()
    assert len(compact_index.matrix) == 4
    with open(path, "rb") as source:
        header = compact_file.read_header(source)
    assert header is not None and header["count"] == 4 and header["vectors"] == 4


def test_a_model_without_vectors_opens_without_reading_the_highlights(
    semantic_library: object,
) -> None:
    """Listing the deleted highlights reads every highlight row (20 s at 1M on a busy
    machine), and opening a library ran it for each model, those with no vectors too."""
    from screvi_mcp.local.search import embedding_rows
    from screvi_mcp.local.storage.library import Library

    assert isinstance(semantic_library, Library)
    _write(semantic_library, *TEXTS)
    conn = semantic_library.connection()
    statements: list[str] = []
    conn.set_trace_callback(statements.append)
    try:
        assert list(embedding_rows.stream_live(conn, "no-such-model", DIMENSIONS)) == []
        assert not any("highlights h" in sql for sql in statements)
        blocks = list(embedding_rows.stream_live(conn, _model(semantic_library), DIMENSIONS))
        assert sum(len(seqs) for seqs, _ in blocks) == 4
        assert any("highlights h" in sql for sql in statements)
    finally:
        conn.set_trace_callback(None)


def _model(library: object) -> str:
    from screvi_mcp.local.search.registry import semantic_index_for
    from screvi_mcp.local.storage.library import Library

    assert isinstance(library, Library)
    index = semantic_index_for(library)
    assert index is not None
    return index.model_id
