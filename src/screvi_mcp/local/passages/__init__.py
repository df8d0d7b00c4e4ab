"""Passages of saved articles: cut, indexed by keywords and meaning, searched (issue 26).

- `split`: an article's text into passages with their character offsets (no dependencies).
- `tables`: the passage vectors' tables, for the shared embedding-queue code.
- `index`: `PassageIndex`, the passages' vectors in memory, kept current by a queue worker.
- `attach`: which library has a passage index (started with the app, stopped with it).
- `search`: hybrid keyword + meaning search over passages, one hit per article.

The rows themselves (passages, their FTS5 keyword rows, the pending list) are written by
`local/storage/store/passages.py` inside `Library.write`, whatever wrote the body.
"""
