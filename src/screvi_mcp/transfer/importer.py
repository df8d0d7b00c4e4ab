"""The import runner: parsed records → the library's rules → batches, with a report.

A file is parsed whole before anything is written, so a broken file writes nothing. Each
record is then validated as POST /sources and POST /highlights would (a record that fails is
reported with its line and left out), and the rest is written in batches, one transaction
each, through `local/storage/store/imports.py`, which also tells the semantic index (embeddings).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import imports
from screvi_mcp.local.storage.store.imports import HighlightItem, Outcome, SourceItem
from screvi_mcp.progress import ProgressReporter, format_summary
from screvi_mcp.transfer.records import ImportRecord, Notice, ParsedFile
from screvi_mcp.transfer.spans import SpanIndex

# Highlights per transaction: big enough to amortise commits and embedding batches, small
# enough that a progress line moves and one failed batch costs little to redo.
BATCH_SIZE = 200
# A dry run names the sources it would create, up to this many.
SHOWN_NEW_SOURCES = 20
_RANK = {Outcome.unchanged: 0, Outcome.deleted: 1, Outcome.updated: 2, Outcome.created: 3}


@dataclass
class ImportReport:
    dry_run: bool = False
    records: int = 0
    sources: Counter[Outcome] = field(default_factory=Counter)
    highlights: Counter[Outcome] = field(default_factory=Counter)
    skipped: dict[str, int] = field(default_factory=dict)
    notices: list[Notice] = field(default_factory=list)
    rejected: list[Notice] = field(default_factory=list)
    new_sources: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def new_highlights(self) -> int:
        return self.highlights[Outcome.created]

    def summary(self, title: str) -> str:
        verb = "would be " if self.dry_run else ""
        rows: list[tuple[str, object]] = [
            (
                "sources",
                f"{self.sources[Outcome.created]} {verb}new, "
                f"{self.sources[Outcome.updated]} {verb}updated, "
                f"{self.sources[Outcome.unchanged]} unchanged",
            ),
            (
                "highlights",
                f"{self.highlights[Outcome.created]} {verb}new, "
                f"{self.highlights[Outcome.updated]} {verb}updated, "
                f"{self.highlights[Outcome.unchanged]} unchanged",
            ),
        ]
        if self.highlights[Outcome.deleted] or self.sources[Outcome.deleted]:
            rows.append(
                (
                    "left deleted",
                    f"{self.highlights[Outcome.deleted]} highlights you deleted in the library",
                )
            )
        for reason, count in sorted(self.skipped.items()):
            rows.append(("skipped", f"{count} {reason}"))
        rows.append(("rejected", len(self.rejected)))
        lines = [
            format_summary(title + (" (dry run: nothing written)" if self.dry_run else ""), rows)
        ]
        lines.extend(f"  warning: {warning}" for warning in self.warnings)
        if self.dry_run and self.new_sources:
            shown = self.new_sources[:SHOWN_NEW_SOURCES]
            lines.extend(f"  would create source: {name}" for name in shown)
            if len(self.new_sources) > len(shown):
                lines.append(f"  … and {len(self.new_sources) - len(shown)} more sources")
        for notice in self.notices:
            lines.append(f"  line {notice.line}: {notice.reason}")
        for notice in self.rejected:
            lines.append(f"  line {notice.line}: rejected: {notice.reason}")
        return "\n".join(lines)


def _validated(
    parsed: ParsedFile, report: ImportReport
) -> list[tuple[ImportRecord, SourceItem, HighlightItem]]:
    sources: dict[str, SourceItem | str] = {}
    ready: list[tuple[ImportRecord, SourceItem, HighlightItem]] = []
    for record in parsed.records:
        source = sources.get(record.source_key)
        if source is None:
            try:
                source = SourceItem(record.source_key, imports.validate_source(record.source))
            except imports.ImportRejected as problem:
                source = f"source: {problem}"
            sources[record.source_key] = source
        if isinstance(source, str):
            report.rejected.append(Notice(record.line, source))
            continue
        try:
            body = imports.validate_highlight(record.highlight)
        except imports.ImportRejected as problem:
            report.rejected.append(Notice(record.line, str(problem)))
            continue
        item = HighlightItem(record.key, record.source_key, body, record.earlier_keys)
        ready.append((record, source, item))
    return ready


def _span_of(key: str) -> tuple[str, tuple[int, int]] | None:
    scope, _, tail = key.rpartition(":")
    start, dash, end = tail.partition("-")
    if not dash or not start.isdigit() or not end.isdigit():
        return None
    return scope + ":", (int(start), int(end))


def _same_passage_span(old: tuple[int, int], new: tuple[int, int]) -> bool:
    """Same start, or one range holding the other: the passage re-highlighted."""
    return (
        old[0] == new[0]
        or old[0] <= new[0] <= new[1] <= old[1]
        or new[0] <= old[0] <= old[1] <= new[1]
    )


def _with_earlier_keys(
    library: Library, ready: list[tuple[ImportRecord, SourceItem, HighlightItem]]
) -> list[tuple[ImportRecord, SourceItem, HighlightItem]]:
    """Link a passage re-highlighted longer on the device to the version imported before.

    Its span overlaps the earlier one with the same start, or holds it (or is held by it).
    """
    prefixes = {record.scope.split(":", 1)[0] + ":" for record, _, _ in ready if record.scope}
    # By span, so a record is compared only with keys near it (a re-import of a book of
    # 20,000 clips compared each with every other).
    known: dict[str, SpanIndex[tuple[str, tuple[int, int]]]] = {}
    for prefix in prefixes:
        for key in imports.known_keys(library, "highlight", prefix):
            found = _span_of(key)
            if found is not None:
                known.setdefault(found[0], SpanIndex()).add(found[1], (key, found[1]))
    if not known:
        return ready
    linked = []
    for record, source, item in ready:
        if record.scope and record.span:
            start, end = record.span
            earlier = tuple(
                key
                for key, (a, b) in _near(known.get(record.scope), record.span)
                if key != item.key and _same_passage_span((a, b), (start, end))
            )
            if earlier:
                keys = tuple(dict.fromkeys((*item.earlier_keys, *earlier)))
                item = HighlightItem(item.key, item.source_key, item.body, keys)
        linked.append((record, source, item))
    return linked


def _near(
    index: SpanIndex[tuple[str, tuple[int, int]]] | None, span: tuple[int, int]
) -> list[tuple[str, tuple[int, int]]]:
    return [] if index is None else index.overlapping(span)


def _batches(
    items: list[tuple[ImportRecord, SourceItem, HighlightItem]], size: int
) -> Iterable[list[tuple[ImportRecord, SourceItem, HighlightItem]]]:
    for start in range(0, len(items), size):
        yield items[start : start + size]


def _write_batch(
    writer: imports.ImportWriter,
    batch: list[tuple[ImportRecord, SourceItem, HighlightItem]],
    report: ImportReport,
) -> list[imports.BatchOutcome]:
    """Write a batch whole; if it breaks a rule, it was rolled back: write its records one by
    one instead, so only the records at fault are rejected (with their lines)."""
    sources = list({source.key: source for _, source, _ in batch}.values())
    try:
        return [writer.write_batch(sources, [item for _, _, item in batch])]
    except imports.ImportRejected:
        pass  # rolled back: find the records at fault
    outcomes = []
    for single in batch:
        record, source, item = single
        try:
            outcomes.append(writer.write_batch([source], [item]))
        except imports.ImportRejected as problem:
            report.rejected.append(Notice(record.line, str(problem)))
    return outcomes


def run_import(
    library: Library,
    parsed: ParsedFile,
    *,
    dry_run: bool = False,
    progress: ProgressReporter | None = None,
    batch_size: int = BATCH_SIZE,
) -> ImportReport:
    """Validate and write `parsed`; returns what happened (or, with `dry_run`, would)."""
    report = ImportReport(dry_run=dry_run, records=len(parsed.records))
    report.skipped = dict(parsed.skipped)
    report.notices = list(parsed.notices)
    report.warnings = list(parsed.warnings)
    report.rejected = list(parsed.rejected)
    ready = _with_earlier_keys(library, _validated(parsed, report))
    report.rejected.sort(key=lambda notice: notice.line)
    if progress is not None:
        progress.update(0, len(ready))
    source_outcomes: dict[str, Outcome] = {}
    source_names = {source.key: source.body.name for _, source, _ in ready}
    run_keys = frozenset(item.key for _, _, item in ready)
    with imports.ImportWriter(library, dry_run=dry_run, run_keys=run_keys) as writer:
        for batch in _batches(ready, batch_size):
            for outcome in _write_batch(writer, batch, report):
                for key, result in outcome.sources.items():
                    before = source_outcomes.get(key)
                    if before is None or _RANK[result] > _RANK[before]:
                        source_outcomes[key] = result
                report.highlights.update(outcome.highlights)
            if progress is not None:
                progress.advance(len(batch))
    report.rejected.sort(key=lambda notice: notice.line)
    report.sources.update(source_outcomes.values())
    report.new_sources = sorted(
        source_names[key] for key, result in source_outcomes.items() if result == Outcome.created
    )
    return report
