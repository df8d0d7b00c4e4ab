"""Offline study of how a hit's passage is chosen within its article (docs/articles.md).

`--dump` runs the real pipeline once for the configured model (`SCREVI_ENGLISH_MODEL`):
the labelled long articles are saved, fetched, extracted, cut and embedded as a user's
would be (article_evaluation.build), then every passage (offsets, vector), every query's
vector, its all-terms keyword ranking (what search uses) and its any-term bm25 ranking are
written to bench/.cache/passage_choice-<model>.npz (git-ignored); `--windows` then embeds
each passage's two-sentence windows with that model (passage_windows-<model>.npz), for the
rules that score a passage by its best window. Without `--dump`, the search's fusion,
one hit per article and the passage re-choice are replayed in numpy from those caches, for
each rule below, in seconds: rules are compared on the TUNING half; held-out is printed
beside them only to check that the pick does not lose there.

    SCREVI_ENGLISH_MODEL=minilm PYTHONPATH=src:tests .venv/bin/python \
        tests/local/passages/passage_choice_study.py --dump
    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/passage_choice_study.py \
        --windows --models minilm,mpnet
    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/passage_choice_study.py
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from local.passages.article_evaluation import NEAR, build, site
from local.passages.labelled_set import HALVES, QUERIES
from screvi_mcp.local.passages import attach
from screvi_mcp.local.passages.search import (
    RRF_K,
    SEMANTIC_LIMIT,
    PassageFilters,
    keyword_ranking,
)
from screvi_mcp.local.search.stopwords import STOPWORDS
from screvi_mcp.server.highlight_context import locate

CACHE = Path(__file__).resolve().parents[3] / "bench" / ".cache"
CUTS = (0.0, 0.3)


def _any_terms(conn: Any, text: str) -> list[tuple[int, float]]:
    words = [w for w in dict.fromkeys(text.lower().split()) if w.strip(".,?!'\"") not in STOPWORDS]
    terms = [w.strip(".,?!'\"()") for w in words]
    terms = [t for t in terms if t and t.isalnum()]
    if not terms:
        return []
    query = " OR ".join(f'"{t}"' for t in terms)
    rows = conn.execute(
        "SELECT rowid, bm25(article_passages_fts, 1.0, 0.5) FROM article_passages_fts "
        "WHERE article_passages_fts MATCH ? ORDER BY 2 LIMIT 2000",
        (query,),
    )
    return [(int(r[0]), float(r[1])) for r in rows]


async def dump() -> Path:
    model = os.environ.get("SCREVI_ENGLISH_MODEL", "minilm")
    with tempfile.TemporaryDirectory() as folder, site() as base:
        served, lib = await build(Path(folder) / "lib.sqlite3", base)
        try:
            library = served.app.state.library
            index = attach.index_for(library)
            assert index is not None
            conn = library.connection()
            rows = conn.execute(
                "SELECT p.id, p.article_id, p.ordinal, p.start, p.length, e.vector, p.text "
                "FROM article_passages p JOIN passage_embeddings e ON e.seq = p.id "
                "ORDER BY p.article_id, p.ordinal"
            ).fetchall()
            key_of = {v: k for k, v in lib.ids.items()}
            queries = []
            for query in QUERIES:
                where = None
                if query.article is not None:
                    found = locate(lib.texts[query.article], query.answer or "")
                    assert found is not None
                    where = found[0]
                queries.append(
                    {
                        "article": query.article,
                        "where": where,
                        "keyword": keyword_ranking(conn, query.text, PassageFilters()),
                        "any": _any_terms(conn, query.text),
                    }
                )
            qvec = np.stack([index.query_vector(q.text) for q in QUERIES])
        finally:
            await lib.client.aclose()
            await served.aclose()
    CACHE.mkdir(parents=True, exist_ok=True)
    out = CACHE / f"passage_choice-{model}.npz"
    np.savez(
        out,
        ids=np.array([r[0] for r in rows]),
        article=np.array([key_of[r[1]] for r in rows]),
        ordinal=np.array([r[2] for r in rows]),
        start=np.array([r[3] for r in rows]),
        length=np.array([r[4] for r in rows]),
        vectors=np.stack([np.frombuffer(r[5], dtype="<f4") for r in rows]),
        qvec=qvec,
        queries=np.array(json.dumps(queries)),
        texts=np.array(json.dumps([r[6] for r in rows])),
    )
    return out


def windows(model: str) -> Path:
    """Embed every passage's two-sentence windows (sliding by one sentence) with `model`:
    what a score taken as the max over a passage's windows would need (measured here only)."""
    from screvi_mcp.local.passages.split import _SENTENCE_END
    from screvi_mcp.local.search.embedder import load_english_embedder

    z = np.load(CACHE / f"passage_choice-{model}.npz")
    texts = json.loads(str(z["texts"]))
    owner, spans = [], []
    for row, text in enumerate(texts):
        sentences = [t for t in _SENTENCE_END.split(text) if t.strip()]
        pairs = [" ".join(sentences[i : i + 2]) for i in range(max(1, len(sentences) - 1))]
        owner.extend([row] * len(pairs))
        spans.extend(pairs)
    embedder = load_english_embedder(model)
    vectors = np.concatenate([embedder.embed(spans[i : i + 64]) for i in range(0, len(spans), 64)])
    out = CACHE / f"passage_windows-{model}.npz"
    np.savez(out, owner=np.array(owner), vectors=vectors.astype(np.float32))
    return out


@dataclass
class Data:
    ids: np.ndarray
    article: np.ndarray
    start: np.ndarray
    vectors: np.ndarray
    qvec: np.ndarray
    queries: list[dict[str, Any]]
    row_of: dict[int, int]
    members: dict[str, np.ndarray]  # article -> its rows, in text order
    centroid_sim: np.ndarray  # each row's cosine with its article's mean vector
    window_owner: np.ndarray | None = None
    window_vectors: np.ndarray | None = None


def load(model: str) -> Data:
    z = np.load(CACHE / f"passage_choice-{model}.npz")
    ids, article, vectors = z["ids"], z["article"], z["vectors"].astype(np.float32)
    members = {a: np.flatnonzero(article == a) for a in dict.fromkeys(article.tolist())}
    centroid_sim = np.zeros(len(ids), dtype=np.float32)
    for rows in members.values():
        c = vectors[rows].mean(axis=0)
        centroid_sim[rows] = vectors[rows] @ (c / np.linalg.norm(c))
    w = CACHE / f"passage_windows-{model}.npz"
    wz = np.load(w) if w.exists() else None
    return Data(
        ids,
        article,
        z["start"],
        vectors,
        z["qvec"],
        json.loads(str(z["queries"])),
        {int(p): i for i, p in enumerate(ids)},
        members,
        centroid_sim,
        None if wz is None else wz["owner"],
        None if wz is None else wz["vectors"],
    )


# A rule: (data, query index, article's rows, their cosines, eligible mask) -> scores.
Rule = Callable[[Data, int, np.ndarray, np.ndarray], np.ndarray]


def page(data: Data, qi: int, cut: float, second: float = 0.0) -> list[tuple[str, int]]:
    """The top 3 (article, first-choice row) as search.py's fusion gives them. `second` > 0
    ranks an article by its best passage plus that share of its next two (studied only)."""
    cos = data.vectors @ data.qvec[qi]
    order = np.argsort(-cos)[:SEMANTIC_LIMIT]
    keyword = [data.row_of[p] for p in data.queries[qi]["keyword"] if p in data.row_of]
    kw_rank = {r: i for i, r in enumerate(keyword)}
    scores: dict[int, float] = {r: 1.0 / (RRF_K + i + 1) for i, r in enumerate(keyword)}
    for rank, r in enumerate(order.tolist()):
        if r in kw_rank or cos[r] >= cut:
            scores[r] = scores.get(r, 0.0) + 1.0 / (RRF_K + rank + 1)
    per: dict[str, list[tuple[float, int]]] = {}
    for r, score in sorted(scores.items(), key=lambda item: -item[1]):
        per.setdefault(str(data.article[r]), []).append((score, r))
    ranked = sorted(
        per.items(), key=lambda it: -(it[1][0][0] + second * sum(x for x, _ in it[1][1:3]))
    )
    return [(art, found[0][1]) for art, found in ranked[:3]]


def evaluate(
    data: Data, rule: Rule | None, cut: float, second: float = 0.0
) -> dict[str, list[bool]]:
    """Per half, whether each answerable query's hit is right (rule None: no re-choice)."""
    out: dict[str, list[bool]] = {"tuning": [], "heldout": []}
    for qi, q in enumerate(data.queries):
        if q["article"] is None:
            continue
        ok = False
        keyword = {data.row_of[p] for p in q["keyword"] if p in data.row_of}
        for art, first in page(data, qi, cut, second):
            if art != q["article"]:
                continue
            shown = first
            rows = data.members[art]
            if rule is not None and len(rows) >= 2:
                cos = data.vectors[rows] @ data.qvec[qi]
                eligible = (cos >= cut) | np.isin(rows, list(keyword | {first}))
                scores = rule(data, qi, rows, cos)
                scores = np.where(eligible, scores, -np.inf)
                shown = int(rows[int(np.argmax(scores))])
            ok = abs(int(data.start[shown]) - int(q["where"])) <= NEAR
        out[HALVES[qi]].append(ok)
    return out


def plain(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
    return cos


def generic(penalty: float) -> Rule:
    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        return cos - penalty * data.centroid_sim[rows]

    return rule


def smoothed(penalty: float, share: float, how: str = "mean") -> Rule:
    """The generic-penalised score plus `share` of the neighbours' (before and after)."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        s = cos - penalty * data.centroid_sim[rows]
        padded = np.concatenate(([s[0]], s, [s[-1]]))
        prev, nxt = padded[:-2], padded[2:]
        near = (prev + nxt) / 2 if how == "mean" else np.maximum(prev, nxt)
        return s + share * near

    return rule


def fused(penalty: float, weight: float, source: str = "any") -> Rule:
    """RRF within the article of the semantic score's rank and the keyword rank."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        s = cos - penalty * data.centroid_sim[rows]
        sem_rank = np.empty(len(rows))
        sem_rank[np.argsort(-s)] = np.arange(len(rows))
        ranked = (
            data.queries[qi]["any"]
            if source == "any"
            else [(p, 0.0) for p in data.queries[qi]["keyword"]]
        )
        pos = {data.row_of[p]: i for i, (p, _) in enumerate(ranked) if p in data.row_of}
        in_art = sorted((pos[r], j) for j, r in enumerate(rows.tolist()) if r in pos)
        kw = np.zeros(len(rows))
        for rank, (_, j) in enumerate(in_art):
            kw[j] = 1.0 / (RRF_K + rank + 1)
        return 1.0 / (RRF_K + sem_rank + 1) + weight * kw

    return rule


def residual(share: float) -> Rule:
    """The cosine of the query with the passage minus `share` of its article's mean."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        m = data.vectors[rows]
        c = m.mean(axis=0)
        c /= np.linalg.norm(c)
        r = m - share * c
        return (r @ data.qvec[qi]) / np.linalg.norm(r, axis=1)

    return rule


def centred(penalty: float) -> Rule:
    """Cosines after removing the library's mean vector (from passages and query alike)."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        mu = data.vectors.mean(axis=0)
        m = data.vectors[rows] - mu
        m /= np.linalg.norm(m, axis=1, keepdims=True)
        q = data.qvec[qi] - mu
        q /= np.linalg.norm(q)
        c = m.mean(axis=0)
        return m @ q - penalty * (m @ (c / np.linalg.norm(c)))

    return rule


def keyword_bonus(penalty: float, bonus: float) -> Rule:
    """The generic-penalised score, plus `bonus` for a passage holding every keyword."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        keyword = [data.row_of[p] for p in data.queries[qi]["keyword"] if p in data.row_of]
        return cos - penalty * data.centroid_sim[rows] + bonus * np.isin(rows, keyword)

    return rule


def projected(scale: float) -> Rule:
    """The query with `scale` x its component along the article's mean direction removed:
    cos - scale x cos(query, mean) x cos(passage, mean), a penalty that grows with how much
    of the query's nearness is the article's subject as a whole."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        m = data.vectors[rows]
        c = m.mean(axis=0)
        c /= np.linalg.norm(c)
        return cos - scale * float(data.qvec[qi] @ c) * data.centroid_sim[rows]

    return rule


def windowed(penalty: float, share: float) -> Rule:
    """The generic-penalised score with the cosine replaced by (1 - share) x the passage's
    cosine + share x the best of its two-sentence windows' cosines."""

    def rule(data: Data, qi: int, rows: np.ndarray, cos: np.ndarray) -> np.ndarray:
        assert data.window_owner is not None and data.window_vectors is not None
        best = np.full(len(rows), -1.0)
        for j, r in enumerate(rows.tolist()):
            mine = data.window_vectors[data.window_owner == r]
            if len(mine):
                best[j] = float((mine @ data.qvec[qi]).max())
        mixed = (1 - share) * cos + share * best
        return mixed - penalty * data.centroid_sim[rows]

    return rule


def rules() -> dict[str, Rule | None]:
    out: dict[str, Rule | None] = {"none (fusion's pick)": None, "plain cosine": plain}
    for p in (0.3, 0.5, 0.7):
        out[f"generic {p}"] = generic(p)
    for p in (0.0, 0.5):
        for a in (0.1, 0.2, 0.3, 0.5):
            for how in ("mean", "max"):
                out[f"generic {p} + {a} x neighbours' {how}"] = smoothed(p, a, how)
    for p in (0.0, 0.5):
        for w in (0.5, 1.0):
            for src in ("any", "all"):
                out[f"generic {p} rrf + {w} x {src}-terms keyword rank"] = fused(p, w, src)
    for p in (0.4, 0.6):
        out[f"generic {p}"] = generic(p)
    for p in (0.0, 0.3, 0.5):
        for a in (0.3, 0.5, 1.0):
            out[f"generic {p}, {a} x best two-sentence window"] = windowed(p, a)
    for a in (0.5, 0.75, 1.0, 1.25, 1.5, 2.0):
        out[f"projected {a}"] = projected(a)
    for a in (0.3, 0.5, 0.7, 0.9):
        out[f"residual {a}"] = residual(a)
    for p in (0.0, 0.3, 0.5):
        out[f"library-centred, generic {p}"] = centred(p)
    for b in (0.05, 0.1, 0.2, 1.0):
        out[f"generic 0.5 + {b} if every keyword"] = keyword_bonus(0.5, b)
    return out


def study(models: list[str]) -> None:
    datas = {m: load(m) for m in models}
    _table(datas, rules(), 0.0)
    for second in (0.1, 0.25, 0.5):
        print(f"articles ranked by their best passage + {second} x their next two:")
        _table(datas, {"generic 0.5": generic(0.5)}, second)


def _table(datas: dict[str, Data], chosen: dict[str, Rule | None], second: float) -> None:
    models = list(datas)
    print(f"{'rule':55s} " + " ".join(f"{m[:6]}@{c}: tune/held " for m in models for c in CUTS))
    with_windows = all(d.window_owner is not None for d in datas.values())
    for name, rule in chosen.items():
        if "window" in name and not with_windows:
            continue
        cells = []
        for m in models:
            for cut in CUTS:
                res = evaluate(datas[m], rule, cut, second)
                t, h = (sum(res[x]) / len(res[x]) for x in ("tuning", "heldout"))
                cells.append(f"{t:.2f}/{h:.2f}")
        print(f"{name:55s} " + "          ".join(cells))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", action="store_true", help="build the cache for this model")
    parser.add_argument("--windows", action="store_true", help="embed sentence windows too")
    parser.add_argument("--models", default="minilm,mpnet")
    args = parser.parse_args()
    if args.dump:
        print(asyncio.run(dump()))
        return 0
    if args.windows:
        for model in args.models.split(","):
            print(windows(model))
        return 0
    study(args.models.split(","))
    return 0


if __name__ == "__main__":
    sys.exit(main())
