"""`screvi-mcp review` at a terminal: the interactive review, and how mistakes read."""

from __future__ import annotations

import io
from pathlib import Path

import anyio
import pytest
from review_testkit import IDS, START, allow_fast_requests, library_client, seed

from screvi_mcp.cli import main


@pytest.fixture
def library(tmp_path: Path) -> Path:
    path = tmp_path / "lib.sqlite3"

    async def seeded() -> None:
        async with library_client(path) as client:
            await seed(client, sources=2, per_source=3)

    anyio.run(seeded)
    allow_fast_requests(path)
    return path


def review(library: Path, *args: str) -> int:
    return main(["review", "--library", str(library), "--now", START.isoformat(), *args])


def test_the_interactive_review_records_skips_and_resumes(
    library: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    assert review(library) == 0
    order = IDS.findall(capsys.readouterr().out)
    # good, then an unknown key (asked again), a skip, easy, then quit.
    monkeypatch.setattr("sys.stdin", io.StringIO("3\nx\ns\n4\nq\n"))
    assert review(library, "--interactive") == 0
    shown = capsys.readouterr().out
    assert f"Recorded good for {order[0]}" in shown
    assert f"Recorded easy for {order[2]}" in shown
    assert shown.count("[q] quit") == 5 and "resumes here" in shown
    assert review(library) == 0
    again = capsys.readouterr().out
    assert "2 done" in again and IDS.findall(again) == [order[1], *order[3:]]


def test_mistakes_are_one_line_with_what_to_do(
    library: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert review(library, "--rate", "no-such-id", "good") == 1
    err = capsys.readouterr().err
    assert err.startswith("screvi-mcp: [not_found]") and "Traceback" not in err
    assert review(library, "--rate", "no-such-id", "great") == 2
    assert "use one of again, hard, good, easy, discard" in capsys.readouterr().err
    assert review(library, "--size", "0") == 2
    assert "--size must be from 1" in capsys.readouterr().err
    assert main(["review", "--library", str(library), "--now", "yesterday"]) == 2
    assert "--now must be an ISO 8601 date-time" in capsys.readouterr().err
