"""Review state in SQLite: the cards (FSRS's memory of each highlight) and each day's review.

The tables come from migration 0015. In a library or a mirror they live in the library file
(account ''), beside the highlights they schedule; in hosted mode in a small file of their own
beside the default library, one account per API address and key. Only these tables are
touched here, never the library's own rows (those change through the API alone).

Every change is one `BEGIN IMMEDIATE` transaction that re-reads what it depends on, so two
processes (an MCP server and `screvi-mcp review`) answering or composing at once never lose
an answer or put one highlight twice into a day.
"""

from __future__ import annotations

import contextlib
import os
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path

from fsrs import Card, State

from screvi_mcp.local.storage import clock, db

MIGRATION = "0015_review.sql"
# Bound on one query's list of ids (SQLite's default limit of variables is far above it).
_CHUNK = 500


@dataclass(frozen=True)
class DayItem:
    """One highlight of a day's review."""

    position: int
    highlight_id: str
    kind: str  # due, new or extra
    answer: str | None


@dataclass(frozen=True)
class CardInfo:
    card: Card
    reviews: int
    discarded: bool


@dataclass(frozen=True)
class Picked:
    highlight_id: str
    kind: str


def _stamp(moment: datetime | None) -> str | None:
    return None if moment is None else clock.format_timestamp(moment)


def _card(row: sqlite3.Row) -> Card:
    return Card(
        card_id=0,
        state=State(int(row["state"])),
        step=row["step"],
        stability=row["stability"],
        difficulty=row["difficulty"],
        due=clock.parse_timestamp(row["due"]),
        last_review=clock.parse_timestamp(row["last_review"]) if row["last_review"] else None,
    )


class ReviewState:
    """One account's review state in one file. Open with `ReviewState.open(...)`."""

    def __init__(self, conn: sqlite3.Connection, account: str) -> None:
        self.conn = conn
        self.account = account

    @classmethod
    @contextmanager
    def open(cls, path: Path, account: str = "", *, library: bool = True) -> Iterator[ReviewState]:
        """The state in `path`: a library file (brought up to date like any library), or
        with `library=False` a state file of its own holding only the review tables."""
        path.parent.mkdir(parents=True, exist_ok=True)
        if not library:
            # Owner-only, as a library file is: it names the account's highlights.
            with contextlib.suppress(FileExistsError):
                os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600))
        conn = db.connect(path)
        try:
            steps = None if library else [s for s in db.migration_steps() if s[0] == MIGRATION]
            db.migrate(conn, steps)
            yield cls(conn, account)
        finally:
            conn.close()

    # Reading ---------------------------------------------------------------------------

    def day(self, day: str) -> list[DayItem]:
        rows = self.conn.execute(
            "SELECT position, highlight_id, kind, rating FROM review_days "
            "WHERE account = ? AND day = ? ORDER BY position",
            (self.account, day),
        )
        return [DayItem(r[0], r[1], r[2], r[3]) for r in rows]

    def composed(self, day: str) -> int:
        """The size the day's review was composed to (0: not yet, or since a removal)."""
        row = self.conn.execute(
            "SELECT size FROM review_composed WHERE account = ? AND day = ?", (self.account, day)
        ).fetchone()
        return int(row[0]) if row else 0

    def cards(self, ids: Iterable[str]) -> dict[str, CardInfo]:
        found: dict[str, CardInfo] = {}
        wanted = list(ids)
        for start in range(0, len(wanted), _CHUNK):
            chunk = wanted[start : start + _CHUNK]
            rows = self.conn.execute(
                "SELECT * FROM review_cards WHERE account = ? AND highlight_id IN "
                f"({','.join('?' * len(chunk))})",
                (self.account, *chunk),
            )
            for row in rows:
                found[row["highlight_id"]] = CardInfo(
                    _card(row), int(row["reviews"]), row["discarded_at"] is not None
                )
        return found

    def exported_cards(self) -> list[dict[str, object]]:
        """Every card of this account as plain JSON values, for `export json`: what FSRS
        remembers of each highlight, its next due time, and whether it was discarded."""
        rows = self.conn.execute(
            "SELECT highlight_id, state, step, stability, difficulty, due, last_review, "
            "reviews, discarded_at FROM review_cards WHERE account = ? ORDER BY highlight_id",
            (self.account,),
        )
        return [dict(row) for row in rows]

    def due(self, before: datetime, *, limit: int, skip: int = 0) -> list[str]:
        """Ids of cards due before `before`, most overdue first."""
        rows = self.conn.execute(
            "SELECT highlight_id FROM review_cards WHERE account = ? AND discarded_at IS NULL "
            "AND due < ? ORDER BY due, highlight_id LIMIT ? OFFSET ?",
            (self.account, clock.format_timestamp(before), limit, skip),
        )
        return [row[0] for row in rows]

    def due_count(self, before: datetime) -> int:
        row = self.conn.execute(
            "SELECT count(*) FROM review_cards WHERE account = ? AND discarded_at IS NULL "
            "AND due < ?",
            (self.account, clock.format_timestamp(before)),
        ).fetchone()
        return int(row[0])

    def upcoming(self, after: datetime, *, days: int) -> list[tuple[str, int]]:
        """(date, cards due that day) for the next due dates after `after`, soonest first."""
        rows = self.conn.execute(
            "SELECT substr(due, 1, 10) AS day, count(*) FROM review_cards WHERE account = ? "
            "AND discarded_at IS NULL AND due >= ? GROUP BY day ORDER BY day LIMIT ?",
            (self.account, clock.format_timestamp(after), days),
        )
        return [(row[0], int(row[1])) for row in rows]

    # Writing ---------------------------------------------------------------------------

    def extend_day(self, day: str, picks: list[Picked], *, size: int, new_cap: int) -> None:
        """Append `picks` to the day's review, up to `size` and `new_cap` new ones, skipping
        any already in it (another process may have composed the day meanwhile)."""
        with db.transaction(self.conn):
            items = self.day(day)
            present = {item.highlight_id for item in items}
            new_count = sum(item.kind == "new" for item in items)
            position = max((item.position for item in items), default=0)
            for pick in picks:
                if len(present) >= size or pick.highlight_id in present:
                    continue
                if pick.kind == "new":
                    if new_count >= new_cap:
                        continue
                    new_count += 1
                position += 1
                present.add(pick.highlight_id)
                self.conn.execute(
                    "INSERT INTO review_days(account, day, position, highlight_id, kind) "
                    "VALUES (?, ?, ?, ?, ?)",
                    (self.account, day, position, pick.highlight_id, pick.kind),
                )
            self.conn.execute(
                "INSERT INTO review_composed(account, day, size) VALUES (?, ?, ?) "
                "ON CONFLICT(account, day) DO UPDATE SET size = max(size, excluded.size)",
                (self.account, day, size),
            )

    def forget(self, day: str, highlight_ids: Iterable[str]) -> None:
        """Highlights that are gone (deleted): their cards, and their unanswered places in
        the day's review, which is then composed again to fill the gap."""
        ids = list(highlight_ids)
        if not ids:
            return
        with db.transaction(self.conn):
            for highlight_id in ids:
                self.conn.execute(
                    "DELETE FROM review_cards WHERE account = ? AND highlight_id = ?",
                    (self.account, highlight_id),
                )
                self.conn.execute(
                    "DELETE FROM review_days WHERE account = ? AND day = ? AND highlight_id = ? "
                    "AND rating IS NULL",
                    (self.account, day, highlight_id),
                )
            self.conn.execute(
                "DELETE FROM review_composed WHERE account = ? AND day = ?", (self.account, day)
            )

    def answer(
        self,
        day: str,
        highlight_id: str,
        answer: str,
        now: datetime,
        apply: Callable[[Card | None], Card],
    ) -> Card:
        """Record the day's answer for a highlight; returns its card afterwards.

        `apply` turns the card before the answer (None: never reviewed) into the card after
        it; it runs inside the transaction, so two answers given at once are applied one
        after the other. A second answer on the same day replaces the first: it is applied
        to the card as it was before the first. "discard" keeps the card as it was and takes
        it out of rotation for good.
        """
        with db.transaction(self.conn):
            row = self.conn.execute(
                "SELECT rating, card_before FROM review_days WHERE account = ? AND day = ? "
                "AND highlight_id = ?",
                (self.account, day, highlight_id),
            ).fetchone()
            correcting = row is not None and row["rating"] is not None
            if correcting:
                before = row["card_before"]
            else:
                current = self.cards([highlight_id]).get(highlight_id)
                before = current.card.to_json() if current else None
            if row is None:  # answered without being chosen today: it joins the day as extra
                self.conn.execute(
                    "INSERT INTO review_days(account, day, position, highlight_id, kind) "
                    "SELECT ?, ?, coalesce(max(position), 0) + 1, ?, 'extra' FROM review_days "
                    "WHERE account = ? AND day = ?",
                    (self.account, day, highlight_id, self.account, day),
                )
            start = Card.from_json(before) if before else None
            stamp = clock.format_timestamp(now)
            card = apply(start)
            self._put_card(
                highlight_id,
                card,
                discarded_at=stamp if answer == "discard" else None,
                counted=not correcting and answer != "discard",
            )
            self.conn.execute(
                "UPDATE review_days SET rating = ?, answered_at = ?, card_before = ? "
                "WHERE account = ? AND day = ? AND highlight_id = ?",
                (answer, stamp, before, self.account, day, highlight_id),
            )
        return card

    def _put_card(
        self, highlight_id: str, card: Card, *, discarded_at: str | None, counted: bool
    ) -> None:
        self.conn.execute(
            "INSERT INTO review_cards(account, highlight_id, state, step, stability, "
            "difficulty, due, last_review, reviews, discarded_at) "
            "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) "
            "ON CONFLICT(account, highlight_id) DO UPDATE SET state = excluded.state, "
            "step = excluded.step, stability = excluded.stability, "
            "difficulty = excluded.difficulty, due = excluded.due, "
            "last_review = excluded.last_review, reviews = reviews + excluded.reviews, "
            "discarded_at = excluded.discarded_at",
            (
                self.account,
                highlight_id,
                int(card.state),
                card.step,
                card.stability,
                card.difficulty,
                _stamp(card.due),
                _stamp(card.last_review),
                int(counted),
                discarded_at,
            ),
        )
