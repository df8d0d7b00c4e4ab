"""Which SQLite tables hold one model's vectors, its embedding queue and its change log.

MiniLM's live in migrations 0002/0004/0008, the multilingual model's in 0011. The names are
constants of the code, never input, so they are safe to place in SQL text.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class VectorTables:
    vectors: str
    queue: str
    changes: str


MINILM_TABLES = VectorTables("highlight_embeddings", "embedding_queue", "embedding_changes")
MULTILINGUAL_TABLES = VectorTables(
    "multilingual_embeddings", "multilingual_queue", "multilingual_changes"
)
# A fast model's vectors for highlights still waiting for the English model's (migration 0017).
INTERIM_TABLES = VectorTables("interim_embeddings", "interim_queue", "interim_changes")
