"""Writing rows straight into a library, as the store would, for search tests.

The FTS triggers keep the keyword index in sync; listeners are told by hand, as the store
does after its commits. Writes are embedded in the background (the embedding queue); these
helpers wait for it when an index is attached, so a test can search by meaning right after.
"""

from __future__ import annotations

import sqlite3
import uuid

from screvi_mcp.local.search.registry import semantic_index_for
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library


class LibraryRows:
    """Writes sources, highlights and tags straight into a library."""

    def __init__(self, library: Library) -> None:
        self.library = library

    def source(self, name: str, type: str = "book", author: str | None = None) -> str:
        source_id = str(uuid.uuid4())
        now = clock.now()
        with self.library.write() as conn:
            conn.execute(
                "INSERT INTO sources(id, name, type, author, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?, ?)",
                (source_id, name, type, author, now, now),
            )
        return source_id

    def highlight(
        self,
        content: str,
        source_id: str | None = None,
        note: str | None = None,
        favorite: bool = False,
        tags: list[str] | None = None,
        notify: bool = True,
    ) -> int:
        return self.highlights([(content, source_id, note, favorite, tags or [])], notify=notify)[0]

    def highlights(
        self,
        items: list[tuple[str, str | None, str | None, bool, list[str]]],
        notify: bool = True,
    ) -> list[int]:
        seqs: list[int] = []
        now = clock.now()
        with self.library.write() as conn:
            for content, source_id, note, favorite, tags in items:
                highlight_id = str(uuid.uuid4())
                cursor = conn.execute(
                    "INSERT INTO highlights(id, source_id, content, note, favorite,"
                    " created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?)",
                    (highlight_id, source_id, content, note, int(favorite), now, now),
                )
                assert cursor.lastrowid is not None
                seqs.append(cursor.lastrowid)
                for tag in tags:
                    self._tag(conn, highlight_id, tag)
        if notify:
            self.library.notify_changed(seqs)
            # A bound, not a timing check: thousands of rows (evaluation.py --distractors)
            # on two loaded cores (eight sessions share them) take minutes through both models.
            self.wait_until_embedded(max(900.0, 0.2 * len(seqs)))
        return seqs

    def wait_until_embedded(self, timeout: float = 180.0) -> None:
        index = semantic_index_for(self.library)
        if index is not None:
            assert index.wait_until_embedded(timeout), "the embedding queue did not drain"

    def _tag(self, conn: sqlite3.Connection, highlight_id: str, name: str) -> None:
        row = conn.execute("SELECT id FROM tags WHERE name_key = ?", (name.lower(),)).fetchone()
        if row is None:
            tag_id = str(uuid.uuid4())
            now = clock.now()
            conn.execute(
                "INSERT INTO tags(id, name, name_key, created_at, updated_at)"
                " VALUES (?, ?, ?, ?, ?)",
                (tag_id, name, name.lower(), now, now),
            )
        else:
            tag_id = row[0]
        conn.execute("INSERT INTO highlight_tags VALUES (?, ?)", (highlight_id, tag_id))

    def edit(self, seq: int, content: str) -> None:
        with self.library.write() as conn:
            conn.execute(
                "UPDATE highlights SET content = ?, updated_at = ? WHERE seq = ?",
                (content, clock.now(), seq),
            )
        self.library.notify_changed([seq])
        self.wait_until_embedded()

    def delete(self, seq: int) -> None:
        with self.library.write() as conn:
            conn.execute("UPDATE highlights SET deleted_at = ? WHERE seq = ?", (clock.now(), seq))
        self.library.notify_removed([seq])

    def delete_source(self, source_id: str) -> None:
        with self.library.write() as conn:
            conn.execute("UPDATE sources SET deleted_at = ? WHERE id = ?", (clock.now(), source_id))
