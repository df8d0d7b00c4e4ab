"""`GET /highlights/{id}` is answered on the event loop, and nothing there ever waits for SQLite.

A long import holds the write lock for seconds; a read must still be answered at once, and
the once-a-minute write of the key's `last_used_at` must wait in a worker thread, never on
the event loop (which serves every other request meanwhile).
"""

from __future__ import annotations

import sqlite3

import anyio
from api_testkit import Api

from screvi_mcp.local.api import request_pipeline as http

WAIT_SECONDS = 30.0  # a bound on waiting, not a timing check


def _hold_the_write_lock(api: Api) -> sqlite3.Connection:
    """Another writer in the middle of its transaction (an import, say)."""
    conn = sqlite3.connect(api.library.path, isolation_level=None)
    conn.execute("BEGIN IMMEDIATE")
    conn.execute("UPDATE settings SET value = value")
    return conn


async def test_a_read_is_answered_on_the_event_loop_while_another_writer_holds_the_lock(
    api: Api,
) -> None:
    created = await api.highlight("read while an import writes")
    first = await api.get(f"/highlights/{created['id']}")  # records the key's use
    assert first.status_code == 200
    # From here the key's use is recent: the read needs no write and no worker thread.
    writer = _hold_the_write_lock(api)
    try:
        with anyio.fail_after(WAIT_SECONDS):
            answer = await api.get(f"/highlights/{created['id']}")
        assert answer.status_code == 200
        assert answer.json()["data"]["content"] == "read while an import writes"
        assert "X-RateLimit-Remaining" in answer.headers
        with api.library.reads_without_waiting() as lent:
            assert lent  # prepared by the first read, free again after the second
    finally:
        writer.execute("ROLLBACK")
        writer.close()


async def test_a_due_last_used_write_waits_in_a_worker_thread_not_on_the_event_loop(
    api: Api,
) -> None:
    created = await api.highlight("the key's use is due")
    assert (await api.get(f"/highlights/{created['id']}")).status_code == 200
    api.sql("UPDATE api_keys SET last_used_at = '2000-01-01T00:00:00.000000Z'")
    writer = _hold_the_write_lock(api)
    outcome: list[int] = []

    async def read() -> None:
        outcome.append((await api.get(f"/highlights/{created['id']}")).status_code)

    try:
        async with anyio.create_task_group() as tasks:
            tasks.start_soon(read)
            # The loop is free: this sleep ends while the read waits for the lock (a fixed
            # sleep on purpose: the loop answering a timer is what is tested). Waiting on
            # the loop would hold everything for the busy timeout (10 s) first.
            slept_from = anyio.current_time()
            await anyio.sleep(0.3)
            assert anyio.current_time() - slept_from < 5.0  # a bound, with 16x to spare
            assert outcome == []
            writer.execute("ROLLBACK")
    finally:
        writer.close()
    assert outcome == [200]
    used = api.scalar("SELECT max(last_used_at) FROM api_keys")
    assert used > "2000-01-01T00:00:00.000000Z"


async def test_the_event_loop_read_counts_once_against_the_rate_limit(api: Api) -> None:
    created = await api.highlight("counted once")
    path = f"/highlights/{created['id']}"
    await api.get(path)
    remaining = [int((await api.get(path)).headers["X-RateLimit-Remaining"]) for _ in range(3)]
    assert remaining[0] - remaining[1] == 1
    assert remaining[1] - remaining[2] == 1


async def test_switched_off_the_same_read_goes_through_a_worker_thread(api: Api) -> None:
    created = await api.highlight("through a thread")
    http.NO_WAIT_READS = False
    try:
        answer = await api.get(f"/highlights/{created['id']}")
    finally:
        http.NO_WAIT_READS = True
    assert answer.status_code == 200
    assert answer.json()["data"]["content"] == "through a thread"


async def test_a_read_while_the_no_wait_connection_is_lent_goes_through_a_worker_thread(
    api: Api,
) -> None:
    created = await api.highlight("the lent connection")
    path = f"/highlights/{created['id']}"
    assert (await api.get(path)).status_code == 200  # prepares the no-wait connection
    # Another read holds the one no-wait connection (its lock is not re-entrant): this
    # request must not wait for it, nor share it, but answer from a worker thread.
    with api.library.reads_without_waiting() as lent:
        assert lent
        with anyio.fail_after(WAIT_SECONDS):
            answer = await api.get(path)
        with api.library.reads_without_waiting() as again:
            assert not again  # still held here: the request above did not get it
    assert answer.status_code == 200
    assert answer.json()["data"]["content"] == "the lent connection"
