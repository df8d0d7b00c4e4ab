-- A second set of vectors, made by the multilingual model (local/search/multilingual*.py),
-- beside MiniLM's `highlight_embeddings`: MiniLM ranks English, this set ranks across
-- languages. Same shape and rules as migrations 0002, 0004 and 0008, in tables of its own,
-- so that either model can be installed, changed or reindexed without touching the other.
-- `english` is the language detector's verdict on the embedded text (1 English, 0 not): an
-- English query searches only the non-English rows of this set.
CREATE TABLE multilingual_embeddings (
    seq       INTEGER PRIMARY KEY REFERENCES highlights(seq) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL,
    english   INTEGER NOT NULL DEFAULT 1
);
CREATE INDEX multilingual_embeddings_model ON multilingual_embeddings(model);

CREATE TABLE multilingual_changes (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);

CREATE TRIGGER multilingual_embeddings_logged_insert AFTER INSERT ON multilingual_embeddings BEGIN
    INSERT INTO multilingual_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER multilingual_embeddings_logged_update AFTER UPDATE ON multilingual_embeddings BEGIN
    INSERT INTO multilingual_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER multilingual_embeddings_logged_delete AFTER DELETE ON multilingual_embeddings BEGIN
    INSERT INTO multilingual_changes(seq) VALUES (old.seq);
END;

-- Filled in the writing transaction, like embedding_queue: a crash between commit and
-- embedding loses nothing. Without the multilingual model installed the rows simply wait
-- (at most one per highlight) until it is.
CREATE TABLE multilingual_queue (
    seq           INTEGER PRIMARY KEY REFERENCES highlights(seq) ON DELETE CASCADE,
    ticket        INTEGER NOT NULL,
    claim         TEXT,
    claimed_until REAL
);
CREATE INDEX multilingual_queue_ticket ON multilingual_queue(ticket);

CREATE TRIGGER highlights_multilingual_queue_insert AFTER INSERT ON highlights BEGIN
    INSERT OR REPLACE INTO multilingual_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM multilingual_queue));
END;

-- An edit drops the stale vector at commit: no search matches what the highlight used to say.
CREATE TRIGGER highlights_multilingual_queue_edit AFTER UPDATE OF content, note ON highlights
WHEN old.content IS NOT new.content OR old.note IS NOT new.note BEGIN
    DELETE FROM multilingual_embeddings WHERE seq = new.seq;
    INSERT OR REPLACE INTO multilingual_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM multilingual_queue));
END;

-- Highlights already in the library wait their turn too.
INSERT INTO multilingual_queue(seq, ticket)
SELECT h.seq, h.seq FROM highlights h WHERE h.deleted_at IS NULL;
