"""The sync engine: copy a Screvi account into a local library, then keep it current.

One run walks, in order: the full tag list (tags have no tombstones: they are hard-deleted),
sources (`include_empty`, so articles without highlights come too), highlights, articles,
and then the detail (body, parse errors, reading dates) of every article whose listed
version the mirror has not fetched yet. The first run asks for everything; later runs for
what changed since the cursor (`updated_since`), always with `include_deleted`, so deletions
arrive as tombstones and lists never shrink under a walk (an item added meanwhile shifts
later items down: seen twice, stored once, never missed).

Crash safety. Each page is stored in one transaction together with the resume point (phase,
items walked). The cursor moves only when a run has finished, to the server's time at the
start of that run minus an overlap window: anything changed during the run, or stamped by a server
clock slightly behind its `Date` header, is asked for again next time. Upserts are
idempotent, so asking twice costs a request and changes nothing. A killed run (even
`kill -9`) resumes at the last stored page of the phase it was in, with the same `since`.

Budget. Requests go through the client's shared limiter, set below the hosted limit
(100/minute) by default; 429 answers are retried after `Retry-After` by the client's retry
policy, which resends only requests that are safe to resend (every request here is a GET).
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

import anyio
import anyio.to_thread

from screvi_mcp.client.client import ScreviClient
from screvi_mcp.client.retry import RetryPolicy
from screvi_mcp.contract import MAX_PER_PAGE
from screvi_mcp.local.storage import clock
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import mirror_rows as store
from screvi_mcp.local.storage.store import passages as passage_rows
from screvi_mcp.local.storage.store.mirror_rows.state import STATE_LAST_SYNC
from screvi_mcp.mirror import DEFAULT_REQUESTS_PER_MINUTE
from screvi_mcp.mirror.article_bodies import ArticleBodies
from screvi_mcp.mirror.clock_transport import ClockTransport
from screvi_mcp.mirror.identity import check_identity, run_lock
from screvi_mcp.mirror.report import Reporter, Silent
from screvi_mcp.mirror.walk_guard import DEFAULT_MAX_PAGES, DEFAULT_MAX_ROWS, RunBudget, WalkGuard
from screvi_mcp.models import Page

log = logging.getLogger("screvi_mcp.mirror")

# Asked for again on every run: generous against server clocks a little behind `Date`.
DEFAULT_OVERLAP = timedelta(minutes=5)
# Without a `Date` header the local clock stands in, and may be off by more.
NO_SERVER_CLOCK_OVERLAP = timedelta(hours=1)
DEFAULT_BODY_CHUNK = 100_000
# A sync waits out 429s far longer than an interactive tool call would.
SYNC_RETRY = RetryPolicy(max_retries=8, base_delay=1.0, max_delay=60.0, max_total_wait=600.0)
# Without --time-limit a run still pauses (resumably) after this long: 32,000 pages at 90/min.
DEFAULT_MAX_RUN_SECONDS = 6 * 3600.0

PHASES = ("tags", "sources", "highlights", "articles", "details", "tag_members")

STATE_CURSOR = "cursor"
STATE_LAST_FULL_SYNC = "last_full_sync_at"
RUN_STARTED = "run_started"
RUN_SINCE = "run_since"
RUN_PHASE = "run_phase"
# Items of the phase's list walked so far: resuming starts at the page holding the last one,
# whatever page size the resuming run uses.
RUN_WALKED = "run_walked"
# The page size asked for and the one the server used (it may clamp `per_page` lower).
RUN_PAGE_ASKED = "run_page_asked"
RUN_PAGE_SIZE = "run_page_size"
RUN_KEYS = (RUN_STARTED, RUN_SINCE, RUN_PHASE, RUN_WALKED, RUN_PAGE_ASKED, RUN_PAGE_SIZE)


class SyncPaused(Exception):
    """The run stopped at its deadline; everything stored so far stays, the cursor did not move."""


@dataclass(frozen=True)
class SyncSettings:
    requests_per_minute: int = DEFAULT_REQUESTS_PER_MINUTE
    # The budget's window: `requests_per_minute` requests in any window this long (tests
    # shorten it together with the stand-in's own window).
    rate_window_seconds: float = 60.0
    per_page: int = MAX_PER_PAGE
    overlap: timedelta = DEFAULT_OVERLAP
    body_chunk_chars: int = DEFAULT_BODY_CHUNK
    # Both formats are stored so the mirror answers format=html and format=text alike.
    body_formats: tuple[str, ...] = ("html", "text")
    retry: RetryPolicy = SYNC_RETRY
    # Seconds this run may take before pausing (None: `max_run_seconds`). For syncs a tool
    # call triggers, which must not block an agent for long.
    time_limit: float | None = None
    # Bounds every run has, whatever the upstream says (walk_guard.py).
    max_run_seconds: float = DEFAULT_MAX_RUN_SECONDS
    max_pages: int = DEFAULT_MAX_PAGES
    max_rows: int = DEFAULT_MAX_ROWS
    # Accept a mirror made with another key (a rotated key of the same account).
    accept_new_key: bool = False
    # Before returning a finished run, wait (within `time_limit`) until every stored
    # highlight has its English vector, so the copy is findable by meaning as soon as a
    # server opens it. A server refreshing its own mirror turns this off: its embedding
    # worker goes on after the run, and searches see each vector as it lands.
    wait_for_vectors: bool = True


@dataclass
class SyncSummary:
    full: bool
    finished: bool = False
    resumed: bool = False
    applied: dict[str, store.Applied] = field(
        default_factory=lambda: {name: store.Applied() for name in PHASES}
    )
    requests: int = 0
    rate_limited: int = 0
    seconds: float = 0.0
    cursor: str | None = None
    # Highlights stored but not yet embedded when the run returned (the time limit or a
    # stalled worker ended the wait): found by keywords now, by meaning once the next
    # process that opens the mirror has embedded them.
    waiting_for_vectors: int = 0
    # Article passages without a vector when the run returned: sync does not embed them (the
    # server that opens the mirror does, in the background), so they are reported, not awaited.
    passages_waiting: int = 0
    # List items dropped at the boundary (an id that is not a UUID, a wrong shape), by list.
    skipped: dict[str, int] = field(default_factory=dict)

    def stored(self) -> int:
        """Items this run created, changed or deleted (what a failure leaves in place)."""
        return sum(a.created + a.updated + a.deleted for a in self.applied.values())


def build_client(
    api_key: str,
    base_url: str,
    settings: SyncSettings,
    *,
    inner: Any = None,
) -> tuple[ScreviClient, ClockTransport]:
    """A client for syncing: the sync's budget and retry policy, a transport noting `Date`."""
    transport = ClockTransport(inner)
    client = ScreviClient.hosted(
        api_key,
        base_url=base_url,
        rate_limit=settings.requests_per_minute,
        rate_window=settings.rate_window_seconds,
        # A sync waits its turn at the budget however long it takes (an interactive call
        # would rather fail fast); its own time limit is what bounds a run.
        max_rate_wait=None,
        retry=settings.retry,
        transport=transport,
    )
    return client, transport


@dataclass
class _Run:
    library: Library
    client: ScreviClient
    clock: ClockTransport
    settings: SyncSettings
    reporter: Reporter
    summary: SyncSummary
    since: str | None
    started: str | None  # the run's start on the server clock, once known
    deadline: float | None
    # GET /tags counts from this run's start (None when a resumed run skipped the tag list).
    tag_counts: dict[str, tuple[int, int]] | None = None
    budget: RunBudget = field(default_factory=RunBudget)

    def run_state(self, phase: str, walked: int, page_size: int) -> dict[str, str | None]:
        return {
            RUN_STARTED: self.started,
            RUN_SINCE: self.since or "",
            RUN_PHASE: phase,
            RUN_WALKED: str(walked),
            RUN_PAGE_ASKED: str(self.settings.per_page),
            RUN_PAGE_SIZE: str(page_size),
        }

    def check_deadline(self) -> None:
        if self.deadline is not None and time.monotonic() > self.deadline:
            raise SyncPaused("the sync's time limit was reached")

    def note_server_start(self) -> None:
        """The run's start on the server's clock, from the first response it sent."""
        if self.started is not None:
            return
        moment = self.clock.first_server_time
        if moment is None:
            log.warning("the server sends no Date header: the local clock stands in for it")
            moment = datetime.now(UTC) - (NO_SERVER_CLOCK_OVERLAP - self.settings.overlap)
        self.started = clock.format_timestamp(moment)


async def _store(function: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
    """Store on a worker thread: embedding a page is CPU work the event loop must not wait on."""
    return await anyio.to_thread.run_sync(lambda: function(*args, **kwargs))


def _dump(page: Page[Any]) -> list[dict[str, Any]]:
    return [item.model_dump(mode="json") for item in page.data]


async def run_sync(
    library: Library,
    client: ScreviClient,
    clock_transport: ClockTransport,
    *,
    api_key: str,
    settings: SyncSettings | None = None,
    reporter: Reporter | None = None,
    summary: SyncSummary | None = None,
) -> SyncSummary:
    """Run (or resume) one sync of the account behind `client` into `library`.

    When `time_limit` runs out the summary says `finished=False`: what was stored stays and
    the next run continues from it, as after a crash. Raises `MirrorMismatch` when the
    library mirrors something else, `SyncBusy` when another process syncs it, and the
    client's errors (`ScreviError` subclasses) when the API refuses. A `summary` passed in
    is the one filled, so a caller can tell what a failed run stored.
    """
    settings = settings or SyncSettings()
    began = time.monotonic()
    with run_lock(library.path):
        await anyio.to_thread.run_sync(
            lambda: check_identity(
                library, client.base_url, api_key, accept_new_key=settings.accept_new_key
            )
        )
        state = store.read_state(library.connection())
        resumed = RUN_STARTED in state
        since = (state.get(RUN_SINCE) or None) if resumed else state.get(STATE_CURSOR)
        summary = summary or SyncSummary(full=False)
        summary.full, summary.resumed = since is None, resumed
        run = _Run(
            library=library,
            client=client,
            clock=clock_transport,
            settings=settings,
            reporter=reporter or Silent(),
            summary=summary,
            since=since,
            started=state.get(RUN_STARTED) if resumed else None,
            deadline=began + min(settings.time_limit or math.inf, settings.max_run_seconds),
            budget=RunBudget(max_pages=settings.max_pages, max_rows=settings.max_rows),
        )
        await _walk_from(run, *_resume_point(state, settings), began=began)
    return summary


async def _walk_from(run: _Run, start_phase: str, start_page: int, *, began: float) -> None:
    """Every phase from the resume point on, then the finish; what the run spent goes into
    its summary however it ends."""
    transport, summary = run.clock, run.summary
    transport.reset_first()
    requests_before, limited_before = transport.requests, transport.rate_limited
    skipped_before = dict(transport.skipped)
    try:
        await _embed_leftovers(run.library)
        if start_phase != "tags":
            # The tag list is read again (one request) without moving the resume point:
            # the tag-count check at the end needs this run's counts.
            await _tags(run, 0, keep_position=True)
        for phase in PHASES[PHASES.index(start_phase) :]:
            page = start_page if phase == start_phase else 1
            await _PHASE_RUNNERS[phase](run, page)
        await _finish(run)
    except SyncPaused:
        log.info("sync paused at its time limit; the next run continues from here")
    finally:
        summary.requests = transport.requests - requests_before
        summary.rate_limited = transport.rate_limited - limited_before
        summary.skipped = {
            kind: count - skipped_before.get(kind, 0)
            for kind, count in transport.skipped.items()
            if count > skipped_before.get(kind, 0)
        }
        summary.seconds = time.monotonic() - began


def _resume_point(state: dict[str, str], settings: SyncSettings) -> tuple[str, int]:
    """Where a run starts: the first phase, or a stopped run's phase at the page holding
    its last stored item (one page asked twice rather than one missed), in pages of the size
    this run gets (what it asks for, unless the server was seen serving fewer)."""
    if RUN_STARTED not in state:
        return "tags", 1
    walked = int(state.get(RUN_WALKED, "0") or 0)
    asked = int(state.get(RUN_PAGE_ASKED, "0") or 0)
    served = int(state.get(RUN_PAGE_SIZE, "0") or 0)
    size = settings.per_page
    if 0 < served < asked:
        size = min(size, served)
    phase = state.get(RUN_PHASE, "tags")
    return (phase if phase in PHASES else "tags"), max(1, walked // size)


async def _finish(run: _Run) -> None:
    """A walk that reached the end: the cursor moves to the run's start less the overlap,
    the resume point is cleared, and the vectors are waited for if the settings say so."""
    summary = run.summary
    cursor_time = clock.parse_timestamp(run.started or clock.now()) - run.settings.overlap
    summary.cursor = clock.format_timestamp(cursor_time)
    now = clock.now()
    finish: dict[str, str | None] = dict.fromkeys(RUN_KEYS)
    finish.update({STATE_CURSOR: summary.cursor, STATE_LAST_SYNC: now})
    if summary.full:
        finish[STATE_LAST_FULL_SYNC] = now
    await anyio.to_thread.run_sync(lambda: store.write_state(run.library, finish))
    summary.finished = True
    if run.settings.wait_for_vectors:
        summary.waiting_for_vectors = await _wait_for_vectors(run)
    summary.passages_waiting = await anyio.to_thread.run_sync(
        lambda: passage_rows.waiting(run.library.connection())
    )


async def _embed_leftovers(library: Library) -> None:
    """Hand highlights a killed run stored but did not embed to the index's worker (no-op
    without the extra). Not before the run: embedding thousands of them took longer than
    any time limit, and a resumed run then paused before its first request, every time. The
    worker embeds them beside the run; `_wait_for_vectors` waits for them within the limit."""
    from screvi_mcp.local.search.attach import attach_semantic_index

    await anyio.to_thread.run_sync(lambda: attach_semantic_index(library, backfill="background"))


async def _wait_for_vectors(run: _Run) -> int:
    """Let the embedding worker catch up with the pages just stored (they arrive faster than
    MiniLM embeds them); returns how many still wait. The run is already finished: running
    out of time here pauses nothing, the rest is embedded by whoever opens the mirror next."""
    from screvi_mcp.local.search.attach import wait_for_vectors

    def progress(done: int, total: int) -> None:
        run.reporter.advance("embedding", done, total)

    return int(
        await anyio.to_thread.run_sync(
            lambda: wait_for_vectors(run.library, deadline=run.deadline, progress=progress)
        )
    )


async def _tags(run: _Run, page: int, *, keep_position: bool = False) -> None:
    run.check_deadline()
    run.reporter.phase("tags", None)
    tags = await run.client.list_tags()
    run.note_server_start()
    items = [tag.model_dump(mode="json") for tag in tags]
    run.tag_counts = {tag.id.lower(): (tag.highlight_count, tag.article_count) for tag in tags}
    position = None if keep_position else run.run_state("sources", 0, run.settings.per_page)
    applied = await _store(store.replace_tags, run.library, items, state=position)
    run.summary.applied["tags"].add(applied)
    run.reporter.advance("tags", len(items), len(items))


async def _walk(
    run: _Run,
    phase: str,
    page: int,
    fetch: Callable[[int], Awaitable[Page[Any]]],
    save: Callable[..., store.Applied],
) -> None:
    """Every page of one list from `page` on, each stored with its resume point."""
    total: int | None = None
    guard = WalkGuard(phase, run.budget)
    run.reporter.phase(phase, None)
    while True:
        run.check_deadline()
        result = await fetch(page)
        run.note_server_start()
        if total is None:
            total = result.pagination.total
            run.reporter.phase(phase, total)
        # Counted in the page size the server used, which may be below the one asked for.
        size = result.pagination.per_page or run.settings.per_page
        _admit(guard, page, result, size)
        done = (page - 1) * size + len(result.data)
        position = run.run_state(phase, done, size)
        applied = await _store(save, run.library, _dump(result), state=position)
        run.summary.applied[phase].add(applied)
        run.reporter.advance(phase, min(done, total), total)
        pagination = result.pagination
        if not result.data or not pagination.has_more:
            return
        if pagination.total_pages and page >= pagination.total_pages:
            return
        page += 1


def _admit(guard: WalkGuard, page: int, result: Page[Any], size: int) -> None:
    pagination = result.pagination
    ids = [item.id.lower() for item in result.data]
    guard.admit(page, ids, pagination.total, pagination.total_pages, max(size, 1))


# Listed phases: the list method, filters beside updated_since and include_deleted, the store.
_LISTS: dict[str, tuple[str, dict[str, bool], Callable[..., store.Applied]]] = {
    "sources": (
        "list_sources",
        {"include_empty": True, "include_metadata": True},
        store.upsert_sources,
    ),
    "highlights": ("list_highlights", {"include_metadata": True}, store.upsert_highlights),
    "articles": ("list_articles", {}, store.upsert_articles),
}


def _listed(phase: str) -> Callable[[_Run, int], Awaitable[None]]:
    method_name, filters, save = _LISTS[phase]

    async def walk(run: _Run, page: int) -> None:
        method = getattr(run.client, method_name)

        async def fetch(number: int) -> Page[Any]:
            page_of: Page[Any] = await method(
                page=number,
                per_page=run.settings.per_page,
                updated_since=run.since,
                include_deleted=True,
                **filters,
            )
            return page_of

        await _walk(run, phase, page, fetch, save)

    return walk


async def _details(run: _Run, page: int) -> None:
    bodies = ArticleBodies(
        library=run.library,
        client=run.client,
        formats=run.settings.body_formats,
        chunk_chars=run.settings.body_chunk_chars,
        check_deadline=run.check_deadline,
    )
    run.summary.applied["details"].updated += await bodies.fetch_all(run.reporter)


async def _tag_members(run: _Run, page: int) -> None:
    """Settle the members of tags whose counts differ from the server's.

    A server that does not bump `updated_at` when a tag is added to or removed from an item
    would leave such changes out of an incremental sync; the counts of GET /tags show them.
    Costs nothing when the counts agree (the usual case); equal counts with swapped members
    go unnoticed.
    """
    if run.tag_counts is None:
        return
    local = store.tag_counts(run.library.connection())
    differing = [
        (tag_id, counts)
        for tag_id, counts in run.tag_counts.items()
        if local.get(tag_id, (0, 0)) != counts
    ]
    run.reporter.phase("tag_members", len(differing))
    for done, (tag_id, (highlights, articles)) in enumerate(differing, start=1):
        if local.get(tag_id, (0, 0))[0] != highlights:
            members = await _every_id(run, "highlights", tag_id)
            await _store(store.set_tag_members, run.library, tag_id, "highlight", members)
        if local.get(tag_id, (0, 0))[1] != articles:
            members = await _every_id(run, "articles", tag_id)
            await _store(store.set_tag_members, run.library, tag_id, "article", members)
        run.reporter.advance("tag_members", done, len(differing))


async def _every_id(run: _Run, kind: str, tag_id: str) -> list[str]:
    ids: list[str] = []
    page = 1
    guard = WalkGuard(f"{kind} of tag {tag_id}", run.budget)
    while True:
        run.check_deadline()
        if kind == "highlights":
            result: Page[Any] = await run.client.list_highlights(
                page=page, per_page=MAX_PER_PAGE, tag_id=tag_id
            )
        else:
            result = await run.client.list_articles(page=page, per_page=MAX_PER_PAGE, tag=tag_id)
        _admit(guard, page, result, result.pagination.per_page or MAX_PER_PAGE)
        ids.extend(item.id for item in result.data)
        if not result.data or not result.pagination.has_more:
            return ids
        page += 1


_PHASE_RUNNERS: dict[str, Callable[[_Run, int], Awaitable[None]]] = {
    "tags": _tags,
    "sources": _listed("sources"),
    "highlights": _listed("highlights"),
    "articles": _listed("articles"),
    "details": _details,
    "tag_members": _tag_members,
}
