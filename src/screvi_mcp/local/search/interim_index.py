"""The fast model's index (interim.py says what it is for): MiniLM's vectors, in tables of
their own, for highlights still waiting for the English model's vector."""

from __future__ import annotations

import json
import sqlite3

from screvi_mcp.local.search import embedding_queue, embedding_rows
from screvi_mcp.local.search.calibration import MINILM
from screvi_mcp.local.search.embedder import Embedder
from screvi_mcp.local.search.embedding_rows import HighlightText
from screvi_mcp.local.search.index import QUEUE_CLAIM, SemanticIndex
from screvi_mcp.local.search.vector_tables import INTERIM_TABLES
from screvi_mcp.local.storage.db import is_busy
from screvi_mcp.local.storage.library import Library


class InterimIndex(SemanticIndex):
    def __init__(self, library: Library, embedder: Embedder, english: SemanticIndex) -> None:
        super().__init__(library, embedder, MINILM, english.verifier, INTERIM_TABLES)
        self.english = english
        self.failed = False  # an unexpected failure: the English worker stops waiting for us

    def yields(self) -> bool:
        """Whether the English worker should let this one go first."""
        return not self.failed and embedding_queue.claimable(self.library.connection(), self.tables)

    def embed_queued(self, claim: str, limit: int = QUEUE_CLAIM) -> int:
        try:
            claimed = super().embed_queued(claim, limit)
        except Exception as exc:
            if not is_busy(exc):
                self.failed = True
            raise
        return claimed

    def _embed_seqs(self, seqs: list[int], claim: str | None) -> int:
        """Rows whose English vector exists by now leave the queue unembedded."""
        covered = self._covered(seqs)
        if covered and claim is not None:
            with self.library.write() as conn:
                embedding_queue.finish(conn, claim, covered, self.tables)
        skip = set(covered)
        rest = [seq for seq in seqs if seq not in skip]
        stored = super()._embed_seqs(rest, claim)
        self.matrix.remove(self._covered(rest))  # see `_saved`
        return stored

    def _saved(self, conn: sqlite3.Connection, saved: list[HighlightText]) -> None:
        """An English vector stored while these were embedded wins, in this transaction:
        the writer lock orders the two, so either `embedding_rows.drop_interim` or this removes
        the fast one."""
        english = self.english
        conn.execute(
            f"DELETE FROM {self.tables.vectors} WHERE seq IN (SELECT value FROM json_each(?))"
            f" AND seq IN (SELECT seq FROM {english.tables.vectors} WHERE model = ?)",
            (json.dumps([item.seq for item in saved]), english.model_id),
        )

    def _covered(self, seqs: list[int]) -> list[int]:
        english = self.english
        conn = self.library.connection()
        return sorted(embedding_rows.stored_hashes(conn, english.model_id, seqs, english.tables))
