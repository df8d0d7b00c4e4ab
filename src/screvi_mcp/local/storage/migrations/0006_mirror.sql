-- A mirror of a Screvi account (screvi-mcp sync): what it mirrors and how far it got.
-- `mirror_state` is a small key/value table: base_url, key_fingerprint (a hash, never the
-- key), cursor (the server time up to which everything is stored), last_sync_at, and the
-- resume point of an unfinished run (run_*). A library with a base_url row is a mirror.
CREATE TABLE mirror_state (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

-- Which version of each article's detail (body, parse error, reading dates) the mirror holds:
-- the article's `updated_at` on the server when its detail was fetched. An article whose
-- listed updated_at differs needs its detail fetched again; written in the same transaction
-- as the body, so a crash between list and body never loses a body.
CREATE TABLE mirror_article_details (
    article_id TEXT PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    updated_at TEXT NOT NULL
);
