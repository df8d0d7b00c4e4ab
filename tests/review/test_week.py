"""A simulated week of reviews through the MCP tools on each backend, and through the CLI:
the schedule each highlight ends with is the one FSRS computes for the same answers."""

from __future__ import annotations

import contextlib
import os
import sqlite3
import subprocess
import sys
from collections import defaultdict
from datetime import datetime
from pathlib import Path

import anyio
import pytest
from review_testkit import (
    IDS,
    Clock,
    allow_fast_requests,
    call_ok,
    cards,
    fsrs_card,
    hosted_client,
    library_client,
    mcp_client,
    same_schedule,
    seed,
    serve_library,
    settings,
    sync_mirror,
)

from screvi_mcp.cli import main
from screvi_mcp.mirror.serving import FreshnessPolicy
from screvi_mcp.review.daily import ReviewPlace
from screvi_mcp.server.backend import BackendConfig

# The answers a simulated reader gives, in turn.
ANSWERS = ("good", "hard", "easy", "again", "good")
SIZE, NEW = 4, 3
SCREVI_MCP = str(Path(sys.executable).parent / "screvi-mcp")


@contextlib.asynccontextmanager
async def backend(kind: str, tmp_path: Path, clock: Clock):  # type: ignore[no-untyped-def]
    """(MCP backend config, where its review state lives) for each kind of backend."""
    review = settings(clock, size=SIZE, new=NEW)
    if kind == "embedded":
        path = tmp_path / "lib.sqlite3"
        async with library_client(path) as client:
            await seed(client)
        allow_fast_requests(path)
        yield BackendConfig(library_path=path, review=review), ReviewPlace(path)
        return
    with serve_library(tmp_path / "screvi.sqlite3") as served:
        async with hosted_client(served) as client:
            await seed(client)
        if kind == "hosted":
            config = BackendConfig(
                api_key=served.key, base_url=served.base_url, rate_limit=100_000, review=review
            )
            yield config, ReviewPlace.hosted(served.key, served.base_url)
            return
        mirror = tmp_path / "mirror.sqlite3"
        await sync_mirror(served, mirror)
        config = BackendConfig(
            api_key=served.key,
            base_url=served.base_url,
            mirror_path=mirror,
            mirror_policy=FreshnessPolicy(max_age=1e9),
            review=review,
        )
        yield config, ReviewPlace(mirror)


@pytest.mark.parametrize("kind", ["embedded", "mirror", "hosted"])
async def test_a_week_of_reviews_through_the_tools(kind: str, tmp_path: Path) -> None:
    clock = Clock()
    answers: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
    async with backend(kind, tmp_path, clock) as (config, place):
        for day in range(7):
            async with mcp_client(config) as mcp:  # a new server each day: state is on disk
                ids = IDS.findall(await call_ok(mcp, "get_daily_review"))
                assert 0 < len(ids) == len(set(ids)) <= SIZE
                for n, highlight_id in enumerate(ids):
                    answer = ANSWERS[(day + n) % len(ANSWERS)]
                    reply = await call_ok(
                        mcp, "record_review", {"highlight_id": highlight_id, "answer": answer}
                    )
                    assert f"Recorded {answer} for {highlight_id}" in reply
                    answers[highlight_id].append((clock(), answer))
                    if day == 2 and n == 0:  # an edit (written through to Screvi on a mirror)
                        await call_ok(
                            mcp, "update_highlight", {"highlight_id": highlight_id, "note": "!"}
                        )
                assert "finished" in await call_ok(mcp, "get_daily_review")
                status = await mcp.read_resource("screvi://review/today")
                assert "Next due:" in str(status)
            clock.advance()
            clock.advance(1 / 24)  # a reader who reviews a little later each day
    assert any(len(given) > 1 for given in answers.values())  # due cards came back
    ours = cards(place, list(answers))
    for highlight_id, given in answers.items():
        assert same_schedule(ours[highlight_id], fsrs_card(given)), highlight_id
    if kind == "hosted":  # the state is local, beside the default library, not upstream
        assert place.path.parent == Path(os.environ["XDG_DATA_HOME"]) / "screvi-mcp"
        assert place.path.stat().st_mode & 0o077 == 0
        upstream = sqlite3.connect(tmp_path / "screvi.sqlite3")
        assert upstream.execute("SELECT count(*) FROM review_cards").fetchone() == (0,)
        upstream.close()


def review_cli(*args: str, env: dict[str, str] | None = None) -> str:
    done = subprocess.run(
        [SCREVI_MCP, "review", *args],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


def test_a_week_of_reviews_through_the_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`screvi-mcp review` in this process (its start-up costs seconds a run as a
    subprocess; the hosted test below runs the real console script)."""
    path = tmp_path / "lib.sqlite3"

    async def seeded() -> None:
        async with library_client(path) as client:
            await seed(client)

    anyio.run(seeded)
    allow_fast_requests(path)

    def review(*args: str) -> str:
        capsys.readouterr()
        assert main(["review", "--library", str(path), "--now", clock().isoformat(), *args]) == 0
        return capsys.readouterr().out

    clock = Clock()
    answers: dict[str, list[tuple[datetime, str]]] = defaultdict(list)
    sizes = ["--size", str(SIZE), "--new", str(NEW)]
    for day in range(7):
        ids = IDS.findall(review(*sizes))
        assert 0 < len(ids) == len(set(ids)) <= SIZE
        rates: list[str] = []
        for n, highlight_id in enumerate(ids):
            answer = ANSWERS[(day + n) % len(ANSWERS)]
            rates += ["--rate", highlight_id, answer]
            answers[highlight_id].append((clock(), answer))
        review(*sizes, *rates)
        note = review(*sizes, "--markdown")
        assert note.startswith(f"# Daily review {clock().date()}")
        assert all(f"`{highlight_id}`" in note for highlight_id in ids)
        clock.advance()
    assert any(len(given) > 1 for given in answers.values())
    ours = cards(ReviewPlace(path), list(answers))
    for highlight_id, given in answers.items():
        assert same_schedule(ours[highlight_id], fsrs_card(given)), highlight_id


async def test_the_cli_reviews_a_hosted_account(tmp_path: Path) -> None:
    with serve_library(tmp_path / "screvi.sqlite3") as served:
        async with hosted_client(served) as client:
            await seed(client, sources=2, per_source=2)
        env = {"SCREVI_API_KEY": served.key, "SCREVI_BASE_URL": served.base_url}
        when = Clock().moment.isoformat()
        ids = IDS.findall(review_cli("--now", when, env=env))
        assert len(ids) == 4
        review_cli("--now", when, "--rate", ids[0], "easy", env=env)
        again = review_cli("--now", when, env=env)
    assert "1 done, 3 left" in again and ids[0] not in IDS.findall(again)
    place = ReviewPlace.hosted(served.key, served.base_url)
    assert same_schedule(cards(place, ids)[ids[0]], fsrs_card([(Clock().moment, "easy")]))


def test_the_cli_reviews_a_mirror_and_refuses_a_file_that_is_not_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mirror = tmp_path / "mirror.sqlite3"
    with serve_library(tmp_path / "screvi.sqlite3") as served:

        async def seeded_and_synced() -> None:
            async with hosted_client(served) as client:
                await seed(client, sources=2, per_source=2)
            await sync_mirror(served, mirror)

        anyio.run(seeded_and_synced)
    when = Clock().moment.isoformat()
    # Keyless: read from the copy as it is (the stand-in has stopped).
    assert main(["--mirror", "--library", str(mirror), "review", "--now", when]) == 0
    ids = IDS.findall(capsys.readouterr().out)
    assert len(ids) == 4
    assert main(["review", "--mirror", "--library", str(mirror), "--now", when]) == 0
    assert IDS.findall(capsys.readouterr().out) == ids  # the same day, resumed
    plain = tmp_path / "plain.sqlite3"
    assert main(["review", "--mirror", "--library", str(plain), "--now", when]) == 1
    assert "is not a mirror yet" in capsys.readouterr().err
