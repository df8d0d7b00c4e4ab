-- A log of embedding writes, so that a process can pick up vectors another process wrote to
-- the same library (two MCP hosts sharing one library, `screvi-mcp sample` or `reindex` while
-- a server runs). Each process remembers the last id it applied; the log is pruned to its
-- newest rows, and a process that fell behind a prune reloads every vector.
CREATE TABLE embedding_changes (
    id  INTEGER PRIMARY KEY AUTOINCREMENT,
    seq INTEGER NOT NULL
);

CREATE TRIGGER highlight_embeddings_logged_insert AFTER INSERT ON highlight_embeddings BEGIN
    INSERT INTO embedding_changes(seq) VALUES (new.seq);
END;

CREATE TRIGGER highlight_embeddings_logged_update AFTER UPDATE ON highlight_embeddings BEGIN
    INSERT INTO embedding_changes(seq) VALUES (new.seq);
END;
