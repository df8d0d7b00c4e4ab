-- Passages of saved articles' text, searchable by keywords (FTS5) and by meaning (issue 26).
--
-- An article's plain-text body (`content_text`, what read_article serves as text) is cut into
-- passages of about a paragraph, each with its character offsets in that body, so that a
-- match can hand `read_article` the place to open. Ids are never reused (AUTOINCREMENT): a
-- process holding vectors by passage id never mistakes a new passage for an old one.
CREATE TABLE article_passages (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    article_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    ordinal    INTEGER NOT NULL,
    start      INTEGER NOT NULL,   -- character offset of the passage in content_text
    length     INTEGER NOT NULL,   -- characters
    text       TEXT NOT NULL
);
CREATE INDEX article_passages_article ON article_passages(article_id, ordinal);

-- Keyword rows, keyed by passage id; `title` lets a title word count for every passage.
CREATE VIRTUAL TABLE article_passages_fts USING fts5(
    text, title, tokenize = 'porter unicode61 remove_diacritics 2'
);

-- Articles whose passages must be rebuilt: recorded by the triggers below in the writing
-- transaction, rebuilt just before it commits (local/storage/store/passages.py, called from
-- Library.write), as the keyword rows of highlights are (migration 0013). So every path that
-- writes a body (the fetcher, a mirror sync, a future one) keeps the passages in step.
CREATE TABLE article_passages_pending (
    article_id TEXT PRIMARY KEY
);

CREATE TRIGGER article_passages_on_insert AFTER INSERT ON articles
WHEN new.content_text IS NOT NULL BEGIN
    INSERT OR IGNORE INTO article_passages_pending(article_id) VALUES (new.source_id);
END;

CREATE TRIGGER article_passages_on_body AFTER UPDATE OF content_text, title ON articles
WHEN old.content_text IS NOT new.content_text OR old.title IS NOT new.title BEGIN
    INSERT OR IGNORE INTO article_passages_pending(article_id) VALUES (new.source_id);
END;

-- Vectors of passages, their embedding queue and change log: the same three tables, same
-- columns and same claim/lease protocol as highlights' (0002, 0004, 0008), so the embedding
-- queue's code serves both (local/search/embedding_queue.py with `PASSAGE_TABLES`).
CREATE TABLE passage_embeddings (
    seq       INTEGER PRIMARY KEY REFERENCES article_passages(id) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL
);

CREATE TABLE passage_embedding_queue (
    seq           INTEGER PRIMARY KEY REFERENCES article_passages(id) ON DELETE CASCADE,
    ticket        INTEGER NOT NULL,
    claim         TEXT,
    claimed_until REAL
);
CREATE INDEX passage_embedding_queue_ticket ON passage_embedding_queue(ticket);

CREATE TABLE passage_embedding_changes (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);

CREATE TRIGGER passage_embeddings_logged_insert AFTER INSERT ON passage_embeddings BEGIN
    INSERT INTO passage_embedding_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER passage_embeddings_logged_update AFTER UPDATE ON passage_embeddings BEGIN
    INSERT INTO passage_embedding_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER passage_embeddings_logged_delete AFTER DELETE ON passage_embeddings BEGIN
    INSERT INTO passage_embedding_changes(seq) VALUES (old.seq);
END;

-- Bodies saved before this step get their passages at the next write (Library.open flushes).
INSERT INTO article_passages_pending(article_id)
SELECT source_id FROM articles WHERE content_text IS NOT NULL;
