-- What an import last wrote into each highlight, field by field (a JSON object of short
-- hashes of content, note, url, date and location). A re-import writes a field only when
-- the file's value changed since then: an edit the reader made in the library to a field
-- the file did not change is kept. NULL for keys written before this step (and for sources).
ALTER TABLE import_keys ADD COLUMN imported TEXT;
