"""The passage vectors' tables (migration 0016): same shape as highlights', so the embedding
queue's claim/lease code (`local/search/embedding_queue.py`) serves both."""

from __future__ import annotations

from screvi_mcp.local.search.vector_tables import VectorTables

PASSAGE_TABLES = VectorTables(
    "passage_embeddings", "passage_embedding_queue", "passage_embedding_changes"
)
