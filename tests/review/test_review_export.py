"""The review schedule travels where an export format can carry it: `export json`."""

from __future__ import annotations

import json
from pathlib import Path

import anyio
from review_testkit import Clock, cards, library_client, seed, settings

from screvi_mcp.review.daily import DailyReview, ReviewPlace
from screvi_mcp.transfer.exporters import export_library


async def review_three(path: Path, place: ReviewPlace) -> list[str]:
    """A day of three, the first answered good and the second discarded."""
    async with library_client(path) as client:
        await seed(client)
        review = DailyReview(client, place, settings(Clock(), size=3))
        chosen = [entry.item.highlight_id for entry in (await review.today()).entries]
        await review.record(chosen[0], "good")
        await review.record(chosen[1], "discard")
    return chosen


def test_json_export_carries_each_card_as_the_library_holds_it(tmp_path: Path) -> None:
    path = tmp_path / "lib.sqlite3"
    place = ReviewPlace(path)
    chosen = anyio.run(review_three, path, place)  # the export runs its own event loop
    target = tmp_path / "library.json"
    export_library("json", target, path)
    document = json.loads(target.read_text())
    exported = {card["highlight_id"]: card for card in document["review_cards"]}
    assert set(exported) == set(chosen[:2])  # answered ones only: the third has no card yet
    held = cards(place, chosen[:1])[chosen[0]]
    assert exported[chosen[0]]["stability"] == held.stability
    assert exported[chosen[0]]["due"].startswith(held.due.date().isoformat())
    assert exported[chosen[0]]["reviews"] == 1 and exported[chosen[0]]["discarded_at"] is None
    assert exported[chosen[1]]["discarded_at"] is not None
