-- Daily review (screvi_mcp/review): spaced repetition of highlights with FSRS.
-- Keyed by `account`: '' in a library or a mirror; in hosted mode the same tables live in a
-- small state file of their own (review/state.py), one account per API and key. No foreign
-- key to `highlights`: the state file has no such table, and a card is keyed by the
-- highlight's id alone, so an edit (here or upstream, through a mirror) keeps its schedule.

-- One card per highlight that has been in a review: FSRS's memory state and next due time.
CREATE TABLE review_cards (
    account      TEXT NOT NULL,
    highlight_id TEXT NOT NULL,
    state        INTEGER NOT NULL,  -- fsrs.State: 1 learning, 2 review, 3 relearning
    step         INTEGER,
    stability    REAL,
    difficulty   REAL,
    due          TEXT NOT NULL,     -- stored timestamp format (sorts as text)
    last_review  TEXT,
    reviews      INTEGER NOT NULL DEFAULT 0,
    discarded_at TEXT,              -- "don't show again": never chosen again
    PRIMARY KEY (account, highlight_id)
);
CREATE INDEX review_cards_due ON review_cards(account, due) WHERE discarded_at IS NULL;

-- Each day's review as it was chosen, and the answers given: what makes a review resume
-- where the reader stopped and never show one highlight twice in a day. `card_before` is the
-- card before that day's answer (JSON, NULL for a new one), so a corrected answer is applied
-- to the card as it was, not on top of the first answer.
CREATE TABLE review_days (
    account      TEXT NOT NULL,
    day          TEXT NOT NULL,     -- YYYY-MM-DD in the reader's time zone
    position     INTEGER NOT NULL,
    highlight_id TEXT NOT NULL,
    kind         TEXT NOT NULL,     -- due, new, or extra (answered without being chosen)
    rating       TEXT,              -- again, hard, good, easy or discard, once answered
    answered_at  TEXT,
    card_before  TEXT,
    PRIMARY KEY (account, day, position),
    UNIQUE (account, day, highlight_id)
);

-- How far each day's review was composed (its size), so that a library with fewer eligible
-- highlights than the size is not searched again on every call of the day.
CREATE TABLE review_composed (
    account TEXT NOT NULL,
    day     TEXT NOT NULL,
    size    INTEGER NOT NULL,
    PRIMARY KEY (account, day)
);
