-- The multilingual model's vectors follow migration 0012's rule too: only live highlights
-- keep one, made so in the transaction that deletes them. Every process's multilingual
-- matrix then follows the deletion through `multilingual_changes`, and an unfiltered
-- multilingual ranking needs no liveness check of its own (it read the highlights table
-- for up to 100 candidates on every English query of a mixed-language library).

CREATE TRIGGER highlights_multilingual_unembed_on_delete AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM multilingual_embeddings WHERE seq = new.seq;
END;

-- A restored highlight is embedded again (the worker embeds live highlights only).
CREATE TRIGGER highlights_multilingual_embed_on_restore AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN
    INSERT OR REPLACE INTO multilingual_queue(seq, ticket)
    VALUES (new.seq, (SELECT coalesce(max(ticket), 0) + 1 FROM multilingual_queue));
END;

CREATE TRIGGER sources_multilingual_unembed_on_delete AFTER UPDATE OF deleted_at ON sources
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM multilingual_embeddings
     WHERE seq IN (SELECT seq FROM highlights WHERE source_id = new.id);
END;

CREATE TRIGGER sources_multilingual_embed_on_restore AFTER UPDATE OF deleted_at ON sources
WHEN old.deleted_at IS NOT NULL AND new.deleted_at IS NULL BEGIN
    INSERT OR REPLACE INTO multilingual_queue(seq, ticket)
    SELECT seq, (SELECT coalesce(max(ticket), 0) + 1 FROM multilingual_queue)
      FROM highlights WHERE source_id = new.id AND deleted_at IS NULL;
END;

-- Vectors of highlights deleted before this step.
DELETE FROM multilingual_embeddings
 WHERE seq IN (SELECT h.seq FROM highlights h LEFT JOIN sources s ON s.id = h.source_id
                WHERE h.deleted_at IS NOT NULL OR s.deleted_at IS NOT NULL);
