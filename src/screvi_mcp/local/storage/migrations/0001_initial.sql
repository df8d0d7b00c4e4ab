-- The library's first schema. Ids are UUID strings; timestamps are ISO 8601 UTC text in one
-- fixed-width format (see local/clock.py) so that they sort and compare as text.

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
);

CREATE TABLE api_keys (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    key_hash     TEXT NOT NULL UNIQUE,   -- sha256 hex of the whole key; the key itself is never stored
    hint         TEXT NOT NULL,          -- first characters, to recognise a key in `keys list`
    scopes       TEXT NOT NULL,          -- "read" or "read write"
    legacy       INTEGER NOT NULL DEFAULT 0,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT,
    last_used_at TEXT
);

-- Books, podcasts, ... and articles share one id space: an article is a source of type
-- 'article' (or 'pdf') with a row in `articles` beside it.
CREATE TABLE sources (
    id             TEXT PRIMARY KEY,
    name           TEXT NOT NULL,
    type           TEXT NOT NULL,
    author         TEXT,
    image_url      TEXT,
    url            TEXT,
    origin         TEXT,
    note           TEXT,
    isbn           TEXT,
    asin           TEXT,
    published_date TEXT,
    metadata       TEXT NOT NULL DEFAULT '{}',
    created_at     TEXT NOT NULL,
    updated_at     TEXT NOT NULL,
    deleted_at     TEXT
);
CREATE INDEX sources_type ON sources(type);
CREATE INDEX sources_updated ON sources(updated_at);
-- At most one live personal-notes source per library (spec: a second `self` source is a 409).
CREATE UNIQUE INDEX sources_one_self ON sources(type) WHERE type = 'self' AND deleted_at IS NULL;

CREATE TABLE articles (
    source_id            TEXT PRIMARY KEY REFERENCES sources(id) ON DELETE CASCADE,
    title                TEXT,
    url                  TEXT NOT NULL,
    url_key              TEXT NOT NULL,   -- normalised URL used for duplicate detection
    canonical_url        TEXT,
    canonical_key        TEXT,
    excerpt              TEXT,
    status               TEXT NOT NULL DEFAULT 'unread',
    home_status          TEXT NOT NULL DEFAULT 'inbox',
    favorite             INTEGER NOT NULL DEFAULT 0,
    progress_percentage  INTEGER NOT NULL DEFAULT 0,
    reading_time_minutes INTEGER,
    word_count           INTEGER,
    source_domain        TEXT,
    site_name            TEXT,
    language             TEXT,
    saved_at             TEXT NOT NULL,
    published_date       TEXT,
    parse_state          TEXT NOT NULL DEFAULT 'queued',
    parse_error          TEXT,
    parse_failure        TEXT,            -- JSON object or NULL
    content_html         TEXT,
    content_text         TEXT,
    pdf_url              TEXT,
    epub_url             TEXT,
    last_fetched_at      TEXT,
    started_reading_at   TEXT,
    completed_reading_at TEXT,
    summary              TEXT,
    transcript           TEXT,            -- JSON object or NULL
    fetch_attempts       INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX articles_url_key ON articles(url_key);
CREATE INDEX articles_canonical_key ON articles(canonical_key);
CREATE INDEX articles_parse_state ON articles(parse_state);

-- `seq` is the stable integer rowid that FTS5 and the vector index key on.
CREATE TABLE highlights (
    seq        INTEGER PRIMARY KEY,
    id         TEXT NOT NULL UNIQUE,
    source_id  TEXT REFERENCES sources(id),
    content    TEXT NOT NULL,
    note       TEXT,
    favorite   INTEGER NOT NULL DEFAULT 0,
    url        TEXT,
    location   REAL,
    date       TEXT,
    metadata   TEXT NOT NULL DEFAULT '{}',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    deleted_at TEXT
);
CREATE INDEX highlights_source ON highlights(source_id);
CREATE INDEX highlights_created ON highlights(created_at);
CREATE INDEX highlights_updated ON highlights(updated_at);

CREATE TABLE tags (
    id         TEXT PRIMARY KEY,
    name       TEXT NOT NULL,
    name_key   TEXT NOT NULL UNIQUE,   -- lower-cased name: tags match case-insensitively
    color      TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);

CREATE TABLE highlight_tags (
    highlight_id TEXT NOT NULL REFERENCES highlights(id) ON DELETE CASCADE,
    tag_id       TEXT NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (highlight_id, tag_id)
);
CREATE INDEX highlight_tags_tag ON highlight_tags(tag_id);

CREATE TABLE source_tags (
    source_id TEXT NOT NULL REFERENCES sources(id) ON DELETE CASCADE,
    tag_id    TEXT NOT NULL REFERENCES tags(id) ON DELETE CASCADE,
    PRIMARY KEY (source_id, tag_id)
);
CREATE INDEX source_tags_tag ON source_tags(tag_id);

-- Keyword index over what /search covers: highlight content and note, source name and author.
-- Kept in sync by triggers, so no code path can forget it. Deleted highlights stay indexed and
-- are filtered out by the join on `highlights.deleted_at`.
CREATE VIRTUAL TABLE highlights_fts USING fts5(
    content, note, source_name, source_author,
    tokenize = 'porter unicode61'
);

CREATE TRIGGER highlights_fts_insert AFTER INSERT ON highlights BEGIN
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author)
    SELECT new.seq, new.content, coalesce(new.note, ''),
           coalesce((SELECT name FROM sources WHERE id = new.source_id), ''),
           coalesce((SELECT author FROM sources WHERE id = new.source_id), '');
END;

CREATE TRIGGER highlights_fts_update AFTER UPDATE OF content, note, source_id ON highlights BEGIN
    DELETE FROM highlights_fts WHERE rowid = old.seq;
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author)
    SELECT new.seq, new.content, coalesce(new.note, ''),
           coalesce((SELECT name FROM sources WHERE id = new.source_id), ''),
           coalesce((SELECT author FROM sources WHERE id = new.source_id), '');
END;

CREATE TRIGGER highlights_fts_delete AFTER DELETE ON highlights BEGIN
    DELETE FROM highlights_fts WHERE rowid = old.seq;
END;

CREATE TRIGGER sources_fts_rename AFTER UPDATE OF name, author ON sources BEGIN
    DELETE FROM highlights_fts
     WHERE rowid IN (SELECT seq FROM highlights WHERE source_id = new.id);
    INSERT INTO highlights_fts(rowid, content, note, source_name, source_author)
    SELECT seq, content, coalesce(note, ''), new.name, coalesce(new.author, '')
      FROM highlights WHERE source_id = new.id;
END;
