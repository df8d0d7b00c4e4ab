"""Whether `verified_relevance` reads as a probability: reliability tables by bin (hits,
mean probability, share relevant and its 95% Wilson interval), the expected calibration
error (ECE), and the check behind keeping the judges' own output as the probability.

The check (`recalibration_check`): a map fitted on the TUNING half's verified hits, either
Platt scaling on the judge's logit (two parameters) or isotonic regression (a monotone
step map), scored by ECE on tuning and held-out. Platt scaling on a logistic judge's logit
is the judge with its weights rescaled, and a judge fitted by maximum likelihood on the
same hits is already its own Platt map (a ≈ 0, b ≈ 1): a map only earns its place if it
lowers held-out ECE.

    .venv/bin/python tests/local/search/reliability.py            # tables and the check
    .venv/bin/python tests/local/search/reliability.py --fixture  # test_verify_calibration's

`--fixture` writes the held-out half's judged pairs (each judge's features and labels) for
the attached English model (`SCREVI_ENGLISH_MODEL`) into fixtures/, where
test_verify_calibration.py reads them without a model.
"""

from __future__ import annotations

import itertools
import json
import math
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.search.registry import semantic_index_for

if TYPE_CHECKING:
    from evaluation import LabelledLibrary

EDGES = (0.0, 0.1, 0.2, 0.3, 0.5, 0.7, 0.9, 1.0001)
DEPTH = 50  # as evaluation.DEPTH: every hit of a query's first 50
FIXTURES = Path(__file__).parent / "fixtures"

Rows = list[tuple[float, bool]]  # (verified_relevance, labelled relevant)


def wilson(relevant: int, n: int, z: float = 1.96) -> tuple[float, float]:
    """The 95% Wilson score interval of a share `relevant / n` (sound for small bins)."""
    if n == 0:
        return 0.0, 1.0
    share = relevant / n
    centre = share + z * z / (2 * n)
    spread = z * math.sqrt(share * (1 - share) / n + z * z / (4 * n * n))
    scale = 1 + z * z / n
    return max((centre - spread) / scale, 0.0), min((centre + spread) / scale, 1.0)


@dataclass(frozen=True)
class Bin:
    low: float
    high: float
    n: int
    mean: float  # mean probability
    relevant: int

    @property
    def share(self) -> float:
        return self.relevant / self.n if self.n else math.nan

    @property
    def interval(self) -> tuple[float, float]:
        return wilson(self.relevant, self.n)

    @property
    def holds(self) -> bool:
        """The mean probability lies inside the share's 95% interval."""
        low, high = self.interval
        return low <= self.mean <= high


def bins(rows: Rows) -> list[Bin]:
    result = []
    for low, high in itertools.pairwise(EDGES):
        inside = [(p, r) for p, r in rows if low <= p < high]
        mean = sum(p for p, _ in inside) / len(inside) if inside else math.nan
        result.append(Bin(low, min(high, 1.0), len(inside), mean, sum(r for _, r in inside)))
    return result


def calibration_error(rows: Rows) -> float:
    """ECE: |mean probability - share relevant| per bin, weighted by the bin's hits."""
    total = sum(b.n * abs(b.mean - b.share) for b in bins(rows) if b.n)
    return total / max(len(rows), 1)


def verified_hits(labelled: LabelledLibrary, half: str) -> dict[str, Rows]:
    """The hits `verify=true` returns with a probability, by the judge that gave it:
    "english" (the English model's judge) or "multilingual" (the spread judge).

    Every query of the half (negatives included) is searched as a client would with
    `verify=true`; each returned hit that carries a `verified_relevance` is one row.
    """
    index = semantic_index_for(labelled.library)
    assert index is not None
    real_verify = index.verify
    judged_by_english: set[int] = set()

    def recording_verify(conn: Any, text: str, matches: list[Any]) -> dict[int, float]:
        verified = real_verify(conn, text, matches)
        judged_by_english.update(verified)
        return verified

    rows: dict[str, Rows] = {"english": [], "multilingual": []}
    questions = [(q.q, set(q.relevant)) for q in labelled.set.queries_by_half[half]]
    questions += [(q, set()) for q, _ in labelled.set.negatives_by_half[half]]
    index.verify = recording_verify  # type: ignore[method-assign]
    try:
        for text, relevant in questions:
            judged_by_english.clear()
            hits, _ = search(labelled.library, SearchQuery(q=text, per_page=DEPTH, verify=True))
            for hit in hits:
                if hit.verified_relevance is None:
                    continue
                side = "english" if hit.seq in judged_by_english else "multilingual"
                rows[side].append((hit.verified_relevance, labelled.key_of[hit.seq] in relevant))
    finally:
        del index.verify
    return rows


def _cell(b: Bin) -> str:
    if not b.n:
        return "0"
    low, high = b.interval
    return f"{b.n}, {b.mean:.2f}, {b.share:.2f} ({low:.2f}-{high:.2f})"


def judge_columns(by_side: dict[str, Rows], label: str = "") -> dict[str, Rows]:
    """A set's verified hits as table columns: all of them, then each judge's."""
    return {
        f"{label}all": by_side["english"] + by_side["multilingual"],
        f"{label}English judge": by_side["english"],
        f"{label}spread judge": by_side["multilingual"],
    }


def reliability_table(columns: dict[str, Rows], *, markdown: bool = False) -> str:
    """One row per bin of `verified_relevance`, one column per set of hits: hits, mean
    probability, share relevant (95% interval); a last row with each column's ECE."""
    binned = [bins(rows) for rows in columns.values()]
    body = [
        [f"{row[0].low:.1f}-{row[0].high:.1f}"] + [_cell(b) for b in row]
        for row in zip(*binned, strict=True)
    ]
    body.append(["ECE"] + [f"{calibration_error(rows):.3f}" for rows in columns.values()])
    header = ["verified_relevance", *columns]
    if markdown:
        lines = ["| " + " | ".join(header) + " |", "|" + " --- |" * len(header)]
        return "\n".join(lines + ["| " + " | ".join(cells) + " |" for cells in body])
    lines = ["  " + "  ".join(f"{cell:>28s}" for cell in cells) for cells in [header, *body]]
    return "\n".join(lines)


def verified_hits_reliability(labelled: LabelledLibrary, half: str) -> str:
    """Calibration where an agent sees it: the hits `verify=true` annotates, by bin."""
    table = reliability_table(judge_columns(verified_hits(labelled, half)))
    return f"verified hits, {labelled.set.name}, {half} (hits, mean, share relevant):\n{table}"


# --- the check: does a map fitted on tuning lower held-out ECE? ----------------------------


def _logit(p: Any) -> Any:
    p = np.clip(np.asarray(p, dtype=np.float64), 1e-6, 1 - 1e-6)
    return np.log(p / (1 - p))


def isotonic(x: Any, y: Any) -> tuple[Any, Any]:
    """Pool-adjacent-violators: the knots (x, y) of the monotone fit, for np.interp."""
    order = np.argsort(x)
    blocks: list[list[float]] = []  # [sum of labels, count, sum of x]
    for xi, yi in zip(np.asarray(x)[order], np.asarray(y, dtype=np.float64)[order], strict=True):
        blocks.append([yi, 1.0, xi])
        while len(blocks) > 1 and blocks[-2][0] / blocks[-2][1] >= blocks[-1][0] / blocks[-1][1]:
            total, count, xs = blocks.pop()
            blocks[-1] = [blocks[-1][0] + total, blocks[-1][1] + count, blocks[-1][2] + xs]
    return np.array([b[2] / b[1] for b in blocks]), np.array([b[0] / b[1] for b in blocks])


def recalibration_check(tuning: Rows, heldout: Rows) -> str:
    from screvi_mcp.local.search.judge import fit, predict

    p, y = np.array([p for p, _ in tuning]), np.array([r for _, r in tuning], dtype=np.float64)
    platt = fit(_logit(p)[:, None], y)
    knots = isotonic(p, y)
    maps = {
        "none (the judge's own)": lambda q: q,
        f"Platt a={platt.bias:.2f} b={platt.weights[0]:.2f}": lambda q: predict(
            platt, _logit(q)[:, None]
        ),
        "isotonic": lambda q: np.interp(q, *knots),
    }
    lines = ["ECE of a map fitted on tuning's verified hits: tuning, held-out"]
    for name, mapped in maps.items():
        errors = [_mapped_error(mapped, rows) for rows in (tuning, heldout)]
        lines.append(f"  {name}: {errors[0]:.3f}, {errors[1]:.3f}")
    return "\n".join(lines)


def _mapped_error(mapped: Any, rows: Rows) -> float:
    probabilities = mapped(np.array([p for p, _ in rows]))
    return calibration_error(list(zip(probabilities, [r for _, r in rows], strict=True)))


def fixture_path(model: str) -> Path:
    return FIXTURES / f"verified_pairs_heldout_{model}.json"


def write_fixture(labelled: LabelledLibrary) -> Path:
    """The held-out judged pairs of each judge, rounded, for test_verify_calibration.py."""
    from evaluation import verified_features

    from screvi_mcp.local.search.mpnet import configured

    model = configured() or "mpnet"
    sides = verified_features(labelled, "heldout")
    data = {
        side: {
            "features": [[round(float(v), 4) for v in row] for row in features],
            "labels": [int(label) for label in labels],
        }
        for side, (features, labels) in sides.items()
    }
    path = fixture_path(model)
    path.write_text(json.dumps(data, separators=(",", ":")) + "\n", encoding="utf-8")
    return path


def main() -> int:
    import evaluation
    from evaluation import labelled_library

    evaluation.CACHE_EMBEDDINGS = True
    with tempfile.TemporaryDirectory() as tmp, labelled_library(Path(tmp)) as labelled:
        if "--fixture" in sys.argv:
            print(f"wrote {write_fixture(labelled)}")
            return 0
        hits = {half: verified_hits(labelled, half) for half in ("tuning", "heldout")}
        for side in ("english", "multilingual"):
            print(f"{side} judge:")
            print(recalibration_check(hits["tuning"][side], hits["heldout"][side]))
        for half, by_side in hits.items():
            print(f"verified hits, {half}:\n{reliability_table(judge_columns(by_side))}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
