"""The README's generated parts, and the bounds in docs/reliability.md, match the code."""

from pathlib import Path

from screvi_mcp.server.app import all_tool_specs
from screvi_mcp.server.docs import BEGIN, END, tool_table, with_tool_table

README = Path(__file__).resolve().parents[1] / "README.md"
RELIABILITY = README.parent / "docs" / "reliability.md"


def test_readme_tool_table_is_current() -> None:
    text = README.read_text(encoding="utf-8")
    assert BEGIN in text and END in text
    assert with_tool_table(text) == text, (
        "README.md's tool table is stale: run `.venv/bin/python scripts/update_readme.py`"
    )


def test_tool_table_lists_every_tool_once() -> None:
    rows = [line for line in tool_table().splitlines() if line.startswith("| `")]
    names = [row.split("`")[1] for row in rows]
    assert len(names) == len(all_tool_specs())
    assert len(set(names)) == len(names)
    assert {"search_highlights", "read_article", "save_article", "delete_tag"} <= set(names)


def test_reliability_notes_state_the_bounds_the_code_enforces() -> None:
    from screvi_mcp.client.client import DEFAULT_TIMEOUT, MAX_RESPONSE_BYTES
    from screvi_mcp.client.deadline import DEFAULT_CALL_DEADLINE
    from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT
    from screvi_mcp.client.retry import RetryPolicy
    from screvi_mcp.local.api.request_pipeline import MAX_BODY_BYTES
    from screvi_mcp.local.fetching.fetcher import FetchSettings
    from screvi_mcp.local.fetching.pipeline import WorkerSettings
    from screvi_mcp.local.storage import checkpointer, db
    from screvi_mcp.server.transport import MIN_AUTH_TOKEN_CHARS

    text = RELIABILITY.read_text(encoding="utf-8")
    notes = text[text.index("## Reliability notes") :]
    notes = notes[: notes.index("\n## ", 1)]
    fetch = FetchSettings()
    lease = WorkerSettings().claim_lease
    expected = [
        f"{DEFAULT_CALL_DEADLINE:g} s (`SCREVI_CALL_DEADLINE`)",
        f"{DEFAULT_MAX_RATE_WAIT:g} s (`SCREVI_MAX_RATE_WAIT`)",
        f"{DEFAULT_TIMEOUT.connect:g} s / {DEFAULT_TIMEOUT.read:g} s",
        f"resent up to {RetryPolicy().max_retries} times",
        f"REST request body (embedded API) | {MAX_BODY_BYTES // 2**20} MiB",
        f"(hosted mode) | {MAX_RESPONSE_BYTES // 2**20} MiB",
        f"{fetch.total_timeout:g} s, {fetch.max_bytes // 2**20} MiB, {fetch.max_redirects} "
        f"redirects, at least {fetch.min_bytes_per_second} bytes/s after "
        f"{fetch.min_rate_grace:g} s",
        f"at least {MIN_AUTH_TOKEN_CHARS} characters",
        f"started over past {checkpointer.RESTART_PAGES * 4096 // 2**20} MiB; a commit that "
        f"finds it past {checkpointer.WAL_HARD_BYTES // 2**20} MiB",
        f"cut back to {db.WAL_KEEP_BYTES // 2**20} MiB when reused",
        f"{lease:g} s lease it renews every\n{lease / 3:g} s",
    ]
    for statement in expected:
        assert statement in notes, f"README reliability notes should say: {statement}"


def test_readme_states_the_main_bounds_the_code_enforces() -> None:
    """The README's short table of bounds (the full list is docs/reliability.md) says what the
    code does: each value is built from the constant that enforces it."""
    from screvi_mcp.client.client import DEFAULT_TIMEOUT
    from screvi_mcp.client.deadline import DEFAULT_CALL_DEADLINE
    from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT
    from screvi_mcp.client.retry import RetryPolicy
    from screvi_mcp.local.api.request_pipeline import MAX_BODY_BYTES
    from screvi_mcp.local.fetching.fetcher import FetchSettings
    from screvi_mcp.mirror import sync, walk_guard
    from screvi_mcp.transfer.jobs import MAX_IMPORT_BYTES

    text = README.read_text(encoding="utf-8")
    fetch = FetchSettings()
    expected = [
        f"| {DEFAULT_CALL_DEADLINE:g} s (`SCREVI_CALL_DEADLINE`) |",
        f"| {DEFAULT_MAX_RATE_WAIT:g} s (`SCREVI_MAX_RATE_WAIT`) |",
        f"| {DEFAULT_TIMEOUT.connect:g} s / {DEFAULT_TIMEOUT.read:g} s, reads resent up to "
        f"{RetryPolicy().max_retries} times |",
        f"| {MAX_BODY_BYTES // 2**20} MiB |",
        f"| {fetch.total_timeout:g} s, {fetch.max_bytes // 2**20} MiB, {fetch.max_redirects} "
        "redirects |",
        f"| {MAX_IMPORT_BYTES // 2**20} MiB |",
        f"| {walk_guard.DEFAULT_MAX_PAGES} pages and {walk_guard.DEFAULT_MAX_ROWS} items a list, "
        f"{sync.DEFAULT_MAX_RUN_SECONDS / 3600:g} h |",
    ]
    for statement in expected:
        assert statement in text, f"the README's table of bounds should say: {statement}"
