"""A day's review: which highlights, in what order, and what an answer does to them.

Each day has a review of `size` highlights: the cards due by the end of the day first (most
overdue first), then highlights never reviewed, at most `new_per_day` a day, drawn from a
few pages of the library spread across sources with favourites weighted up. The choice is
stored (`state.py`), so the review resumes where the reader stopped and no highlight comes
twice in a day. Highlights are read through the client, fresh each time: an edit shows at
once, and a highlight found deleted leaves the queue (its card is dropped).
"""

from __future__ import annotations

import functools
import random
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, time, timedelta, tzinfo
from pathlib import Path
from typing import TypeVar

import anyio
from fsrs import Card

from screvi_mcp import config
from screvi_mcp.client import NotFoundError, ScreviClient
from screvi_mcp.contract import MAX_PER_PAGE
from screvi_mcp.models import Highlight
from screvi_mcp.review import schedule
from screvi_mcp.review.state import CardInfo, DayItem, Picked, ReviewState

T = TypeVar("T")

DEFAULT_SIZE = 10
DEFAULT_NEW_PER_DAY = 10
# New highlights are drawn from this many pages of the library (newest page and random
# others) plus a page of favourites: a handful of requests a day, however large the library.
NEW_PAGES = 3
FAVOURITE_WEIGHT = 3.0
# At most this many due cards are checked per free place (a due card may turn out deleted).
DUE_CHECKS_PER_PLACE = 3
HOSTED_STATE_NAME = "review.sqlite3"


@dataclass(frozen=True)
class ReviewPlace:
    """Where an account's review state lives: a library file, or (`library=False`) the
    hosted mode's own state file."""

    path: Path
    account: str = ""
    library: bool = True

    @classmethod
    def hosted(cls, api_key: str, base_url: str) -> ReviewPlace:
        """Beside the default library, keyed by the API's address and the key's fingerprint
        (the API names no account; the key is never stored)."""
        from screvi_mcp.mirror.identity import key_fingerprint, normalise_base_url

        path = config.default_library_path().with_name(HOSTED_STATE_NAME)
        account = f"{normalise_base_url(base_url)} {key_fingerprint(api_key)}"
        return cls(path, account, library=False)

    @classmethod
    def of(
        cls,
        *,
        library_path: Path | None = None,
        mirror_path: Path | None = None,
        api_key: str | None = None,
        base_url: str | None = None,
    ) -> ReviewPlace:
        """The place for a backend: a mirror's file, the hosted state file (an API key and
        no mirror), else the library file."""
        if mirror_path is not None:
            return cls(mirror_path)
        if api_key:
            from screvi_mcp.contract import HOSTED_BASE_URL

            return cls.hosted(api_key, base_url or HOSTED_BASE_URL)
        assert library_path is not None
        return cls(library_path)


def system_now() -> datetime:
    return datetime.now(UTC)


@dataclass(frozen=True)
class Settings:
    size: int = DEFAULT_SIZE
    new_per_day: int = DEFAULT_NEW_PER_DAY
    # The reader's time zone, where days begin (None: this machine's).
    tz: tzinfo | None = None
    # The clock (tests and `screvi-mcp review --now` replace it).
    now: Callable[[], datetime] = system_now


MAX_SIZE = 100


@dataclass
class Entry:
    item: DayItem
    highlight: Highlight | None  # None when not read (see `DailyReview.today`)
    card: CardInfo | None


@dataclass
class Today:
    day: str
    entries: list[Entry]
    upcoming: list[tuple[str, int]] = field(default_factory=list)
    # Cards due by the end of the day, counting those still waiting in this review.
    due: int = 0

    @property
    def done(self) -> int:
        return sum(entry.item.answer is not None for entry in self.entries)

    @property
    def left(self) -> list[Entry]:
        return [entry for entry in self.entries if entry.item.answer is None]


@dataclass
class Recorded:
    highlight: Highlight
    answer: str
    card: Card
    today: Today


class DailyReview:
    """The review of one account on the day of `now` (read once: one instant per call)."""

    def __init__(
        self,
        client: ScreviClient,
        place: ReviewPlace,
        settings: Settings | None = None,
    ) -> None:
        self.client = client
        self.place = place
        self.settings = settings or Settings()
        self.now = self.settings.now().astimezone(UTC)
        local = self.now.astimezone(self.settings.tz) if self.settings.tz else self.now.astimezone()
        self.day = local.date().isoformat()
        self.day_ends = datetime.combine(local.date() + timedelta(days=1), time(), local.tzinfo)
        self._fetched: dict[str, Highlight | None] = {}

    async def _state(self, work: Callable[[ReviewState], T]) -> T:
        """Run `work` on the state in a worker thread (a write may wait for the file lock)."""
        place = self.place

        def run() -> T:
            with ReviewState.open(place.path, place.account, library=place.library) as state:
                return work(state)

        return await anyio.to_thread.run_sync(run)

    async def _live(self, highlight_id: str) -> Highlight | None:
        """The highlight as it is now, or None when it is gone."""
        if highlight_id not in self._fetched:
            try:
                found: Highlight | None = await self.client.get_highlight(highlight_id)
            except NotFoundError:
                found = None
            self._fetched[highlight_id] = None if found is None or found.deleted else found
        return self._fetched[highlight_id]

    # Today's review --------------------------------------------------------------------

    async def today(
        self, *, answered: bool = False, fetch: int | None = None, extend: bool = True
    ) -> Today:
        """Today's review, composed first if need be. The waiting highlights are read fresh
        (only the first `fetch` of them, when given: one request each); `answered` reads
        those already answered too (for a full daily note). `extend=False` leaves a day
        already made at the size it was made with (an answer shows the day, not a bigger one)."""
        for _ in range(2):  # a second pass only when highlights turned out deleted
            await self._compose(extend)
            items = await self._state(lambda state: state.day(self.day))
            waiting = [item for item in items if item.answer is None][:fetch]
            wanted = waiting + [item for item in items if answered and item.answer is not None]
            gone = [
                item.highlight_id for item in wanted if await self._live(item.highlight_id) is None
            ]
            if not gone:
                break
            await self._state(
                functools.partial(ReviewState.forget, day=self.day, highlight_ids=gone)
            )
        unread = {item.highlight_id for item in items} - {item.highlight_id for item in wanted}
        ids = [item.highlight_id for item in items]

        def facts(state: ReviewState) -> tuple[dict[str, CardInfo], list[tuple[str, int]], int]:
            return (
                state.cards(ids),
                state.upcoming(self.day_ends, days=3),
                state.due_count(self.day_ends),
            )

        cards, upcoming, due = await self._state(facts)
        entries = [
            Entry(item, self._fetched.get(item.highlight_id), cards.get(item.highlight_id))
            for item in items
            if item.highlight_id in unread
            or item.answer is not None
            or self._fetched.get(item.highlight_id) is not None
        ]
        return Today(self.day, entries, upcoming, due)

    async def _compose(self, extend: bool = True) -> None:
        settings = self.settings
        items, composed = await self._state(
            lambda state: (state.day(self.day), state.composed(self.day))
        )
        if composed >= settings.size or len(items) >= settings.size:
            return
        if composed and not extend:
            return
        taken = {item.highlight_id for item in items}
        places = settings.size - len(items)
        picks, gone = await self._due_picks(taken, places)
        new_places = min(
            places - len(picks), settings.new_per_day - sum(i.kind == "new" for i in items)
        )
        if new_places > 0:
            picks += await self._new_picks(taken | {p.highlight_id for p in picks}, new_places)

        def store(state: ReviewState) -> None:
            state.forget(self.day, gone)
            state.extend_day(self.day, picks, size=settings.size, new_cap=settings.new_per_day)

        await self._state(store)

    async def _due_picks(self, taken: set[str], places: int) -> tuple[list[Picked], list[str]]:
        picks: list[Picked] = []
        gone: list[str] = []
        checked = 0
        while len(picks) < places and checked < places * DUE_CHECKS_PER_PLACE:
            batch = await self._state(
                functools.partial(ReviewState.due, before=self.day_ends, limit=places, skip=checked)
            )
            if not batch:
                break
            checked += len(batch)
            for highlight_id in batch:
                if len(picks) >= places or highlight_id in taken:
                    continue
                if await self._live(highlight_id) is None:
                    gone.append(highlight_id)
                else:
                    picks.append(Picked(highlight_id, "due"))
        return picks, gone

    async def _new_picks(self, taken: set[str], places: int) -> list[Picked]:
        """Highlights never reviewed, drawn from a few pages: spread across sources, with
        favourites weighted up. Seeded by the account and the day, so a day's draw repeats."""
        rng = random.Random(f"{self.place.account}|{self.day}")
        first = await self.client.list_highlights(per_page=MAX_PER_PAGE)
        pool = {h.id: h for h in first.data}
        others = list(range(2, first.pagination.total_pages + 1))
        for page in sorted(rng.sample(others, min(NEW_PAGES - 1, len(others)))):
            pool.update(
                (h.id, h)
                for h in (await self.client.list_highlights(page=page, per_page=MAX_PER_PAGE)).data
            )
        favourites = await self.client.list_highlights(favorite=True, per_page=MAX_PER_PAGE)
        if favourites.pagination.total_pages > 1:
            page = rng.randint(2, favourites.pagination.total_pages)
            favourites = await self.client.list_highlights(
                favorite=True, page=page, per_page=MAX_PER_PAGE
            )
        pool.update((h.id, h) for h in favourites.data)
        known = await self._state(lambda state: state.cards(list(pool)))
        candidates = [h for h in pool.values() if h.id not in known and h.id not in taken]
        candidates.sort(key=lambda h: h.id)  # the draw depends on the seed, not page order
        per_source = Counter(
            _source_of(found) for found in self._fetched.values() if found is not None
        )
        picks: list[Picked] = []
        for chosen in draw(candidates, per_source, places, rng):
            self._fetched[chosen.id] = chosen
            picks.append(Picked(chosen.id, "new"))
        return picks

    # Answers ---------------------------------------------------------------------------

    async def record(self, highlight_id: str, answer: str) -> Recorded:
        """Record the reader's answer (again, hard, good, easy or discard) for a highlight,
        in today's review or not; raises the client's NotFoundError for a missing one."""
        highlight = await self.client.get_highlight(highlight_id)
        if highlight.deleted:
            raise NotFoundError(
                f"Highlight {highlight_id} is deleted", status=404, from_server=False
            )
        now = self.now

        def apply(before: Card | None) -> Card:
            start = before or schedule.new_card(now)
            return start if answer == "discard" else schedule.review(start, answer, now)

        card = await self._state(
            lambda state: state.answer(self.day, highlight.id, answer, now, apply)
        )
        self._fetched[highlight.id] = highlight
        # Only the next waiting highlight is read: the answer shows it, and an answer costs
        # two requests, not one per highlight still waiting.
        return Recorded(highlight, answer, card, await self.today(fetch=1, extend=False))


def draw(
    candidates: list[Highlight], per_source: Counter[str], places: int, rng: random.Random
) -> list[Highlight]:
    """Up to `places` of `candidates`, spread across sources: only the sources with the
    fewest highlights so far (`per_source`, updated) take part in each draw, and among their
    highlights a favourite weighs FAVOURITE_WEIGHT times more."""
    left = list(candidates)
    chosen: list[Highlight] = []
    while left and len(chosen) < places:
        fewest = min(per_source[_source_of(h)] for h in left)
        tier = [h for h in left if per_source[_source_of(h)] == fewest]
        pick = rng.choices(tier, [FAVOURITE_WEIGHT if h.favorite else 1.0 for h in tier])[0]
        left.remove(pick)
        per_source[_source_of(pick)] += 1
        chosen.append(pick)
    return chosen


def _source_of(highlight: Highlight) -> str:
    return highlight.source.id if highlight.source is not None else ""
