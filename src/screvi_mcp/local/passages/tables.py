"""The passage vectors' tables: the English model's (migration 0016) and the multilingual
model's for passages of non-English articles (0018). Same shape as highlights', so the
embedding queue's claim/lease code (`local/search/embedding_queue.py`) serves them all."""

from __future__ import annotations

from screvi_mcp.local.search.vector_tables import VectorTables

PASSAGE_TABLES = VectorTables(
    "passage_embeddings", "passage_embedding_queue", "passage_embedding_changes"
)
MULTILINGUAL = VectorTables(
    "passage_multilingual_embeddings", "passage_multilingual_queue", "passage_multilingual_changes"
)
# An article's language is decided on this much of its text (`language.is_english`).
PASSAGE_TEXT_SAMPLE = 4000
