"""Saved articles: fetching pages safely, extracting them, serving them in chunks.

- `urls`: validation, the duplicate key (`normalise_url`), short links, PDF and social links.
- `netguard`: the address policy (no loopback, private, link-local or metadata addresses
  unless allowed) and the transport that enforces it on every connection.
- `fetcher`: bounded HTTP fetches (time, size, redirects) behind the guard.
- `extract`: trafilatura / pypdf / nh3 into an `ExtractedArticle`.
- `social`: the text of one social post (X, Bluesky, Mastodon).
- `chunks`: slicing a body by `offset` and `max_chars`.
- `save`: `save_article`, what POST /articles does.
- `pipeline`: `ArticleWorker`, the background queued → fetching → parsed/failed worker.

Nothing here imports trafilatura, pypdf, nh3 or lxml at module level: the hosted-API path
never needs them.
"""
