-- Highlights waiting for a (new) vector: writes answer at commit and embed afterwards.
-- Filled by triggers inside the writing transaction, so a crash between the commit and the
-- embedding loses nothing: whichever process opens the library next drains the queue.
-- `ticket` orders the queue (newest first: a highlight just written is the one an agent is
-- about to look for); `claim`/`claimed_until` (unix seconds) let two processes on one
-- library share the work without embedding the same rows twice. A claim that outlives its
-- lease (its process died) is taken over.
CREATE TABLE embedding_queue (
    seq           INTEGER PRIMARY KEY REFERENCES highlights(seq) ON DELETE CASCADE,
    ticket        INTEGER NOT NULL,
    claim         TEXT,
    claimed_until REAL
);
CREATE INDEX embedding_queue_ticket ON embedding_queue(ticket);

CREATE TRIGGER highlights_queue_insert AFTER INSERT ON highlights BEGIN
    INSERT OR REPLACE INTO embedding_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM embedding_queue));
END;

-- An edit of the embedded words drops the old vector in the same transaction: from the
-- commit on, no search can match the highlight by what it used to say.
CREATE TRIGGER highlights_queue_edit AFTER UPDATE OF content, note ON highlights
WHEN old.content IS NOT new.content OR old.note IS NOT new.note BEGIN
    DELETE FROM highlight_embeddings WHERE seq = new.seq;
    INSERT OR REPLACE INTO embedding_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM embedding_queue));
END;

-- Other processes learn of dropped vectors through the same log as of written ones.
CREATE TRIGGER highlight_embeddings_logged_delete AFTER DELETE ON highlight_embeddings BEGIN
    INSERT INTO embedding_changes(seq) VALUES (old.seq);
END;

-- Highlights that lack a vector today (libraries from before this step) wait their turn too.
INSERT INTO embedding_queue(seq, ticket)
SELECT h.seq, h.seq FROM highlights h
 WHERE h.deleted_at IS NULL
   AND NOT EXISTS (SELECT 1 FROM highlight_embeddings e WHERE e.seq = h.seq);
