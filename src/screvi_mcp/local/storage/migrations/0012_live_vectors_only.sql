-- Only live highlights keep a vector, made so in the transaction that deletes them: the
-- stored vectors (and every process's matrix, which follows them through
-- `embedding_changes`) then never hold a deleted highlight, so an unfiltered semantic search
-- needs no liveness check of its own and a search checks liveness once, in the keyword
-- side's SQL. Before this, the vector was dropped by a listener after the delete's commit,
-- which a crash or another process could miss.

CREATE TRIGGER highlights_unembed_on_delete AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM highlight_embeddings WHERE seq = new.seq;
END;

-- A restored highlight is embedded again (the worker skips it while its source is deleted).
CREATE TRIGGER highlights_embed_on_restore AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN
    INSERT OR REPLACE INTO embedding_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM embedding_queue));
END;

CREATE TRIGGER sources_unembed_on_delete AFTER UPDATE OF deleted_at ON sources
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM highlight_embeddings
     WHERE seq IN (SELECT seq FROM highlights WHERE source_id = new.id);
END;

CREATE TRIGGER sources_embed_on_restore AFTER UPDATE OF deleted_at ON sources
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN
    INSERT OR REPLACE INTO embedding_queue(seq, ticket)
    SELECT seq, (SELECT coalesce(max(ticket), 0) + 1 FROM embedding_queue)
      FROM highlights WHERE source_id = new.id AND deleted_at IS NULL;
END;

-- Vectors of highlights deleted before this step.
DELETE FROM highlight_embeddings
 WHERE seq IN (SELECT h.seq FROM highlights h LEFT JOIN sources s ON s.id = h.source_id
                WHERE h.deleted_at IS NOT NULL OR s.deleted_at IS NOT NULL);
