"""A sync killed mid-run resumes without loss or duplicates; 429s and budgets are honoured."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import threading
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import anyio
import pytest
from mirror_testkit import FAST, StandIn, mirror_client, seed, snapshot, sync
from test_sync import assert_same

from screvi_mcp.client.client import ScreviClient
from testsupport.command import run_command
from testsupport.polling import wait_until

WAIT_SECONDS = 60.0  # a bound on waiting for the subprocess, not a timing check


def _run_state(mirror: Path) -> dict[str, str]:
    if not mirror.exists():
        return {}
    conn = sqlite3.connect(f"file:{mirror}?mode=ro", uri=True, timeout=5)
    try:
        state = dict(conn.execute("SELECT key, value FROM mirror_state").fetchall())
        waiting = conn.execute("SELECT count(*) FROM embedding_queue").fetchone()[0]
        return {**state, "waiting_for_vectors": str(waiting)}
    except sqlite3.OperationalError:  # not migrated yet
        return {}
    finally:
        conn.close()


async def _more_highlights(client: ScreviClient, count: int) -> None:
    await client.create_highlights_bulk(
        [{"content": f"Observation {n} about the weather and the harvest."} for n in range(count)]
    )


def _sync_command(stand_in: StandIn, mirror: Path, *extra: str) -> subprocess.Popen[str]:
    mirror.parent.mkdir(parents=True, exist_ok=True)  # a --library path's folder must exist
    env = {
        **os.environ,
        "SCREVI_API_KEY": stand_in.key,
        "SCREVI_BASE_URL": stand_in.base_url,
    }
    return subprocess.Popen(
        [sys.executable, "-m", "screvi_mcp", "sync", "--library", str(mirror), *extra],
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


async def test_a_sync_killed_mid_run_resumes_without_loss_or_duplicates(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
        await _more_highlights(client, 40)
    # Two highlights a page and a budget of 12 requests a minute. The limiter grants the
    # first 12 at once (about 3 for tags and sources, then 9 pages of highlights) and holds
    # the 13th for a minute, so the run waits mid-highlights however fast the machine is.
    # A budget of 300 let a fast machine finish all 29 requests between two looks.
    process = _sync_command(stand_in, mirror_path, "--per-page", "2", "--requests-per-minute", "12")

    def waiting_at_the_budget() -> bool:
        # Killed while it waits at the budget, once its worker has embedded what it stored:
        # a kill holding an embedding claim would make the resumed run wait out the claim's
        # 30 s lease (test_embedding_queue.py tests that case).
        assert process.poll() is None, process.communicate()
        state = _run_state(mirror_path)
        return (
            state.get("run_phase") == "highlights"
            and int(state.get("run_walked", 0)) >= 8
            and state.get("waiting_for_vectors") == "0"
        )

    try:
        wait_until(
            waiting_at_the_budget,
            timeout=WAIT_SECONDS,
            what="the sync never reached the highlights",
        )
        process.send_signal(signal.SIGKILL)
    finally:
        process.wait(WAIT_SECONDS)
    killed_at = _run_state(mirror_path)
    assert "cursor" not in killed_at  # a half-finished run never moves the cursor
    assert killed_at["run_phase"] == "highlights"

    resumed = await sync(stand_in, mirror_path)
    assert resumed.resumed and resumed.finished
    # It went on from the stored page rather than starting over.
    assert resumed.applied["sources"].created == 0
    assert 0 < resumed.applied["highlights"].created < 49
    await assert_same(stand_in, mirror_path)
    async with mirror_client(mirror_path) as copy:
        listed = (await snapshot(copy))["highlights"]
        assert len(listed) == len({item["id"] for item in listed}) == 49


async def test_ctrl_c_mid_sync_says_the_copy_is_kept_and_the_next_run_resumes(
    stand_in: StandIn, mirror_path: Path
) -> None:
    """Ctrl-C ended a sync with a bare "interrupted" (before: a traceback), not saying
    that what was copied is kept and that the next run continues from it."""
    async with stand_in.client() as client:
        await seed(client)
        await _more_highlights(client, 40)
    # As above: the budget holds the run mid-highlights, where Ctrl-C lands.
    process = _sync_command(stand_in, mirror_path, "--per-page", "2", "--requests-per-minute", "12")

    def in_highlights() -> bool:
        assert process.poll() is None, process.communicate()
        return _run_state(mirror_path).get("run_phase") == "highlights"

    try:
        wait_until(
            in_highlights, timeout=WAIT_SECONDS, what="the sync never reached the highlights"
        )
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=WAIT_SECONDS)
    finally:
        process.kill()
        process.wait(WAIT_SECONDS)
    assert process.returncode == 130, err
    assert "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "sync interrupted" in err and "run again to continue" in err
    assert stand_in.key not in err
    resumed = await sync(stand_in, mirror_path)
    assert resumed.resumed and resumed.finished
    await assert_same(stand_in, mirror_path)


async def test_the_cli_prints_a_summary_and_never_the_key(
    stand_in: StandIn,
    mirror_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    # In-process (testsupport/command.py): what the command prints is the point, not the
    # process (the kill and Ctrl-C tests above keep theirs).
    async with stand_in.client() as client:
        await seed(client)
    mirror_path.parent.mkdir(parents=True, exist_ok=True)  # a --library path's folder
    env = {
        **{k: v for k, v in os.environ.items() if k.startswith("SCREVI_")},
        "SCREVI_API_KEY": stand_in.key,
        "SCREVI_BASE_URL": stand_in.base_url,
    }
    argv = ("sync", "--library", str(mirror_path), "--per-page", "3")
    # On a worker thread: the command runs its own event loop, and this test is in one.
    code, out, err = await anyio.to_thread.run_sync(
        lambda: run_command(monkeypatch, capsys, *argv, env=env)
    )
    assert code == 0, err
    assert out == ""  # stdout stays free; progress and summary go to stderr
    assert "Full copy finished" in err and "highlights" in err
    assert stand_in.key not in err
    await assert_same(stand_in, mirror_path)


def test_the_cli_without_a_key_says_what_to_set(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    library = str(tmp_path / "m.sqlite3")
    code, _, err = run_command(monkeypatch, capsys, "sync", "--library", library)
    assert code == 2 and "SCREVI_API_KEY" in err


async def test_a_429_storm_is_waited_out(stand_in: StandIn, mirror_path: Path) -> None:
    async with stand_in.client() as client:
        await seed(client)
        await _more_highlights(client, 40)
    stand_in.throttle(6, window_seconds=1.0)  # the stand-in now answers 429 beyond 6/s
    summary = await sync(stand_in, mirror_path)
    assert summary.finished
    assert summary.rate_limited > 0  # the storm happened, and Retry-After was honoured
    stand_in.throttle(100_000, window_seconds=60.0)
    await assert_same(stand_in, mirror_path)


async def test_the_budget_keeps_the_sync_under_the_server_limit(
    stand_in: StandIn, mirror_path: Path
) -> None:
    async with stand_in.client() as client:
        await seed(client)
        await _more_highlights(client, 40)
    stand_in.throttle(8, window_seconds=1.0)
    budget = replace(FAST, requests_per_minute=6, rate_window_seconds=1.0)
    summary = await sync(stand_in, mirror_path, budget)
    assert summary.finished and summary.requests > 12
    assert summary.rate_limited == 0


async def test_an_edit_made_during_a_run_is_caught_by_the_next_one(
    stand_in: StandIn, mirror_path: Path
) -> None:
    """Edited on a page the run had already passed: the cursor (the run's start on the
    server's clock, minus the overlap) makes the next run ask for it again."""
    import httpx

    async with stand_in.client() as client:
        await seed(client)
        newest = (await client.list_highlights(per_page=1)).data[0].id

    class EditMidRun:
        edited = False

        def phase(self, name: str, total: int | None) -> None:
            pass

        def advance(self, name: str, done: int, total: int | None) -> None:
            if name == "highlights" and not self.edited:
                self.edited = True  # the first page (newest first) is stored by now
                httpx.patch(
                    f"{stand_in.base_url}/highlights/{newest}",
                    json={"content": "Edited while the sync was running."},
                    headers={"X-API-Key": stand_in.key},
                ).raise_for_status()

    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.mirror.sync import build_client, run_sync

    exact = replace(FAST, overlap=timedelta(0))  # not even the overlap's help
    client, clock = build_client(stand_in.key, stand_in.base_url, exact)
    library = Library.open(mirror_path)
    try:
        async with client:
            reporter = EditMidRun()
            first = await run_sync(
                library, client, clock, api_key=stand_in.key, settings=exact, reporter=reporter
            )
    finally:
        library.close()
    assert reporter.edited and first.finished
    second = await sync(stand_in, mirror_path, exact)
    assert second.applied["highlights"].updated >= 1
    await assert_same(stand_in, mirror_path)


async def test_a_run_stopped_at_its_time_limit_moves_no_cursor_and_resumes(
    stand_in: StandIn, mirror_path: Path
) -> None:
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.mirror.sync import SyncPaused, build_client, run_sync

    async with stand_in.client() as client:
        await seed(client)

    class DeadlineAfterFirstHighlights:
        """Reaches the time limit right after the first page of highlights is stored."""

        def phase(self, name: str, total: int | None) -> None:
            pass

        def advance(self, name: str, done: int, total: int | None) -> None:
            if name == "highlights":
                raise SyncPaused("the sync's time limit was reached")

    client, clock = build_client(stand_in.key, stand_in.base_url, FAST)
    library = Library.open(mirror_path)
    try:
        async with client:
            paused = await run_sync(
                library,
                client,
                clock,
                api_key=stand_in.key,
                settings=FAST,
                reporter=DeadlineAfterFirstHighlights(),
            )
    finally:
        library.close()
    assert not paused.finished
    state = _run_state(mirror_path)
    assert "cursor" not in state and state["run_phase"] == "highlights"
    done = await sync(stand_in, mirror_path)
    assert done.finished and done.resumed
    assert done.applied["sources"].created == 0
    await assert_same(stand_in, mirror_path)


async def test_a_sync_waits_at_its_budget_longer_than_a_tool_call_would(
    stand_in: StandIn, mirror_path: Path
) -> None:
    """Interactive calls give up after a short wait at the limiter; a sync waits its turn."""
    from screvi_mcp.client.ratelimit import DEFAULT_MAX_RATE_WAIT

    async with stand_in.client() as client:
        await seed(client)
    window = DEFAULT_MAX_RATE_WAIT + 1.0  # each wait at the budget is longer than that cap
    budget = replace(FAST, per_page=100, requests_per_minute=2, rate_window_seconds=window)
    summary = await sync(stand_in, mirror_path, budget)
    assert summary.finished and summary.requests >= 3
    await assert_same(stand_in, mirror_path)


class _GatedEmbedder:
    """The real embedder, held at a gate the test opens: leftovers that outlast a time limit,
    without thousands of highlights or a guess at how slow the machine is. A run that waits
    for the batch in flight waits out GATE_SECONDS, which the timing check below catches."""

    GATE_SECONDS = 60.0

    def __init__(self, real: object, gate: threading.Event) -> None:
        self._real = real
        self._gate = gate

    def embed(self, texts: list[str]) -> object:
        self._gate.wait(self.GATE_SECONDS)
        return self._real.embed(texts)  # type: ignore[attr-defined]

    def __getattr__(self, name: str) -> object:
        return getattr(self._real, name)


async def test_the_time_limit_holds_when_an_interrupted_run_left_vectors_to_make(
    stand_in: StandIn, mirror_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Embedding the leftovers of an interrupted run came before the first deadline check:
    `--time-limit 10` took 85 s and sent no request, and five resumed runs in a row made no
    progress. The leftovers are now the embedding worker's, beside the run, and the run's
    own time limit bounds every phase."""
    pytest.importorskip("onnxruntime")
    from screvi_mcp.local.search import embedder
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.mirror.sync import (
        Reporter,
        SyncPaused,
        SyncSettings,
        SyncSummary,
        build_client,
        run_sync,
    )

    gate = threading.Event()  # shut: nothing gets embedded
    loaded = embedder.load_embedder
    monkeypatch.setattr(embedder, "load_embedder", lambda: _GatedEmbedder(loaded(), gate))
    async with stand_in.client() as client:
        await seed(client)
        await _more_highlights(client, 100)

    class PauseAfterFirstHighlights:
        def phase(self, name: str, total: int | None) -> None:
            pass

        def advance(self, name: str, done: int, total: int | None) -> None:
            if name == "highlights":
                raise SyncPaused("the sync's time limit was reached")

    async def run(settings: SyncSettings, reporter: Reporter | None = None) -> SyncSummary:
        client, clock = build_client(stand_in.key, stand_in.base_url, settings)
        library = Library.open(mirror_path)
        try:
            async with client:
                return await run_sync(
                    library,
                    client,
                    clock,
                    api_key=stand_in.key,
                    settings=settings,
                    reporter=reporter,
                )
        finally:
            gate.set()  # closing waits for the batch in flight, and drops its vectors
            library.close()
            gate.clear()

    first = replace(FAST, per_page=100, wait_for_vectors=False)
    await run(first, PauseAfterFirstHighlights())
    leftovers = int(_run_state(mirror_path)["waiting_for_vectors"])
    assert leftovers >= 50  # none embedded: more than the time limit below lets through

    limit = 2.0
    resumed = await run(replace(first, time_limit=limit, wait_for_vectors=True))
    assert resumed.resumed and resumed.finished  # progress: the run got to its end
    # Far below GATE_SECONDS: the run did not wait for the batch held at the gate.
    assert resumed.seconds < limit + 30.0
    assert resumed.waiting_for_vectors > 0  # the rest is embedded by whoever opens it next
