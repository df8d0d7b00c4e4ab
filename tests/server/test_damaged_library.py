"""A library file damaged while the server runs (the door check only sees it at start-up):
the agent is told the file is damaged and what the user can do, never "try again" and
never a traceback.
"""

from __future__ import annotations

import logging
import uuid
from pathlib import Path

import pytest
from server_testkit import assert_tool_error, call_error, mcp_client

from screvi_mcp.contract import MAX_PER_PAGE
from screvi_mcp.local.storage.library import Library

# The first pages hold SQLite's header and the schema; everything after them is mangled.
KEPT_PAGES = 8
PAGE = 4096


def library_with_sources(path: Path) -> None:
    """Sources only: nothing for the embedding workers to do while the test runs."""
    now = "2025-01-15T10:00:00Z"
    library = Library.open(path)
    try:
        with library.write() as conn:
            conn.executemany(
                "INSERT INTO sources(id, name, type, created_at, updated_at) "
                "VALUES (?, ?, 'book', ?, ?)",
                [(str(uuid.uuid4()), f"Book {n} " + "x" * 400, now, now) for n in range(400)],
            )
    finally:
        library.close()


def mangle_after_schema(path: Path) -> None:
    """Overwrite every page after the schema's on disk, as a failing disk or a stray copy
    would, while the server holds the file open."""
    data = bytearray(path.read_bytes())
    assert len(data) > 4 * KEPT_PAGES * PAGE  # pages beyond the schema's to mangle
    for offset in range(KEPT_PAGES * PAGE, len(data), PAGE):
        data[offset : offset + PAGE] = b"\x5a" * PAGE
    path.write_bytes(bytes(data))


async def test_a_library_damaged_while_serving_is_named_with_what_to_do(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO, logger="screvi_mcp.client")
    path = tmp_path / "library.sqlite3"
    library_with_sources(path)
    async with mcp_client(path) as client:
        mangle_after_schema(path)
        for tool, arguments in (
            ("list_sources", {"per_page": MAX_PER_PAGE}),
            ("list_sources", {"per_page": MAX_PER_PAGE, "page": 3}),
        ):
            text = await call_error(client, tool, arguments)
            assert_tool_error(
                text, "library_damaged", "damaged", "screvi-mcp check", "backup", "screvi-mcp sync"
            )
            assert "try again" not in text.lower()
    # The same pages read back the same: the client does not resend.
    assert not [r for r in caplog.records if "retrying" in r.getMessage()]
