"""The keyword index stays exactly what a rebuild from scratch would make, whatever the writes.

Keyword rows are written once per transaction (migration 0013, local/storage/keyword_rows.py): the
triggers only record which highlights changed and `Library.write` rewrites their rows before
the commit. These tests drive a seeded random sequence of writes through the HTTP API and
compare, after each step, the index with one rebuilt from the rows, down to the ranked keyword
results. A write path that forgot a row, or a flush that wrote a stale one, fails here.
"""

from __future__ import annotations

import random
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from api_testkit import Api

from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.keyword import keyword_ranking

WORDS = [
    *("river", "stone", "lantern", "harvest", "quiet", "orbit", "meadow", "ember", "signal"),
    *("garden", "velvet", "compass", "winter", "archive", "thunder", "saddle", "pepper"),
    *("marble", "falcon", "canyon"),
]
TAG_NAMES = ["Stoicism", "craft", "Memory", "travel", "deep work", "Zeal"]
ROW_COLUMNS = "content, note, source_name, source_author, tags"


def phrase(rng: random.Random, length: int) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(length))


def index_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return [
        tuple(row)
        for row in conn.execute(f"SELECT rowid, {ROW_COLUMNS} FROM highlights_fts ORDER BY rowid")
    ]


def rebuilt_rows(conn: sqlite3.Connection) -> list[tuple[Any, ...]]:
    return [
        tuple(row)
        for row in conn.execute(f"SELECT seq, {ROW_COLUMNS} FROM highlights_fts_rows ORDER BY seq")
    ]


def rebuilt_copy(library_path: Path, target: Path) -> sqlite3.Connection:
    """A copy of the library whose keyword index is rebuilt from scratch from its rows."""
    source = sqlite3.connect(library_path)
    copy = sqlite3.connect(target)
    source.backup(copy)
    source.close()
    copy.execute("DELETE FROM highlights_fts")
    copy.execute(
        f"INSERT INTO highlights_fts(rowid, {ROW_COLUMNS}) "
        f"SELECT seq, {ROW_COLUMNS} FROM highlights_fts_rows"
    )
    copy.commit()
    return copy


QUERIES = [*WORDS, "stoicism", "deep work", "memory river", "Hume", "Seneca", "notes", "zeal"]


def assert_index_in_sync(api: Api, scratch: Path) -> None:
    conn = api.library.connection()
    assert conn.execute("SELECT count(*) FROM highlights_fts_pending").fetchone()[0] == 0
    assert index_rows(conn) == rebuilt_rows(conn)
    # The inverted index agrees with the stored rows (FTS5 raises if not).
    conn.execute("INSERT INTO highlights_fts(highlights_fts) VALUES ('integrity-check')")
    copy = rebuilt_copy(api.library.path, scratch)
    try:
        for query in QUERIES:
            assert keyword_ranking(conn, query, Filters(), 200) == keyword_ranking(
                copy, query, Filters(), 200
            ), query
    finally:
        copy.close()
        scratch.unlink()


async def ok(response: Any) -> Any:
    assert response.status_code in (200, 201), response.text
    return response.json()["data"]


class Writer:
    """Random writes of every kind that touches a keyword row, through the API."""

    def __init__(self, api: Api, rng: random.Random) -> None:
        self.api = api
        self.rng = rng
        self.highlights: list[str] = []
        self.sources: list[str] = []

    def tags(self) -> list[str]:
        return self.rng.sample(TAG_NAMES, self.rng.choice((0, 1, 1, 2, 3)))

    def item(self) -> dict[str, Any]:
        body: dict[str, Any] = {"content": phrase(self.rng, self.rng.randint(3, 12))}
        if self.rng.random() < 0.4:
            body["note"] = phrase(self.rng, 3)
        if self.sources and self.rng.random() < 0.7:
            body["source_id"] = self.rng.choice(self.sources)
        tags = self.tags()
        if tags:
            body["tags"] = tags
        return body

    async def create(self) -> None:
        created = await ok(await self.api.post("/highlights", self.item()))
        self.highlights.append(created["id"])

    async def bulk_create(self) -> None:
        items = [self.item() for _ in range(self.rng.randint(2, 12))]
        created = await ok(await self.api.post("/highlights/bulk", {"highlights": items}))
        self.highlights.extend(item["id"] for item in created)

    async def create_source(self) -> None:
        name = f"{self.rng.choice(['Seneca', 'Hume', 'Notes'])} {phrase(self.rng, 2)}"
        body: dict[str, Any] = {"name": name, "type": "book"}
        if self.rng.random() < 0.5:
            body["author"] = self.rng.choice(["Seneca", "David Hume", "Ann Example"])
        self.sources.append((await ok(await self.api.post("/sources", body)))["id"])

    async def update(self) -> None:
        if not self.highlights:
            return
        changes: dict[str, Any] = {}
        if self.rng.random() < 0.5:
            changes["content"] = phrase(self.rng, self.rng.randint(2, 8))
        if self.rng.random() < 0.4:
            changes["note"] = None if self.rng.random() < 0.3 else phrase(self.rng, 2)
        if self.rng.random() < 0.5:
            changes["tags"] = self.tags()
        if not changes:
            changes["favorite"] = True
        await ok(await self.api.patch(f"/highlights/{self.rng.choice(self.highlights)}", changes))

    async def change_tags(self) -> None:
        if not self.highlights:
            return
        path = f"/highlights/{self.rng.choice(self.highlights)}/tags"
        tags = self.tags() or [TAG_NAMES[0]]
        if self.rng.random() < 0.6:
            await ok(await self.api.post(path, {"tags": tags}))
        else:
            await ok(await self.api.delete(path, {"tags": tags}))

    async def delete(self) -> None:
        if self.highlights:
            highlight_id = self.highlights.pop(self.rng.randrange(len(self.highlights)))
            await ok(await self.api.delete(f"/highlights/{highlight_id}"))

    async def edit_source(self) -> None:
        if self.sources:
            changes = {"name": f"Hume {phrase(self.rng, 2)}"}
            if self.rng.random() < 0.5:
                changes["author"] = self.rng.choice(["Seneca", "Zeal Writer"])
            await ok(await self.api.patch(f"/sources/{self.rng.choice(self.sources)}", changes))

    async def rename_or_delete_tag(self) -> None:
        tags = await ok(await self.api.get("/tags"))
        if not tags:
            return
        tag = self.rng.choice(tags)
        if self.rng.random() < 0.6:
            # A rename to one of the pool's names (or back), so later writes reuse it.
            taken = {t["name"].lower() for t in tags}
            free = [name for name in TAG_NAMES if name.lower() not in taken]
            new_name = self.rng.choice(free) if free else tag["name"].swapcase()
            await ok(await self.api.patch(f"/tags/{tag['id']}", {"name": new_name}))
        else:
            await ok(await self.api.delete(f"/tags/{tag['id']}"))

    async def step(self) -> str:
        action = self.rng.choices(
            [
                self.create,
                self.bulk_create,
                self.create_source,
                self.update,
                self.change_tags,
                self.delete,
                self.edit_source,
                self.rename_or_delete_tag,
            ],
            weights=[3, 3, 1, 3, 3, 1, 1, 1],
        )[0]
        await action()
        return action.__name__


@pytest.mark.parametrize("seed", [3, 17])
async def test_random_writes_keep_the_keyword_index_as_a_rebuild_makes_it(
    open_api: Any, tmp_path: Path, seed: int
) -> None:
    rng = random.Random(seed)
    async with open_api("asgi", rate_limit_per_minute=100_000) as api:
        writer = Writer(api, rng)
        await writer.create_source()
        await writer.create_source()
        done: list[str] = []
        for step in range(120):
            done.append(await writer.step())
            if step % 10 == 9:
                assert_index_in_sync(api, tmp_path / "rebuilt.sqlite3")
        assert_index_in_sync(api, tmp_path / "rebuilt.sqlite3")
        # The sequence did exercise every kind of write, and the index is not trivially empty.
        assert set(done) >= {
            "create",
            "bulk_create",
            "update",
            "change_tags",
            "delete",
            "edit_source",
            "rename_or_delete_tag",
        }
        assert api.scalar("SELECT count(*) FROM highlights_fts") > 50


async def test_a_bulk_create_is_found_by_its_tags_at_once(asgi_api: Api) -> None:
    source = await asgi_api.source("Letters", author="Seneca")
    items = [
        {"content": f"passage number {index}", "source_id": source["id"], "tags": ["Stoicism"]}
        for index in range(20)
    ]
    created = await ok(await asgi_api.post("/highlights/bulk", {"highlights": items}))
    conn = asgi_api.library.connection()
    seqs = set(keyword_ranking(conn, "stoicism", Filters(), 100))
    assert len(seqs) == 20
    assert set(keyword_ranking(conn, "seneca passage", Filters(), 100)) == seqs
    assert len(created) == 20
