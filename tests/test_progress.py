"""The long-job progress reporter: plain lines off a terminal, a redrawn bar on one."""

from __future__ import annotations

import io

from screvi_mcp.progress import ProgressReporter, format_duration, format_summary


class FakeClock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_appear_once_per_interval_with_counts_rate_and_eta() -> None:
    clock, out = FakeClock(), io.StringIO()
    progress = ProgressReporter(
        "importing",
        total=1000,
        unit="highlights",
        stream=out,
        is_tty=False,
        interval=5.0,
        clock=clock,
    )
    clock.now += 1
    progress.advance(100)
    assert out.getvalue() == ""  # nothing before the first interval has passed
    clock.now += 4
    progress.advance(400)
    clock.now += 1
    progress.advance(100)  # within the interval after the first line: no new line
    lines = out.getvalue().splitlines()
    assert lines == ["importing: 500/1,000 highlights (50%) · 100 highlights/s · ETA 5.0s"]
    assert "\r" not in out.getvalue()


def test_finish_writes_one_final_line_with_the_elapsed_time() -> None:
    clock, out = FakeClock(), io.StringIO()
    with ProgressReporter("export", stream=out, is_tty=False, clock=clock) as progress:
        clock.now += 2
        progress.advance(10)
    assert progress.finish() == 2.0  # a second finish does not write again
    assert out.getvalue().splitlines() == ["export: 10 items · 5.0 items/s · done in 2.0s"]


def test_tty_redraws_one_line_with_a_bar_and_ends_with_a_newline() -> None:
    clock, out = FakeClock(), io.StringIO()
    progress = ProgressReporter("embedding", total=4, stream=out, is_tty=True, clock=clock)
    clock.now += 1
    progress(2, 4)  # the (done, total) callback shape
    progress.finish()
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "[" + "#" * 15 + "." * 15 + "] embedding: 2/4 items (50%)" in text


def test_disabled_reporter_counts_but_writes_nothing() -> None:
    out = io.StringIO()
    progress = ProgressReporter("quiet", total=3, stream=out, is_tty=True, enabled=False)
    progress.advance(3)
    progress.finish()
    assert progress.done == 3 and out.getvalue() == ""


def test_summary_and_durations_read_well() -> None:
    assert format_summary("Done", [("new", 3), ("updated", 12)]) == (
        "Done\n  new      3\n  updated  12"
    )
    assert [format_duration(s) for s in (0.42, 12.4, 185, 3725)] == [
        "0.4s",
        "12s",
        "3m05s",
        "1h02m",
    ]


def test_a_stopped_job_says_it_stopped_and_after_how_much() -> None:
    """An interrupted or paused phase ended "done in Xs", as if it had finished."""
    clock, out = FakeClock(), io.StringIO()
    progress = ProgressReporter(
        "importing", total=1000, unit="highlights", stream=out, is_tty=False, clock=clock
    )
    clock.now += 2
    progress.advance(300)
    progress.finish(stopped=True)
    assert out.getvalue().splitlines() == [
        "importing: 300/1,000 highlights (30%) · 150 highlights/s · stopped after 300 of 1,000 "
        "(2.0s)"
    ]
    out = io.StringIO()
    try:
        with ProgressReporter("export", stream=out, is_tty=False, clock=clock) as progress:
            progress.advance(10)
            raise KeyboardInterrupt
    except KeyboardInterrupt:
        pass
    assert out.getvalue().endswith("stopped after 10 (0.0s)\n")


def test_a_sync_phase_cut_short_says_stopped_but_a_short_count_of_a_finished_run_does_not() -> None:
    from screvi_mcp.mirror.report import PhaseProgress

    out = io.StringIO()
    phases = PhaseProgress(stream=out)
    phases.advance("highlights", 990, 1000)  # fewer than announced: deleted meanwhile
    phases.close(stopped=False)
    phases.advance("articles", 40, 100)  # the run paused here
    phases.close(stopped=True)
    phases.advance("tags", 5, 5)  # paused between phases: this one had finished
    phases.close(stopped=True)
    lines = out.getvalue().splitlines()
    assert lines[0].startswith("sync highlights: 990/1,000") and "done in" in lines[0]
    assert lines[1].startswith("sync articles: 40/100") and "stopped after 40 of 100" in lines[1]
    assert "done in" in lines[2]
