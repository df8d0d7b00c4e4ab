"""Review state shared by processes at once (an MCP server and `screvi-mcp review`): no
answer lost, no highlight twice in a day, a day never larger than its size."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from review_testkit import START, fsrs_card, same_schedule

from screvi_mcp.local.storage.library import Library
from screvi_mcp.review.state import Picked, ReviewState
from testsupport.polling import wait_until

PROCESSES = 4
PER_PROCESS = 15
READY_SECONDS = 60.0  # a bound on waiting for the interpreters to start, not a pause

# Each process says it is ready, waits for the go file, then at once: puts its own picks
# into the same day (size 10) and answers its own highlights, one transaction each.
_WORKER = textwrap.dedent(
    """
    import sys, time
    from datetime import datetime
    from pathlib import Path
    from screvi_mcp.review import schedule
    from screvi_mcp.review.state import Picked, ReviewState
    path, go, n, day = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    now, answers = datetime.fromisoformat(sys.argv[5]), int(sys.argv[6])

    def good(before):
        return schedule.review(before or schedule.new_card(now), "good", now)

    Path(f"{go}.ready-{n}").touch()
    # A child cannot import the tests' polling helper; it spins briefly so that all start
    # together once the go file appears (bounded: a lost parent must not leave it polling).
    deadline = time.monotonic() + 60
    while not go.exists():
        if time.monotonic() > deadline:
            sys.exit("the go file never came")
        time.sleep(0.002)
    with ReviewState.open(path) as state:
        picks = [Picked(f"shared-{k}", "new") for k in range(6)]
        picks += [Picked(f"p{n}-{k}", "new") for k in range(6)]
        state.extend_day(day, picks, size=10, new_cap=10)
        for k in range(answers):
            state.answer(day, f"h{n}-{k}", "good", now, good)
    """
)


def _run_together(worker: str, path: Path, go: Path, processes: int, answers: int) -> None:
    """Start `processes` workers, let them go at once when all are ready, wait for them."""
    day, now = START.date().isoformat(), START.isoformat()
    children = [
        subprocess.Popen(
            [sys.executable, "-c", worker, str(path), str(go), str(n), day, now, str(answers)],
            stderr=subprocess.PIPE,
            text=True,
        )
        for n in range(processes)
    ]

    def ready() -> bool:
        assert all(child.poll() is None for child in children), children[0].communicate()
        return all(Path(f"{go}.ready-{n}").exists() for n in range(processes))

    wait_until(ready, timeout=READY_SECONDS, what="the workers did not start", every=0.01)
    go.touch()
    for child in children:
        _, err = child.communicate(timeout=120)
        assert child.returncode == 0, err


@pytest.mark.parametrize("trial", range(2))
def test_processes_answering_and_composing_at_once_lose_nothing(tmp_path: Path, trial: int) -> None:
    path = tmp_path / "lib.sqlite3"
    Library.open(path).close()  # a migrated library file
    day = START.date().isoformat()
    _run_together(_WORKER, path, tmp_path / "go", PROCESSES, PER_PROCESS)
    with ReviewState.open(path) as state:
        items = state.day(day)
        ids = [item.highlight_id for item in items]
        answered = [item for item in items if item.answer == "good"]
        chosen = [item for item in items if item.kind == "new"]
        cards = state.cards([f"h{n}-{k}" for n in range(PROCESSES) for k in range(PER_PROCESS)])
    assert len(ids) == len(set(ids))  # no highlight twice in the day
    assert len(chosen) == 10  # the size held, whoever composed first
    assert len(answered) == len(cards) == PROCESSES * PER_PROCESS  # no answer lost
    expected = fsrs_card([(START, "good")])
    assert all(same_schedule(info.card, expected) and info.reviews == 1 for info in cards.values())


def test_one_highlight_answered_by_two_processes_at_once_is_answered_once(tmp_path: Path) -> None:
    """Both answers are the day's one answer in turn: the later replaces the earlier, and
    both apply to the card as it was before the day (never one on top of the other)."""
    path = tmp_path / "lib.sqlite3"
    Library.open(path).close()
    day = START.date().isoformat()
    worker = _WORKER.replace('f"h{n}-{k}"', '"same"')
    _run_together(worker, path, tmp_path / "go", 2, 5)
    with ReviewState.open(path) as state:
        card = state.cards(["same"])["same"]
        assert [item.highlight_id for item in state.day(day)].count("same") == 1
    assert same_schedule(card.card, fsrs_card([(START, "good")])) and card.reviews == 1


def test_picks_record_the_day_once(tmp_path: Path) -> None:
    """The day's picks are stored in the order given, new ones up to the cap."""
    path = tmp_path / "lib.sqlite3"
    with ReviewState.open(path) as state:
        state.extend_day(
            "2026-03-02", [Picked(f"n{k}", "new") for k in range(5)], size=10, new_cap=3
        )
        state.extend_day(
            "2026-03-02", [Picked("d", "due"), Picked("n0", "due")], size=10, new_cap=3
        )
        assert [(i.highlight_id, i.kind) for i in state.day("2026-03-02")] == [
            ("n0", "new"),
            ("n1", "new"),
            ("n2", "new"),
            ("d", "due"),
        ]
