-- A highlight's keyword row is written once per transaction, not once per trigger firing
-- (issue 17). Until now each trigger rewrote the row at once: a highlight created with three
-- tags was tokenised seven times (the insert, then a delete and an insert per tag link), and
-- FTS5 writes were most of a bulk create's time.
--
-- Why a "pending" table instead of dropping the triggers and having the store write rows
-- itself: the triggers stay the one place that knows *which* writes change a keyword row
-- (content, note, source, source rename, tag links, tag rename, hard delete), so no write
-- path — store, import, article save, mirror sync, a future one — can forget the index. They
-- now only record the highlight's seq here; `local/keyword_rows.py` rewrites every recorded
-- row from `highlights_fts_rows` just before the transaction commits (Library.write), and
-- the table is empty again at every commit. The rows written are exactly what the old
-- triggers wrote last, so the index's content (and every keyword result) is unchanged.
--
-- The index itself is in sync at this point (0009 built it, its triggers kept it): it is
-- kept as it is, and only the triggers change.
CREATE TABLE highlights_fts_pending (
    seq INTEGER PRIMARY KEY
);

DROP TRIGGER IF EXISTS highlights_fts_insert;
DROP TRIGGER IF EXISTS highlights_fts_update;
DROP TRIGGER IF EXISTS highlights_fts_delete;
DROP TRIGGER IF EXISTS sources_fts_rename;
DROP TRIGGER IF EXISTS highlight_tags_fts_insert;
DROP TRIGGER IF EXISTS highlight_tags_fts_delete;
DROP TRIGGER IF EXISTS tags_fts_rename;

CREATE TRIGGER highlights_fts_insert AFTER INSERT ON highlights BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq) VALUES (new.seq);
END;

CREATE TRIGGER highlights_fts_update AFTER UPDATE OF content, note, source_id ON highlights BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq) VALUES (new.seq);
END;

-- The flush finds no row to write for a seq that is gone, and only deletes its old one.
CREATE TRIGGER highlights_fts_delete AFTER DELETE ON highlights BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq) VALUES (old.seq);
END;

CREATE TRIGGER sources_fts_rename AFTER UPDATE OF name, author ON sources BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq)
    SELECT seq FROM highlights WHERE source_id = new.id;
END;

CREATE TRIGGER highlight_tags_fts_insert AFTER INSERT ON highlight_tags BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq)
    SELECT seq FROM highlights WHERE id = new.highlight_id;
END;

-- Also fires for the link rows a tag's deletion cascades to.
CREATE TRIGGER highlight_tags_fts_delete AFTER DELETE ON highlight_tags BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq)
    SELECT seq FROM highlights WHERE id = old.highlight_id;
END;

CREATE TRIGGER tags_fts_rename AFTER UPDATE OF name ON tags BEGIN
    INSERT OR IGNORE INTO highlights_fts_pending(seq)
    SELECT h.seq FROM highlights h JOIN highlight_tags ht ON ht.highlight_id = h.id
     WHERE ht.tag_id = new.id;
END;
