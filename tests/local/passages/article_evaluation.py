"""Evaluate passage search on the labelled set of long articles (labelled_set.py).

The articles go the whole way a user's would: served by a local site (HTML, or PDF), saved
through POST /articles, fetched and extracted by the library's worker, cut into passages and
embedded by the queue. Then every query is searched through the client's `search_articles`
(the extension endpoint), and scored:

- answerable query: a hit in the top 3 is the right article with a passage starting within
  1,000 characters of the answer phrase (located in the article's extracted text);
- negative query: no hit at all.

`min_relevance` is fitted on the tuning half only; the held-out half is reported at the fitted
value and at the plain ranking with no cut (min_relevance 0), side by side. The model is the
configured one (`SCREVI_ENGLISH_MODEL`); `--write-docs` runs MiniLM and mpnet each in a
subprocess and rewrites the tables of docs/articles.md.

    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/article_evaluation.py
    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/article_evaluation.py --write-docs
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import tempfile
import time
import unicodedata
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from local.fetching.fetching_site import make_pdf
from local.passages.labelled_articles import Article
from local.passages.labelled_set import ARTICLES, HALVES, QUERIES
from screvi_mcp.client import ScreviClient
from screvi_mcp.local.api.app import create_app
from screvi_mcp.local.api.seam import EmbeddedLibrary
from screvi_mcp.local.passages import attach
from screvi_mcp.local.passages.search import DEFAULT_MIN_RELEVANCE
from screvi_mcp.server.highlight_context import locate
from testsupport.pages_site import article_html, serve_pages
from testsupport.polling import async_wait_until

GRID = tuple(round(0.05 * step, 2) for step in range(13))  # 0, 0.05, ..., 0.6
NEAR = 1000
KINDS = ("paraphrase", "exact", "deep", "language", "negative")
DOCS = Path(__file__).resolve().parents[3] / "docs" / "articles.md"


def latin1(text: str) -> str:
    """`text` in the hand-written test PDF's Helvetica (Latin-1): a letter outside it loses
    its accents ("ł" has none to lose: "l"), anything else becomes "?"."""
    if all(ord(c) < 256 for c in text):
        return text
    plain = unicodedata.normalize("NFKD", text.translate(_UNDECOMPOSABLE))
    kept = "".join(c for c in plain if not unicodedata.combining(c))
    return unicodedata.normalize("NFC", kept).encode("latin-1", "replace").decode("latin-1")


_UNDECOMPOSABLE = str.maketrans("łŁđĐħĦ", "lLdDhH")


def page_of(article: Article) -> bytes:
    if article.kind == "pdf":
        lines = [latin1(paragraph) for paragraph in article.paragraphs]
        return make_pdf([lines], title=latin1(article.title), author=latin1(article.author))
    return article_html(article.title, article.author, list(article.paragraphs))


@dataclass
class Library:
    client: ScreviClient
    ids: dict[str, str]  # article key -> id
    texts: dict[str, str]  # article key -> extracted text
    setup_seconds: float


@contextmanager
def site(articles: list[Article] = ARTICLES) -> Iterator[str]:
    pages = {f"/{a.key}" + (".pdf" if a.kind == "pdf" else ""): page_of(a) for a in articles}
    with serve_pages(pages) as base:
        yield base


async def build(
    path: Path, base: str, articles: list[Article] = ARTICLES
) -> tuple[EmbeddedLibrary, Library]:
    """Save every article through the API, wait for its text, then for every vector."""
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

    async def all_parsed() -> bool:
        for key, article_id in ids.items():
            if key not in texts:
                got = await client.get_article(article_id, format="text", highlights=False)
                if got.parse_state.value == "parsed" and got.content:
                    texts[key] = got.content
                elif got.parse_state.value == "failed":
                    raise RuntimeError(f"{key}: {got.parse_error}")
        return len(texts) == len(ids)

    await async_wait_until(
        all_parsed,
        timeout=300,
        what=lambda: f"{len(ids) - len(texts)} of {len(ids)} articles not parsed",
        every=0.1,
    )
    library = served.app.state.library
    if not await asyncio.to_thread(attach.wait_until_embedded, library, 1200):
        raise RuntimeError("passages were not embedded within 20 minutes")
    return served, Library(client, ids, texts, time.monotonic() - started)


async def run_queries(
    lib: Library, min_relevance: float, only: str | None = None
) -> list[dict[str, Any]]:
    """Each query's outcome (of the `only` half's, if given): `ok` as scored above,
    `article` whether the right article was in the top 3 at all (whatever its passage)."""
    rows = []
    for query, half in zip(QUERIES, HALVES, strict=True):
        if only is not None and half != only:
            continue
        page = await lib.client.search_articles(query.text, min_relevance=min_relevance, per_page=3)
        row: dict[str, Any] = {"half": half, "kind": query.kind, "query": query.text}
        if query.article is None:
            row["ok"] = row["article"] = not page.data
        else:
            where = locate(lib.texts[query.article], query.answer or "")
            assert where is not None, (query.article, query.answer)
            mine = [hit for hit in page.data if hit.article.id == lib.ids[query.article]]
            row["article"] = bool(mine)
            row["ok"] = any(abs(hit.passage.offset - where[0]) <= NEAR for hit in mine)
        rows.append(row)
    return rows


def score(rows: list[dict[str, Any]], which: str) -> dict[str, float]:
    """Share of queries answered per kind in one half; `top3` over every answerable kind,
    `article` the share with the right article in the top 3, `n_*` the counts."""
    chosen = [r for r in rows if r["half"] == which]
    kinds: dict[str, list[bool]] = defaultdict(list)
    for r in chosen:
        kinds[r["kind"]].append(r["ok"])
    answerable = [r for r in chosen if r["kind"] != "negative"]
    out = {
        "top3": sum(r["ok"] for r in answerable) / len(answerable),
        "article": sum(r["article"] for r in answerable) / len(answerable),
        "n": float(len(answerable)),
    }
    for kind, oks in kinds.items():
        out[kind] = sum(oks) / len(oks)
        out[f"n_{kind}"] = float(len(oks))
    return out


def fit(tuning: dict[float, dict[str, float]]) -> float:
    """The cut with the best top-3 + negatives-empty on the tuning half (the lower on ties)."""
    return max(
        tuning, key=lambda cut: (tuning[cut]["top3"] + tuning[cut].get("negative", 0.0), -cut)
    )


async def evaluate() -> dict[str, Any]:
    with tempfile.TemporaryDirectory() as folder, site() as base:
        served, lib = await build(Path(folder) / "lib.sqlite3", base)
        try:
            index = attach.index_for(served.app.state.library)
            model = index.embedder.model_id if index is not None else "none"
            passages = len(index) if index is not None else 0
            by_cut = {cut: await run_queries(lib, cut) for cut in GRID}
        finally:
            await lib.client.aclose()
            await served.aclose()
    tuning = {cut: score(rows, "tuning") for cut, rows in by_cut.items()}
    fitted = fit(tuning)
    return {
        "model": model,
        "articles": len(ARTICLES),
        "passages": passages,
        "queries": len(QUERIES),
        "setup_seconds": round(lib.setup_seconds, 1),
        "load_average": round(os.getloadavg()[0], 1),
        "fitted_min_relevance": fitted,
        "misses": [r["query"] for r in by_cut[fitted] if r["half"] == "heldout" and not r["ok"]],
        "tuning": tuning,
        "heldout": {cut: score(rows, "heldout") for cut, rows in by_cut.items()},
    }


def _cell(figures: dict[str, float], kind: str) -> str:
    if kind not in figures:
        return "–"
    value = f"{figures[kind]:.2f}"
    return f"**{value}**" if kind in ("top3", "negative") else value


def table(results: list[dict[str, Any]]) -> str:
    """The markdown table: per model, the plain ranking and the fitted cut, on both halves."""
    head = ("model", "min_relevance", "half", "top-3", "right article", *KINDS[:-1])
    lines = [
        "| " + " | ".join((*head, "negatives empty")) + " |",
        "|" + "---|" * (len(head) + 1),
    ]
    for result in results:
        name = _model_name(result["model"])
        fitted = result["fitted_min_relevance"]
        shipped = " = default" if fitted == DEFAULT_MIN_RELEVANCE else ""
        for half in ("heldout", "tuning"):
            for cut, label in ((0.0, "0 (plain ranking)"), (fitted, f"{fitted} (fitted{shipped})")):
                figures = result[half][cut]
                cells = [_cell(figures, k) for k in ("top3", "article", *KINDS)]
                shown = "**held-out**" if half == "heldout" else "tuning"
                lines.append("| " + " | ".join((name, label, shown, *cells)) + " |")
    return "\n".join(lines)


def _model_name(model_id: str) -> str:
    if model_id.startswith("all-mpnet-base-v2"):
        return "all-mpnet-base-v2 (default)"
    if model_id.startswith("all-MiniLM-L6-v2"):
        return "MiniLM (tests)"
    return model_id


def counts(result: dict[str, Any]) -> str:
    per_half = []
    for half in ("heldout", "tuning"):
        figures = result[half][0.0]
        parts = ", ".join(f"{int(figures[f'n_{k}'])} {k}" for k in KINDS if f"n_{k}" in figures)
        per_half.append(f"{half}: {parts}")
    return "; ".join(per_half)


def write_docs() -> int:
    """Run the evaluation once per English model, each in its own process (the model is
    chosen when the library opens), and rewrite the region of docs/articles.md."""
    results = []
    for model in ("minilm", "mpnet"):
        env = {**os.environ, "SCREVI_ENGLISH_MODEL": model}
        done = subprocess.run(
            [sys.executable, __file__, "--json"], env=env, capture_output=True, text=True
        )
        if done.returncode:
            raise SystemExit(f"{model}: {done.stderr[-2000:]}")
        result = json.loads(done.stdout.strip().splitlines()[-1])
        for half in ("tuning", "heldout"):  # JSON made the cuts strings
            result[half] = {float(cut): figures for cut, figures in result[half].items()}
        results.append(result)
    first = results[0]
    notes = [
        f"{first['articles']} articles, {first['queries']} queries ({counts(first)}).",
        *(
            f"{_model_name(r['model'])} (`{r['model']}`): {r['passages']} passages, "
            f"set up (save, fetch, extract, embed) in {r['setup_seconds']} s "
            f"at load average {r['load_average']}; "
            f"fitted cut {r['fitted_min_relevance']} (shipped default {DEFAULT_MIN_RELEVANCE})."
            for r in results
        ),
    ]
    body = table(results) + "\n\n" + "\n".join(f"- {note}" for note in notes)
    text = DOCS.read_text(encoding="utf-8")
    start, end = "<!-- evaluation:articles -->", "<!-- /evaluation:articles -->"
    if start not in text or end not in text:
        raise SystemExit(f"{DOCS} has no region {start} ... {end}")
    head, rest = text.split(start, 1)
    DOCS.write_text(f"{head}{start}\n{body}\n{end}{rest.split(end, 1)[1]}", encoding="utf-8")
    print(body)
    for result in results:
        print(f"{result['model']} held-out misses:", *result["misses"], sep="\n  ")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", action="store_true", help="print the results as one JSON line")
    parser.add_argument("--write-docs", action="store_true", help="both models, into the docs")
    args = parser.parse_args()
    if args.write_docs:
        return write_docs()
    result = asyncio.run(evaluate())
    if args.json:
        print(json.dumps(result))
        return 0
    print(table([result]))
    print(f"setup {result['setup_seconds']} s; passages {result['passages']}")
    print("held-out misses at the fitted value:", *result["misses"], sep="\n  ")
    for which in ("tuning", "heldout"):
        print(which)
        for cut, figures in result[which].items():
            shown = " ".join(f"{k} {v:.2f}" for k, v in figures.items() if not k.startswith("n"))
            print(f"  cut {cut:.2f}: {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
