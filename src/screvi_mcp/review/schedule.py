"""The scheduler: FSRS, as the `fsrs` library computes it, set up for a daily review.

A highlight is seen at most once a day, so the scheduler has no learning steps (minutes
apart): every answer gives a whole number of days. Fuzzing is off, so that a schedule is
reproducible (and checkable against the library's own computation); the daily size already
spreads the load.
"""

from __future__ import annotations

from datetime import UTC, datetime

from fsrs import Card, Rating, Scheduler, State

RATINGS: dict[str, Rating] = {
    "again": Rating.Again,
    "hard": Rating.Hard,
    "good": Rating.Good,
    "easy": Rating.Easy,
}


def scheduler() -> Scheduler:
    """The one scheduler every review uses (tests compute their expectations with it too)."""
    return Scheduler(learning_steps=(), relearning_steps=(), enable_fuzzing=False)


SCHEDULER = scheduler()


def new_card(now: datetime) -> Card:
    # `card_id` given: the library's default sleeps a millisecond to make ids unique, and
    # the highlight id is the card's identity here.
    return Card(card_id=0, state=State.Learning, due=now.astimezone(UTC))


def review(card: Card, rating: str, now: datetime) -> Card:
    """The card after answering `rating` (again, hard, good or easy) at `now`."""
    reviewed, _ = SCHEDULER.review_card(card, RATINGS[rating], now.astimezone(UTC))
    return reviewed
