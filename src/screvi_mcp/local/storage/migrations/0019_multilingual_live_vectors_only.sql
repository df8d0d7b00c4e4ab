-- As migration 0012 for the English vectors and 0017 for the fast model's: only live
-- highlights keep a multilingual vector, made so in the deleting transaction. Before this
-- step a deleted highlight's e5 vector stayed in the table for good and in every running
-- process's matrix until a restart (search hid it through its liveness check, but it still
-- took a place in each scan's window), and a deleted French highlight kept the library
-- "multilingual", so English queries went on paying for the e5 scan.

CREATE TRIGGER highlights_multilingual_unembed_on_delete AFTER UPDATE OF deleted_at ON highlights
WHEN old.deleted_at IS NULL AND new.deleted_at IS NOT NULL BEGIN
    DELETE FROM multilingual_embeddings WHERE seq = new.seq;
END;

-- A restored highlight waits for its vector again (the worker decides, as for a new one,
-- whether an English-only library needs it).
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
