"""Evaluate passage search on the labelled article set (labelled_articles.py).

The articles go the whole way a user's would: served by a local site (HTML, and PDF for five),
saved through POST /articles, fetched and extracted by the library's worker, cut into passages
and embedded by the queue. Then every query is searched through the client's
`search_articles` (the extension endpoint), and scored:

- answerable query: a hit in the top 3 is the right article with a passage starting within
  1,000 characters of the answer phrase (located in the article's extracted text);
- negative query: no hit at all.

`min_relevance` is fitted on the tuning half only; the held-out half is reported at the fitted
value and at the plain ranking with no cut (min_relevance 0), side by side.

    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/article_evaluation.py
"""

from __future__ import annotations

import asyncio
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.fetching.fetching_site import make_pdf
from local.passages.labelled_articles import ARTICLES, QUERIES, Article, half
from screvi_mcp.client import ScreviClient
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.api.seam import EmbeddedLibrary
from screvi_mcp.local.passages import attach
from screvi_mcp.server.highlight_context import locate
from testsupport.pages_site import article_html, serve_pages

GRID = (0.0, 0.15, 0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5)
NEAR = 1000


DIGEST_SIZE = 5


def digests() -> tuple[list[Article], dict[str, str]]:
    """The articles joined five at a time into 'digests' of 1,000-2,000 words (each part
    under its title), and which digest holds each article: the same queries then have to
    find the right passage inside a long article. The second digest is served as a PDF."""
    joined: list[Article] = []
    home: dict[str, str] = {}
    for start in range(0, len(ARTICLES), DIGEST_SIZE):
        parts = ARTICLES[start : start + DIGEST_SIZE]
        key = f"digest{start // DIGEST_SIZE}"
        paragraphs = [text for part in parts for text in (part.title, *part.paragraphs)]
        kind = "pdf" if start // DIGEST_SIZE == 1 else "html"
        joined.append(
            Article(key, f"Reading digest {key[6:]}", "Various", "en", kind, tuple(paragraphs))
        )
        home.update({part.key: key for part in parts})
    return joined, home


def page_of(article: Article) -> bytes:
    if article.kind == "pdf":
        return make_pdf([list(article.paragraphs)], title=article.title, author=article.author)
    return article_html(article.title, article.author, list(article.paragraphs))


@dataclass
class Library:
    client: ScreviClient
    ids: dict[str, str]  # article key -> id
    texts: dict[str, str]  # article key -> extracted text
    setup_seconds: float


@contextmanager
def _site(articles: list[Article] = ARTICLES) -> Iterator[str]:
    pages = {f"/{a.key}" + (".pdf" if a.kind == "pdf" else ""): page_of(a) for a in articles}
    with serve_pages(pages) as base:
        yield base


async def build(
    path: Path, base: str, articles: list[Article] = ARTICLES
) -> tuple[EmbeddedLibrary, Library]:
    started = time.monotonic()
    served = EmbeddedLibrary(
        app=create_app(path, allow_private_networks=True, rate_limit_per_minute=1_000_000)
    )
    await served.start()
    client = ScreviClient(**{**served.client_options(), "rate_limit": None})
    ids = {}
    for article in articles:
        suffix = ".pdf" if article.kind == "pdf" else ""
        saved = await client.save_article(f"{base}/{article.key}{suffix}")
        ids[article.key] = saved.id
    texts: dict[str, str] = {}
    deadline = time.monotonic() + 300
    while len(texts) < len(ids) and time.monotonic() < deadline:
        for key, article_id in ids.items():
            if key not in texts:
                got = await client.get_article(article_id, format="text", highlights=False)
                if got.parse_state.value == "parsed" and got.content:
                    texts[key] = got.content
                elif got.parse_state.value == "failed":
                    raise RuntimeError(f"{key}: {got.parse_error}")
        await asyncio.sleep(0.1)
    library = served.app.state.library
    await asyncio.to_thread(attach.wait_until_embedded, library, 600)
    return served, Library(client, ids, texts, time.monotonic() - started)


async def run_queries(
    lib: Library, min_relevance: float, home: dict[str, str] | None = None
) -> list[dict[str, Any]]:
    """Each query's outcome; `home` maps an article to the digest that holds it."""
    rows = []
    for index, query in enumerate(QUERIES):
        page = await lib.client.search_articles(query.text, min_relevance=min_relevance, per_page=3)
        row: dict[str, Any] = {"half": half(index), "kind": query.kind, "query": query.text}
        if query.article is None:
            row["ok"] = not page.data
        else:
            key = home[query.article] if home else query.article
            where = locate(lib.texts[key], query.answer or "")
            assert where is not None, (key, query.answer)
            row["ok"] = any(
                hit.article.id == lib.ids[key] and abs(hit.passage.offset - where[0]) <= NEAR
                for hit in page.data
            )
        rows.append(row)
    return rows


def score(rows: list[dict[str, Any]], which: str) -> dict[str, float]:
    chosen = [r for r in rows if r["half"] == which]
    kinds: dict[str, list[bool]] = defaultdict(list)
    for r in chosen:
        kinds[r["kind"]].append(r["ok"])
    answerable = [r["ok"] for r in chosen if r["kind"] != "negative"]
    out = {"top3": sum(answerable) / len(answerable), "n": float(len(answerable))}
    for kind, oks in kinds.items():
        out[kind] = sum(oks) / len(oks)
    return out


async def evaluate(long_articles: bool = False) -> dict[str, Any]:
    articles, home = digests() if long_articles else (ARTICLES, None)
    with tempfile.TemporaryDirectory() as folder, _site(articles) as base:
        served, lib = await build(Path(folder) / "lib.sqlite3", base, articles)
        try:
            by_cut = {cut: await run_queries(lib, cut, home) for cut in GRID}
        finally:
            await lib.client.aclose()
            await served.aclose()
    tuning = {cut: score(rows, "tuning") for cut, rows in by_cut.items()}
    fitted = max(GRID, key=lambda cut: (tuning[cut]["top3"] + tuning[cut]["negative"], -cut))
    return {
        "misses": [r["query"] for r in by_cut[fitted] if r["half"] == "heldout" and not r["ok"]],
        "setup_seconds": round(lib.setup_seconds, 1),
        "fitted_min_relevance": fitted,
        "tuning": tuning,
        "heldout": {cut: score(rows, "heldout") for cut, rows in by_cut.items()},
    }


def main() -> None:
    long_articles = "--digests" in sys.argv
    result = asyncio.run(evaluate(long_articles))
    if long_articles:
        print("articles joined into digests of 1,000-2,000 words")
    print(f"setup (save, fetch, extract, embed) {result['setup_seconds']} s")
    print(f"fitted on tuning: min_relevance {result['fitted_min_relevance']}")
    print("held-out misses at the fitted value:", *result["misses"], sep="\n  ")
    for which in ("tuning", "heldout"):
        print(which)
        for cut, figures in result[which].items():
            shown = " ".join(f"{k} {v:.2f}" for k, v in sorted(figures.items()) if k != "n")
            print(f"  cut {cut:.2f}: {shown}")


if __name__ == "__main__":
    main()
