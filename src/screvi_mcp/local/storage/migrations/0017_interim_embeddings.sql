-- Vectors of a fast model for highlights still waiting for the English model's vector
-- (local/search/interim.py, issue 30): a large import is found by meaning within minutes
-- while all-mpnet-base-v2 fills in behind. Same shape and rules as migration 0011, in tables
-- of its own. The English index deletes a highlight's rows here in the transaction that
-- stores its English vector, so these tables only ever hold the English backlog.
CREATE TABLE interim_embeddings (
    seq       INTEGER PRIMARY KEY REFERENCES highlights(seq) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL
);
CREATE INDEX interim_embeddings_model ON interim_embeddings(model);

CREATE TABLE interim_changes (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);

CREATE TRIGGER interim_embeddings_logged_insert AFTER INSERT ON interim_embeddings BEGIN
    INSERT INTO interim_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER interim_embeddings_logged_update AFTER UPDATE ON interim_embeddings BEGIN
    INSERT INTO interim_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER interim_embeddings_logged_delete AFTER DELETE ON interim_embeddings BEGIN
    INSERT INTO interim_changes(seq) VALUES (old.seq);
END;

-- Filled in the writing transaction, like embedding_queue: a crash loses nothing.
CREATE TABLE interim_queue (
    seq           INTEGER PRIMARY KEY REFERENCES highlights(seq) ON DELETE CASCADE,
    ticket        INTEGER NOT NULL,
    claim         TEXT,
    claimed_until REAL
);
CREATE INDEX interim_queue_ticket ON interim_queue(ticket);

CREATE TRIGGER highlights_interim_queue_insert AFTER INSERT ON highlights BEGIN
    INSERT OR REPLACE INTO interim_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM interim_queue));
END;

-- An edit drops the stale vector at commit: no search matches what the highlight used to say.
CREATE TRIGGER highlights_interim_queue_edit AFTER UPDATE OF content, note ON highlights
WHEN old.content IS NOT new.content OR old.note IS NOT new.note BEGIN
    DELETE FROM interim_embeddings WHERE seq = new.seq;
    INSERT OR REPLACE INTO interim_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM interim_queue));
END;

-- As migration 0012 for the English vectors: only live highlights keep one, made so in the
-- deleting transaction, so an unfiltered search needs no liveness check of its own.
CREATE TRIGGER highlights_interim_unembed_on_delete AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM interim_embeddings WHERE seq = new.seq;
END;

CREATE TRIGGER highlights_interim_embed_on_restore AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN
    INSERT OR REPLACE INTO interim_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM interim_queue));
END;

CREATE TRIGGER sources_interim_unembed_on_delete AFTER UPDATE OF deleted_at ON sources
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM interim_embeddings
     WHERE seq IN (SELECT seq FROM highlights WHERE source_id = new.id);
END;

CREATE TRIGGER sources_interim_embed_on_restore AFTER UPDATE OF deleted_at ON sources
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN
    INSERT OR REPLACE INTO interim_queue(seq, ticket)
    SELECT seq, (SELECT coalesce(max(ticket), 0) + 1 FROM interim_queue)
      FROM highlights WHERE source_id = new.id AND deleted_at IS NULL;
END;

-- What already waits for an English vector waits here too.
INSERT INTO interim_queue(seq, ticket) SELECT seq, ticket FROM embedding_queue;
