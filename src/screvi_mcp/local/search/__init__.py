"""Hybrid search over the embedded library: FTS5 keywords plus sentence embeddings.

`engine.search` answers GET /search; `attach_semantic_index` (in `setup`) is what the app
calls at start-up; `reindex` re-embeds after a change of model. See docs/search.md.
"""
