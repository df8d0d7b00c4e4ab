"""Sync progress on stderr through the shared `progress` reporter: one line per phase."""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, TextIO

from screvi_mcp.progress import ProgressReporter, format_summary

if TYPE_CHECKING:
    from screvi_mcp.mirror.sync import SyncSummary


class Reporter(Protocol):
    """Where a sync's progress goes: a bar on a terminal, plain lines otherwise (see cli)."""

    def phase(self, name: str, total: int | None) -> None: ...

    def advance(self, name: str, done: int, total: int | None) -> None: ...


class Silent:
    """A `Reporter` that says nothing (a sync a server runs for itself)."""

    def phase(self, name: str, total: int | None) -> None:
        pass

    def advance(self, name: str, done: int, total: int | None) -> None:
        pass


_UNITS = {
    "tags": "tags",
    "sources": "sources",
    "highlights": "highlights",
    "articles": "articles",
    "details": "article bodies",
    "tag_members": "tags",
    "embedding": "highlights",
}


class PhaseProgress:
    """A `Reporter` drawing one progress line (bar, counts, ETA on a terminal) per phase."""

    def __init__(self, *, stream: TextIO | None = None, enabled: bool = True) -> None:
        self._stream = stream
        self._enabled = enabled
        self._current: tuple[str, ProgressReporter] | None = None

    def phase(self, name: str, total: int | None) -> None:
        if self._current is not None and self._current[0] == name:
            if total is not None:
                self._current[1].update(self._current[1].done, total)
            return
        self.close()
        reporter = ProgressReporter(
            f"sync {name}",
            total,
            unit=_UNITS.get(name, "items"),
            stream=self._stream,
            enabled=self._enabled,
        )
        self._current = (name, reporter)

    def advance(self, name: str, done: int, total: int | None) -> None:
        if self._current is None or self._current[0] != name:
            self.phase(name, total)
        assert self._current is not None
        self._current[1].update(done, total)

    def close(self, *, stopped: bool = False) -> None:
        """End the current phase's line. `stopped`: the run ended before finishing it (paused,
        interrupted, failed); the line says so unless the phase had in fact reached its
        total (a run paused between phases)."""
        if self._current is not None:
            reporter = self._current[1]
            short = reporter.total is None or reporter.done < reporter.total
            reporter.finish(stopped=stopped and short)
            self._current = None


def summary_text(summary: SyncSummary) -> str:
    kind = "Full copy" if summary.full else "Incremental sync"
    state = "finished" if summary.finished else "paused: run `screvi-mcp sync` again to continue"
    rows: list[tuple[str, object]] = []
    for name in ("tags", "sources", "highlights", "articles"):
        a = summary.applied[name]
        rows.append(
            (
                name,
                f"{a.created} new, {a.updated} changed, {a.deleted} deleted, "
                f"{a.unchanged} unchanged",
            )
        )
    rows.append(("article bodies", summary.applied["details"].updated))
    rows.append(("requests", f"{summary.requests} ({summary.rate_limited} answered 429)"))
    if summary.skipped:
        rows.append(
            (
                "skipped",
                ", ".join(f"{count} {kind}" for kind, count in sorted(summary.skipped.items()))
                + " the server sent with an id that is not a UUID or in a shape the API does "
                "not have (not stored)",
            )
        )
    if summary.waiting_for_vectors:
        rows.append(
            (
                "not yet embedded",
                f"{summary.waiting_for_vectors} highlights (found by keywords "
                "now, by meaning once the next server or sync on this mirror has embedded them)",
            )
        )
    if summary.passages_waiting:
        rows.append(
            (
                "article passages",
                f"{summary.passages_waiting} not yet embedded (found by keywords now, by "
                "meaning once a server on this mirror, --mirror, has embedded them)",
            )
        )
    rows.append(("time", f"{summary.seconds:.1f}s"))
    if summary.cursor:
        rows.append(("next sync from", summary.cursor))
    resumed = " (resumed an interrupted run)" if summary.resumed else ""
    return format_summary(f"{kind} {state}{resumed}", rows)
