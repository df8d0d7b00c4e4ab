"""An article is shown at its specific passage, not at the generic one (its introduction)
that is near every query about its subject: `PassageIndex.specific_passages`.

The vectors are chosen by hand (a stand-in embedder) so that the raw cosine prefers the
introduction and the penalised score the passage that answers.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.local.fetching import article_rows
from screvi_mcp.local.passages.search import PassageFilters, PassageQuery, search_passages
from screvi_mcp.local.storage.library import Library

np = pytest.importorskip("numpy", reason="search by meaning needs the local extra")

PARTS = {
    "Overview": [1.0, 0.6, 0.6],  # near the query and near the whole article: generic
    "Answer": [1.0, -0.2, -0.5],  # nearly as near the query, far from the rest: specific
    "Aside": [0.3, 1.0, 0.5],
    "Other": [0.4, 0.5, 1.0],
}
QUERY = [1.0, 0.2, 0.0]


class HandMadeEmbedder:
    model_id = "hand-made"
    dimensions = 3

    def embed(self, texts: list[str]) -> object:
        rows = [PARTS.get(text.split()[0], QUERY) for text in texts]
        vectors = np.asarray(rows, dtype=np.float32)
        return vectors / np.linalg.norm(vectors, axis=1, keepdims=True)


def test_the_specific_passage_is_shown_rather_than_the_introduction(tmp_path: Path) -> None:
    from screvi_mcp.local.passages.index import PassageIndex

    text = "\n\n".join(f"{word} " + "words of this part of the piece. " * 14 for word in PARTS)
    library = Library.open(tmp_path / "lib.sqlite3")
    try:
        with library.write() as conn:
            article_id = article_rows.insert_article(conn, "http://x.test/a", "http://x.test/a")
            conn.execute(
                "UPDATE articles SET content_text = ?, title = 'Piece', parse_state = 'parsed' "
                "WHERE source_id = ?",
                (text, article_id),
            )
        index = PassageIndex(library, HandMadeEmbedder())
        while index.embed_queued("test"):
            pass
        raw = index.top("plugh", 4)
        passages = library.connection().execute("SELECT id, text FROM article_passages")
        first_word = {int(pid): str(body).split()[0] for pid, body in passages}
        assert first_word[raw[0][0]] == "Overview"  # what the plain cosine would show
        query = PassageQuery("plugh", PassageFilters(), min_relevance=0.3)
        hits, _ = search_passages(library.connection(), index, query, root_url="x")
        assert [hit["article"]["id"] for hit in hits] == [article_id]
        assert hits[0]["passage"]["text"].startswith("Answer"), hits[0]["passage"]
        assert hits[0]["passage"]["offset"] == text.index("Answer")
        assert hits[0]["match_type"] == "semantic" and hits[0]["similarity"] > 0.8
    finally:
        library.close()
