-- Timestamps written before years were zero-padded (`500-01-01T...Z` for year 500; see
-- local/clock.py) are rewritten in the canonical form, so they parse and compare as text.
-- Only user-supplied dates could be that old: highlight dates and articles' published dates.
UPDATE highlights
   SET date = printf('%04d', CAST(substr(date, 1, instr(date, '-') - 1) AS INTEGER))
              || substr(date, instr(date, '-'))
 WHERE date GLOB '[0-9]-*' OR date GLOB '[0-9][0-9]-*' OR date GLOB '[0-9][0-9][0-9]-*';

UPDATE articles
   SET published_date = printf('%04d', CAST(substr(published_date, 1, instr(published_date, '-') - 1) AS INTEGER))
              || substr(published_date, instr(published_date, '-'))
 WHERE published_date GLOB '[0-9]-*' OR published_date GLOB '[0-9][0-9]-*'
    OR published_date GLOB '[0-9][0-9][0-9]-*';

-- One claim per article across processes: the worker that moves a row to `fetching` records
-- itself and a lease it keeps renewing while it works. Another process (or a restart) only
-- takes the row back once the lease has run out, so a page is never fetched twice at once.
ALTER TABLE articles ADD COLUMN claim_owner TEXT;
ALTER TABLE articles ADD COLUMN claim_expires_at TEXT;
