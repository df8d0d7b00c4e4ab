"""Progress and summaries for long jobs (import, export, sync, reindex), always on stderr.

stdout belongs to MCP in stdio mode and to output the user asked for, so progress never goes
there. On a terminal the reporter redraws one line: a bar, counts, rate and ETA. Anywhere else
(a log file, CI, a pipe) it writes a plain line every `interval` seconds and one at the end, so
logs stay readable and short.

    with ProgressReporter("importing", total=len(records), unit="highlights") as progress:
        for batch in batches:
            write(batch)
            progress.advance(len(batch))
    sys.stderr.write(format_summary("Import finished", [("new", 12), ("updated", 3)]) + "\n")

A reporter is also a `(done, total)` callable, so it can be passed wherever a plain progress
callback is expected (e.g. `local.search.attach.reindex`).

The API is small on purpose and shared by several jobs: `ProgressReporter` (`advance`,
`update`, `__call__`, `finish`, context manager, `done`/`total`/`elapsed`/`rate`),
`format_summary` and `format_duration`.
"""

from __future__ import annotations

import contextlib
import sys
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from types import TracebackType
from typing import TextIO

BAR_WIDTH = 30
# Plain-line mode: one line every this many seconds (plus the final one).
DEFAULT_INTERVAL_SECONDS = 5.0
# Terminal mode: redraw at most this often, so a fast loop is not slowed by drawing.
TTY_REDRAW_SECONDS = 0.1


def format_duration(seconds: float) -> str:
    """`0.4s`, `12s`, `3m05s`, `1h02m`: short enough for a progress line."""
    if seconds < 10:
        return f"{seconds:.1f}s"
    whole = round(seconds)
    if whole < 60:
        return f"{whole}s"
    minutes, secs = divmod(whole, 60)
    if minutes < 60:
        return f"{minutes}m{secs:02d}s"
    hours, minutes = divmod(minutes, 60)
    return f"{hours}h{minutes:02d}m"


def format_summary(title: str, rows: Sequence[tuple[str, object]]) -> str:
    """A title line and aligned `name: value` rows, for the end of a job."""
    width = max((len(name) for name, _ in rows), default=0)
    lines = [title]
    lines.extend(f"  {name.ljust(width)}  {value}" for name, value in rows)
    return "\n".join(lines)


class ProgressReporter:
    """Counts work done, and shows it on stderr (a redrawn bar on a TTY, plain lines else).

    `total` may be unknown (None) at first and set later with `update`; without a total the
    line shows counts and rate but no bar or ETA. `stream`, `is_tty` and `clock` exist for tests
    and for callers that write elsewhere; by default it is stderr, detected as TTY or not.
    `enabled=False` keeps the counting but writes nothing (a `--quiet` flag).
    """

    def __init__(
        self,
        label: str,
        total: int | None = None,
        *,
        unit: str = "items",
        stream: TextIO | None = None,
        is_tty: bool | None = None,
        interval: float = DEFAULT_INTERVAL_SECONDS,
        clock: Callable[[], float] = time.monotonic,
        enabled: bool = True,
    ) -> None:
        self.label = label
        self.total = total
        self.unit = unit
        self.done = 0
        self._stream = stream if stream is not None else sys.stderr
        self._tty = _is_tty(self._stream) if is_tty is None else is_tty
        self._interval = interval
        self._clock = clock
        self._enabled = enabled
        self._started = clock()
        # Plain lines start one interval in, so a short job prints only its end line.
        self._last_draw = float("-inf") if self._tty else self._started
        self._finished_at: float | None = None
        self._stopped = False

    # -- counting -------------------------------------------------------------------------

    def advance(self, count: int = 1) -> None:
        """Record `count` more units done."""
        self.update(self.done + count)

    def update(self, done: int, total: int | None = None) -> None:
        """Set the absolute count (and the total, when it becomes known or changes)."""
        self.done = done
        if total is not None:
            self.total = total
        self._maybe_draw()

    def __call__(self, done: int, total: int) -> None:
        """The `(done, total)` callback shape other modules take."""
        self.update(done, total)

    def finish(self, *, stopped: bool = False) -> float:
        """Draw the final line (once) and return the elapsed seconds.

        `stopped`: the job ended before this work was done (interrupted, paused, failed):
        the line ends "stopped after N of M" instead of "done". Say it only when the work
        was cut short, not when the count merely fell short of an estimated total.
        """
        if self._finished_at is None:
            self._finished_at = self._clock()
            self._stopped = stopped
            if self._enabled:
                self._write_line(final=True)
        return self.elapsed

    def __enter__(self) -> ProgressReporter:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.finish(stopped=exc_type is not None)

    # -- measures -------------------------------------------------------------------------

    @property
    def elapsed(self) -> float:
        end = self._finished_at if self._finished_at is not None else self._clock()
        return max(0.0, end - self._started)

    @property
    def rate(self) -> float:
        """Units per second so far (0 before any time has passed)."""
        elapsed = self.elapsed
        return self.done / elapsed if elapsed > 0 else 0.0

    def eta(self) -> float | None:
        """Seconds left at the rate so far; None while it cannot be told."""
        if self.total is None or self.done <= 0 or self.rate <= 0:
            return None
        return max(0, self.total - self.done) / self.rate

    def line(self) -> str:
        """The current status as text, without bar (the plain-line form)."""
        parts = [f"{self.label}: {self._counts()}"]
        if self.elapsed > 0 and self.done > 0:
            rate = self.rate
            shown = f"{rate:,.0f}" if rate >= 10 else f"{rate:.1f}"
            parts.append(f"{shown} {self.unit}/s")
        parts.extend(self._tail())
        return " · ".join(parts)

    # -- drawing --------------------------------------------------------------------------

    def _counts(self) -> str:
        if self.total is None:
            return f"{self.done:,} {self.unit}"
        percent = 100 if self.total == 0 else min(100, 100 * self.done // self.total)
        return f"{self.done:,}/{self.total:,} {self.unit} ({percent}%)"

    def _tail(self) -> list[str]:
        if self._finished_at is not None:
            took = format_duration(self.elapsed)
            if self._stopped:
                of = "" if self.total is None else f" of {self.total:,}"
                return [f"stopped after {self.done:,}{of} ({took})"]
            return [f"done in {took}"]
        eta = self.eta()
        if eta is None or (self.total is not None and self.done >= self.total):
            return []
        return [f"ETA {format_duration(eta)}"]

    def _maybe_draw(self) -> None:
        if not self._enabled or self._finished_at is not None:
            return
        now = self._clock()
        wait = TTY_REDRAW_SECONDS if self._tty else self._interval
        if now - self._last_draw < wait:
            return
        self._last_draw = now
        self._write_line(final=False)

    def _write_line(self, *, final: bool) -> None:
        if self._tty:
            self._stream.write("\r" + self._bar() + " " + self.line() + "\x1b[K")
            if final:
                self._stream.write("\n")
        else:
            self._stream.write(self.line() + "\n")
        self._stream.flush()

    def _bar(self) -> str:
        if self.total is None:
            return ""
        filled = BAR_WIDTH
        if self.total > 0:
            filled = min(BAR_WIDTH, BAR_WIDTH * self.done // self.total)
        return f"[{'#' * filled}{'.' * (BAR_WIDTH - filled)}]"


# Work that cannot count its progress (a file parsed whole) says so at once, then how long
# it has taken this often, so a long read never looks like a hang.
HEARTBEAT_SECONDS = 1.0


@contextlib.contextmanager
def heartbeat(reporter: ProgressReporter, what: str) -> Iterator[ProgressReporter]:
    """`reporter`'s phase while it cannot count: "LABEL: WHAT" at once, then with the time
    taken every HEARTBEAT_SECONDS on a terminal (every plain-line interval otherwise); its
    own final line ("done in", or "stopped after" on an exception) when the block ends. Set
    the count (`update`) inside the block once it is known."""
    stop = threading.Event()

    def say(text: str) -> None:
        if reporter._enabled and reporter._finished_at is None:
            end = "\x1b[K" if reporter._tty else "\n"
            reporter._stream.write(("\r" if reporter._tty else "") + text + end)
            reporter._stream.flush()

    def beat() -> None:
        every = HEARTBEAT_SECONDS if reporter._tty else reporter._interval
        while not stop.wait(every):
            say(f"{reporter.label}: {what} · {format_duration(reporter.elapsed)}")

    say(f"{reporter.label}: {what}")
    ticker = threading.Thread(target=beat, name="progress-heartbeat", daemon=True)
    ticker.start()
    failed = True
    try:
        yield reporter
        failed = False
    finally:
        stop.set()  # no beat after the final line
        ticker.join()
        reporter.finish(stopped=failed)


def _is_tty(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):
        return False
