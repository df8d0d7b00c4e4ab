-- Tag names become searchable text (issue 11): a highlight tagged "stoicism" is found by the
-- query "stoicism" even when its words never say so. The keyword index gets a `tags` column
-- holding the highlight's tag names; triggers keep it in sync with tagging, untagging and tag
-- renames, as they already do for content, note and source.
DROP TRIGGER IF EXISTS highlights_fts_insert;
DROP TRIGGER IF EXISTS highlights_fts_update;
DROP TRIGGER IF EXISTS highlights_fts_delete;
DROP TRIGGER IF EXISTS sources_fts_rename;
DROP TABLE IF EXISTS highlights_fts;

CREATE VIRTUAL TABLE highlights_fts USING fts5(
    content, note, source_name, source_author, tags,
    tokenize = 'porter unicode61'
);

-- The one place that says what a highlight's keyword row holds.
CREATE VIEW highlights_fts_rows AS
SELECT h.seq AS seq, h.id AS id, h.source_id AS source_id, h.content AS content,
       coalesce(h.note, '') AS note,
       coalesce(s.name, '') AS source_name,
       coalesce(s.author, '') AS source_author,
       coalesce((SELECT group_concat(t.name, ' ')
                   FROM highlight_tags ht JOIN tags t ON t.id = ht.tag_id
                  WHERE ht.highlight_id = h.id), '') AS tags
  FROM highlights h LEFT JOIN sources s ON s.id = h.source_id;

INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
SELECT seq, content, note, source_name, source_author, tags FROM highlights_fts_rows;

CREATE TRIGGER highlights_fts_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
    SELECT seq, content, note, source_name, source_author, tags
      FROM highlights_fts_rows WHERE seq = new.seq;
END;

CREATE TRIGGER highlights_fts_update AFTER UPDATE OF content, note, source_id ON highlights BEGIN
    DELETE FROM highlights_fts WHERE rowid = old.seq;
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
    SELECT seq, content, note, source_name, source_author, tags
      FROM highlights_fts_rows WHERE seq = new.seq;
END;

CREATE TRIGGER highlights_fts_delete AFTER DELETE ON highlights BEGIN
    DELETE FROM highlights_fts WHERE rowid = old.seq;
END;

CREATE TRIGGER sources_fts_rename AFTER UPDATE OF name, author ON sources BEGIN
    DELETE FROM highlights_fts
     WHERE rowid IN (SELECT seq FROM highlights WHERE source_id = new.id);
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
    SELECT seq, content, note, source_name, source_author, tags
      FROM highlights_fts_rows WHERE source_id = new.id;
END;

CREATE TRIGGER highlight_tags_fts_insert AFTER INSERT ON highlight_tags BEGIN
    DELETE FROM highlights_fts
     WHERE rowid IN (SELECT seq FROM highlights WHERE id = new.highlight_id);
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
    SELECT seq, content, note, source_name, source_author, tags
      FROM highlights_fts_rows WHERE id = new.highlight_id;
END;

-- Also fires for the link rows a tag's deletion cascades to.
CREATE TRIGGER highlight_tags_fts_delete AFTER DELETE ON highlight_tags BEGIN
    DELETE FROM highlights_fts
     WHERE rowid IN (SELECT seq FROM highlights WHERE id = old.highlight_id);
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
    SELECT seq, content, note, source_name, source_author, tags
      FROM highlights_fts_rows WHERE id = old.highlight_id;
END;

CREATE TRIGGER tags_fts_rename AFTER UPDATE OF name ON tags BEGIN
    DELETE FROM highlights_fts
     WHERE rowid IN (SELECT h.seq FROM highlights h
                       JOIN highlight_tags ht ON ht.highlight_id = h.id
                      WHERE ht.tag_id = new.id);
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author, tags)
    SELECT r.seq, r.content, r.note, r.source_name, r.source_author, r.tags
      FROM highlights_fts_rows r JOIN highlight_tags ht ON ht.highlight_id = r.id
     WHERE ht.tag_id = new.id;
END;
