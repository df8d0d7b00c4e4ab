-- Standalone highlights (made without source_id or article_id) used to have no source
-- (`source: null`), which the spec's Highlight does not allow. They now belong to the user's
-- personal-notes source (type `self`); this files the old ones there, creating that source
-- (a random v4 uuid, the library's timestamp format) when some exist and it does not.
INSERT INTO sources(id, name, type, created_at, updated_at)
SELECT lower(hex(randomblob(4))) || '-' || lower(hex(randomblob(2))) || '-4'
       || substr(lower(hex(randomblob(2))), 2) || '-'
       || substr('89ab', 1 + (abs(random()) % 4), 1) || substr(lower(hex(randomblob(2))), 2)
       || '-' || lower(hex(randomblob(6))),
       'Personal notes', 'self', stamp, stamp
FROM (SELECT strftime('%Y-%m-%dT%H:%M:%S', 'now') || '.' || substr(strftime('%f', 'now'), 4)
             || '000Z' AS stamp)
WHERE EXISTS (SELECT 1 FROM highlights WHERE source_id IS NULL)
  AND NOT EXISTS (SELECT 1 FROM sources WHERE type = 'self' AND deleted_at IS NULL);

UPDATE highlights
SET source_id = (SELECT id FROM sources WHERE type = 'self' AND deleted_at IS NULL)
WHERE source_id IS NULL;
