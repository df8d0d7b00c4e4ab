-- Sentence embeddings of highlights for semantic search (local/search).
-- One row per highlight: the vector of the text `text_hash` names, made by `model`. A row
-- whose model is not the library's current one is stale and is replaced by `reindex`.
-- `vector` is little-endian float32, L2-normalised.
CREATE TABLE highlight_embeddings (
    seq       INTEGER PRIMARY KEY REFERENCES highlights(seq) ON DELETE CASCADE,
    model     TEXT NOT NULL,
    text_hash TEXT NOT NULL,
    vector    BLOB NOT NULL
);
CREATE INDEX highlight_embeddings_model ON highlight_embeddings(model);
