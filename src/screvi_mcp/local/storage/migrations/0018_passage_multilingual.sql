-- Passages of non-English articles get a second vector, from the multilingual model
-- (multilingual-e5, as non-English highlights do, migration 0011): the English model ranked
-- a French or Spanish article's passages poorly, and most misses of the labelled set were
-- there (docs/articles.md). Same shape and rules as 0016's vector tables.
--
-- `english` is decided once per article when its passages are cut (1 English, 0 not);
-- NULL for passages cut before this step, decided by the passage index in bounded steps.
ALTER TABLE article_passages ADD COLUMN english INTEGER;

CREATE TABLE passage_multilingual_embeddings (
    seq       INTEGER PRIMARY KEY REFERENCES article_passages(id) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL
);

CREATE TABLE passage_multilingual_queue (
    seq           INTEGER PRIMARY KEY REFERENCES article_passages(id) ON DELETE CASCADE,
    ticket        INTEGER NOT NULL,
    claim         TEXT,
    claimed_until REAL
);
CREATE INDEX passage_multilingual_queue_ticket ON passage_multilingual_queue(ticket);

CREATE TABLE passage_multilingual_changes (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);

CREATE TRIGGER passage_multilingual_logged_insert AFTER INSERT ON passage_multilingual_embeddings
BEGIN
    INSERT INTO passage_multilingual_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER passage_multilingual_logged_update AFTER UPDATE ON passage_multilingual_embeddings
BEGIN
    INSERT INTO passage_multilingual_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER passage_multilingual_logged_delete AFTER DELETE ON passage_multilingual_embeddings
BEGIN
    INSERT INTO passage_multilingual_changes(seq) VALUES (old.seq);
END;
