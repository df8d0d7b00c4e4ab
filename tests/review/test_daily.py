"""The daily review over the embedded library: what a day holds, what answers do."""

from __future__ import annotations

import random
from collections import Counter
from pathlib import Path

import pytest
from review_testkit import (
    Clock,
    cards,
    day_ids,
    fsrs_card,
    library_client,
    same_schedule,
    seed,
    settings,
)

from screvi_mcp.client import NotFoundError
from screvi_mcp.models import Highlight, HighlightSource
from screvi_mcp.review.daily import DailyReview, ReviewPlace, draw


async def test_a_first_day_takes_new_highlights_up_to_the_cap_spread_across_sources(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    async with library_client(path) as client:
        by_source = await seed(client, sources=4, per_source=5)
        source_of = {h: s for s, ids in by_source.items() for h in ids}
        today = await DailyReview(client, ReviewPlace(path), settings(clock, new=6)).today()
    ids = [entry.item.highlight_id for entry in today.entries]
    assert len(ids) == 6 == len(set(ids))  # the daily cap of new ones, no repeats
    assert {entry.item.kind for entry in today.entries} == {"new"}
    spread = Counter(source_of[h] for h in ids)
    assert len(spread) == 4 and max(spread.values()) - min(spread.values()) <= 1


def test_favourites_are_weighted_up_within_the_spread() -> None:
    """The draw itself, on fixed highlights and a seeded generator (so the figures are the
    same every run): two sources of five, one favourite in each; one pick per source."""
    highlights = [
        Highlight(
            id=f"{s}-{n}",
            favorite=n == 0,
            source=HighlightSource(id=f"source-{s}", name=f"Book {s}", type="book"),
        )
        for s in range(2)
        for n in range(5)
    ]
    rng = random.Random(7)
    picks = [pick for _ in range(1000) for pick in draw(highlights, Counter(), 2, rng)]
    assert Counter(pick.source.id for pick in picks if pick.source) == {
        "source-0": 1000,
        "source-1": 1000,
    }
    favourites = sum(pick.favorite for pick in picks) / len(picks)
    # A favourite weighs 3 against four others of 1: 3/7 of the draws (1/5 unweighted).
    assert abs(favourites - 3 / 7) < 0.03, favourites


async def test_the_review_resumes_where_the_reader_stopped(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    place = ReviewPlace(path)
    async with library_client(path) as client:
        await seed(client)
        first = await DailyReview(client, place, settings(clock, size=5)).today()
        order = [entry.item.highlight_id for entry in first.entries]
        for highlight_id in order[:2]:
            await DailyReview(client, place, settings(clock, size=5)).record(highlight_id, "good")
        clock.advance(0.4)  # later the same day
    async with library_client(path) as client:  # a restart
        again = await DailyReview(client, place, settings(clock, size=5)).today()
    assert [entry.item.highlight_id for entry in again.entries] == order
    assert again.done == 2
    assert [entry.item.highlight_id for entry in again.left] == order[2:]


async def test_due_cards_come_first_on_the_day_fsrs_gives(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    place = ReviewPlace(path)
    async with library_client(path) as client:
        await seed(client, sources=3, per_source=4)
        today = await DailyReview(client, place, settings(clock, size=3, new=3)).today()
        first = today.entries[0].item.highlight_id
        answered_at = clock()
        await DailyReview(client, place, settings(clock, size=3, new=3)).record(first, "good")
        due = fsrs_card([(answered_at, "good")]).due
        assert same_schedule(cards(place, [first])[first], fsrs_card([(answered_at, "good")]))
        while clock().date() < due.date():
            clock.advance()
            day = await DailyReview(client, place, settings(clock, size=3, new=3)).today()
            ids = [entry.item.highlight_id for entry in day.entries]
            if clock().date() < due.date():
                assert first not in ids
        assert day.entries[0].item.highlight_id == first
        assert day.entries[0].item.kind == "due"


async def test_no_highlight_comes_twice_in_a_day_and_a_second_answer_replaces_the_first(
    tmp_path: Path,
) -> None:
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    place = ReviewPlace(path)
    async with library_client(path) as client:
        await seed(client, sources=2, per_source=4)
        today = await DailyReview(client, place, settings(clock, size=3)).today()
        done = [entry.item.highlight_id for entry in today.entries]
        for highlight_id in done:
            await DailyReview(client, place, settings(clock, size=3)).record(highlight_id, "again")
        # Asking for a bigger review the same day adds others, never the ones seen today
        # (though "again" made them due tomorrow, and a later answer is allowed).
        bigger = await DailyReview(client, place, settings(clock, size=8)).today()
        ids = [entry.item.highlight_id for entry in bigger.entries]
        assert ids[:3] == done and len(ids) == len(set(ids)) == 8
        clock.advance(0.1)
        await DailyReview(client, place, settings(clock, size=8)).record(done[0], "easy")
    assert day_ids(place, today.day).count(done[0]) == 1
    # The correction is applied to the card as it was before the day's first answer.
    assert same_schedule(cards(place, [done[0]])[done[0]], fsrs_card([(clock(), "easy")]))


async def test_deleted_and_discarded_highlights_leave_the_queue(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    place = ReviewPlace(path)
    async with library_client(path) as client:
        await seed(client, sources=2, per_source=5)
        today = await DailyReview(client, place, settings(clock, size=4, new=4)).today()
        a, b, c, d = (entry.item.highlight_id for entry in today.entries)
        await DailyReview(client, place, settings(clock, size=4, new=4)).record(a, "again")
        await DailyReview(client, place, settings(clock, size=4, new=4)).record(b, "discard")
        await client.delete_highlight(a)  # a due card, deleted
        await client.delete_highlight(c)  # waiting in today's review, deleted
        now = await DailyReview(client, place, settings(clock, size=4, new=4)).today()
        left = [entry.item.highlight_id for entry in now.left]
        assert c not in left and d in left
        assert len(now.entries) == 4  # the gap was filled
        for _ in range(30):
            clock.advance()
            day = await DailyReview(client, place, settings(clock, size=4, new=4)).today()
            seen = {entry.item.highlight_id for entry in day.entries}
            assert not seen & {a, b, c}
            for entry in day.left:
                await DailyReview(client, place, settings(clock, size=4, new=4)).record(
                    entry.item.highlight_id, "good"
                )
        with pytest.raises(NotFoundError):
            await DailyReview(client, place, settings(clock)).record(a, "good")
    assert a not in cards(place, [a])


async def test_an_edit_keeps_the_schedule(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    place = ReviewPlace(path)
    async with library_client(path) as client:
        await seed(client, sources=1, per_source=2)
        first = (await DailyReview(client, place, settings(clock, size=1)).today()).entries[0]
        highlight_id = first.item.highlight_id
        await DailyReview(client, place, settings(clock, size=1)).record(highlight_id, "hard")
        before = cards(place, [highlight_id])[highlight_id]
        await client.update_highlight(highlight_id, content="Edited upstream.", note="a note")
        assert same_schedule(cards(place, [highlight_id])[highlight_id], before)
        clock.advance((before.due - clock()).total_seconds() / 86400)
        due = await DailyReview(client, place, settings(clock, size=1)).today()
    entry = due.entries[0]
    assert entry.item.highlight_id == highlight_id and entry.highlight is not None
    assert entry.highlight.content == "Edited upstream."


async def test_an_answer_keeps_the_size_the_day_was_made_with(tmp_path: Path) -> None:
    # `screvi-mcp review --size 3`, then `--rate ID good` with no --size: the day stays 3.
    path = tmp_path / "lib.sqlite3"
    clock = Clock()
    place = ReviewPlace(path)
    async with library_client(path) as client:
        await seed(client)
        first = await DailyReview(client, place, settings(clock, size=3)).today()
        chosen = first.entries[0].item.highlight_id
        recorded = await DailyReview(client, place, settings(clock)).record(chosen, "good")
    assert len(day_ids(place, first.day)) == 3
    assert len(recorded.today.entries) == 3
