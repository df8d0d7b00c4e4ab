-- Import keys: the stable name an imported item had in the file it came from (a Kindle book
-- and location range, a Readwise row's book and text), mapped to the library item it became.
-- Re-running an import finds its items here and updates them instead of adding duplicates.
-- One library item may carry several keys (the same book from Kindle and from Readwise, a
-- highlight the reader later extended on the device).
CREATE TABLE import_keys (
    kind       TEXT NOT NULL CHECK (kind IN ('source', 'highlight')),
    key        TEXT NOT NULL,
    target_id  TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (kind, key)
);
CREATE INDEX import_keys_target ON import_keys(target_id);
