"""docs/reliability.md states the bounds the code enforces: each number is the constant's."""

from __future__ import annotations

from pathlib import Path

from screvi_mcp.contract import MAX_HIGHLIGHT_TEXT
from screvi_mcp.local.fetching.fetcher import FetchSettings
from screvi_mcp.local.search import backlog
from screvi_mcp.local.storage import db
from screvi_mcp.mirror import sync, walk_guard
from screvi_mcp.server import transport
from screvi_mcp.transfer import markdown_notes, readwise, spans

DOC = (Path(__file__).resolve().parents[1] / "docs" / "reliability.md").read_text("utf-8")


def test_every_stated_bound_is_the_code_s() -> None:
    settings = FetchSettings()
    stated = {
        f"{markdown_notes._SUFFIX_ROOM} bytes kept",
        f"first {markdown_notes.HEAD_BYTES // 1024} KiB",
        f"{markdown_notes.MAX_NOTE_BYTES // (1024 * 1024)} MiB each",
        f"More than {readwise.MAX_IMPORT_TAGS} tags",
        f"longer than {MAX_HIGHLIGHT_TEXT} characters",
        f"wider than {spans.MAX_WIDTH} locations",
        f"`max({walk_guard.OVERRUN_SLACK_PAGES}, {walk_guard.OVERRUN_SLACK_FRACTION:.0%})`",
        f"at most {walk_guard.MAX_REPEATED_PAGES} pages in a",
        f"{walk_guard.DEFAULT_MAX_PAGES} pages per list",
        f"{walk_guard.DEFAULT_MAX_ROWS} items",
        f"({sync.DEFAULT_MAX_RUN_SECONDS:.0f} s)",
        f"lock ({db.BUSY_TIMEOUT_MS // 1000} s)",
        f"within {settings.header_timeout:.0f} s",
        f"Connect {settings.connect_timeout:.0f} s, each read {settings.read_timeout:.0f} s, "
        f"a whole fetch {settings.total_timeout:.0f} s",
        f"{settings.min_bytes_per_second} bytes/s after {settings.min_rate_grace:.0f} s",
        f"At least {transport.MIN_AUTH_TOKEN_CHARS} characters",
        f"least {transport.MIN_AUTH_TOKEN_DISTINCT} different characters",
        f"{transport.MIN_AUTH_TOKEN_BITS} bits",
        f"last {backlog.RATE_WINDOW_SECONDS:.0f} s",
        f"From {backlog.SEARCH_NOTE_MIN_PENDING} waiting",
    }
    missing = sorted(text for text in stated if text not in " ".join(DOC.split()))
    assert not missing, f"docs/reliability.md does not state: {missing}"
    assert sync.DEFAULT_MAX_RUN_SECONDS == 6 * 3600  # "6 hours"
