-- Background article fetching: when a row waiting for a retry becomes due again.
-- NULL means "as soon as possible"; a transient failure (timeout, 5xx, connection error) sets
-- it to a backoff time and puts the row back to parse_state 'queued'.
ALTER TABLE articles ADD COLUMN next_attempt_at TEXT;
CREATE INDEX articles_due ON articles(parse_state, next_attempt_at);
