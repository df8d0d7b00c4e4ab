"""The filters of GET /search as SQL, shared by the keyword and the semantic side.

Both sides must agree on which highlights a filter admits, or fusion would rank a highlight
that one side was not allowed to see. So the rules live here once: live highlights only
(not soft-deleted, and not under a soft-deleted source), then `source`, `tag`, `types` and
`favorite`. Liveness is checked once per search, by the keyword side's SQL: the semantic
side's vectors are of live highlights only (migrations 0012 and 0019 drop a vector in the
deleting transaction), so it applies only the narrowing filters, and only when there are
some.
"""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass

from screvi_mcp.contract import expand_types
from screvi_mcp.local.search.connection_cache import cached

# Legacy `youtube` sources are videos (spec: "video (includes legacy youtube)").


@dataclass(frozen=True)
class Filters:
    source: str | None = None
    tag: str | None = None
    types: tuple[str, ...] | None = None
    favorite: bool | None = None

    @property
    def restricts(self) -> bool:
        """True when something beyond liveness narrows the candidates."""
        return bool(self.source or self.tag or self.types) or self.favorite is not None


@dataclass(frozen=True)
class SqlFilter:
    """A WHERE fragment over `highlights h LEFT JOIN sources s` and its parameters."""

    where: str
    params: tuple[object, ...]


def _type_names(types: tuple[str, ...]) -> list[str]:
    # Search's filter is lenient about case and blanks; the aliases are the contract's.
    return expand_types(key for key in (name.strip().lower() for name in types) if key)


def matching_source_ids(conn: sqlite3.Connection, text: str) -> list[str]:
    """Sources whose name or author contains `text`, compared case-insensitively.

    Done in Python because SQLite's LIKE and lower() only fold ASCII; sources are few
    compared with highlights, so reading them all is cheap.
    """
    needle = text.strip().casefold()
    rows = conn.execute("SELECT id, name, author FROM sources WHERE deleted_at IS NULL")
    return [
        str(row[0])
        for row in rows
        if needle in str(row[1]).casefold() or needle in (row[2] or "").casefold()
    ]


def build_sql_filter(
    conn: sqlite3.Connection, filters: Filters, live: bool = True, *, sources_joined: bool = True
) -> SqlFilter:
    """The filters as SQL; `live` adds the liveness rule (the semantic side leaves it out:
    its vectors are all of live highlights, migration 0012).

    With `sources_joined=False` the fragment reads `highlights h` alone (for liveness
    alone: no filter may need `s`): a source's deletion is checked against the ids of the
    deleted sources, cached until the library changes (connection_cache.py), instead of
    joining each highlight to its source row (1.4 ms of the keyword side's 7 ms at 100k,
    where one row per ranked match is read either way)."""
    clauses = ["h.deleted_at IS NULL", "(h.source_id IS NULL OR s.deleted_at IS NULL)"]
    params: list[object] = []
    if not sources_joined:
        clauses = clauses[:1]
        deleted = cached(conn, "deleted_sources", _deleted_source_ids)
        if deleted:
            clauses.append(
                "(h.source_id IS NULL OR h.source_id NOT IN (SELECT value FROM json_each(?)))"
            )
            params.append(deleted)
    if not live:
        clauses, params = ["1"], []
    if filters.source:
        clauses.append("h.source_id IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(matching_source_ids(conn, filters.source)))
    if filters.tag:
        tag = filters.tag.strip()
        clauses.append(
            "EXISTS (SELECT 1 FROM highlight_tags ht JOIN tags t ON t.id = ht.tag_id"
            " WHERE ht.highlight_id = h.id AND (t.name_key = ? OR t.id = ?))"
        )
        params.extend([tag.lower(), tag.lower()])  # ids are stored lower-case
    if filters.types:
        clauses.append("s.type IN (SELECT value FROM json_each(?))")
        params.append(json.dumps(_type_names(filters.types)))
    if filters.favorite is not None:
        clauses.append("h.favorite = ?")
        params.append(1 if filters.favorite else 0)
    return SqlFilter(" AND ".join(clauses), tuple(params))


def _deleted_source_ids(conn: sqlite3.Connection) -> str:
    """The ids of soft-deleted sources, as a JSON list ("" when there are none)."""
    ids = [
        str(row[0]) for row in conn.execute("SELECT id FROM sources WHERE deleted_at IS NOT NULL")
    ]
    return json.dumps(ids) if ids else ""


def admitted_seqs(conn: sqlite3.Connection, filters: Filters, among: list[int]) -> set[int]:
    """Which of `among` pass the filters. Liveness is not checked: the semantic side asks,
    and its vectors are all of live highlights (migration 0012); the keyword side checks
    liveness in its own query."""
    if not among:
        return set()
    sql_filter = build_sql_filter(conn, filters, live=False)
    # Without a filter no clause reads the source row.
    source_join = " LEFT JOIN sources s ON s.id = h.source_id" if filters.restricts else ""
    rows = conn.execute(
        f"SELECT h.seq FROM highlights h{source_join}"
        f" WHERE h.seq IN (SELECT value FROM json_each(?)) AND {sql_filter.where}",
        (json.dumps(among), *sql_filter.params),
    )
    return {int(row[0]) for row in rows}
