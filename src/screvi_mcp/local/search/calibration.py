"""Mapping a model's raw cosine onto the hosted service's similarity scale.

The hosted API's `min_relevance` default of 0.72 was set for its own embedding model. MiniLM
scores relevant query/highlight pairs far lower (docs/search.md has the measured numbers),
so a raw cosine compared with 0.72 would drop nearly every paraphrase match. Each model
therefore has a monotone, piecewise-linear map from raw cosine to `similarity`, anchored so
that the raw cosine separating relevant matches from noise lands on 0.72. Filtering on the
calibrated value and reporting it keeps the API's promise that every semantic hit has
`similarity >= min_relevance`, with the default meaning "probably relevant".
"""

from __future__ import annotations

import itertools
import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE

log = logging.getLogger("screvi_mcp.local.search")

CALIBRATION_FILE = "calibration.json"


@dataclass(frozen=True)
class Calibration:
    """Anchors (raw cosine -> similarity), strictly increasing; the query gate; and the
    cosine verifier's logistic curve (probability 0.5 at `verifier_midpoint`), kept for
    models that ship no judge of their own.

    `gate` is a query-level decision: when the best semantic match of a query has a raw
    cosine below it, nothing in the library is about the query and search returns no
    semantic hits at all. Hits of a query that passes the gate are kept down to the lower
    per-hit floor, `min_relevance` (0.72 by default) on the calibrated scale.
    """

    raw: tuple[float, ...]
    calibrated: tuple[float, ...]
    verifier_midpoint: float
    verifier_slope: float
    gate: float = -1.0
    # Below the gate and at or above this best cosine, the verify judge decides whether the
    # query gets semantic hits (query_gate.py); None: the cosine gate alone decides.
    uncertain_from: float | None = None
    # A match more than this (raw cosine) below the query's best match is dropped at the
    # default min_relevance and above: once a query has a clear answer, its far weaker
    # matches are noise, not paraphrases (docs/search.md, "Ranking"). None: no such cut.
    best_gap: float | None = None

    def __post_init__(self) -> None:
        if len(self.raw) != len(self.calibrated) or len(self.raw) < 2:
            raise ValueError("calibration needs matching anchor lists of two or more points")
        for values in (self.raw, self.calibrated):
            if any(b <= a for a, b in itertools.pairwise(values)):
                raise ValueError("calibration anchors must be strictly increasing")
        if self.best_gap is not None and not 0.0 <= self.best_gap <= 2.0:
            # A negative gap would drop every match, the best one included.
            raise ValueError("best_gap is a cosine distance: from 0 to 2")

    def similarity(self, cosine: float) -> float:
        return float(np.interp(cosine, self.raw, self.calibrated))

    def similarities(self, cosines: list[float]) -> list[float]:
        return [float(x) for x in np.interp(cosines, self.raw, self.calibrated)]

    def min_cosine(self, min_relevance: float) -> float:
        """The raw cosine whose similarity is `min_relevance` (the inverse map).

        0 means no threshold at all, negative cosines included.
        """
        if min_relevance <= self.calibrated[0]:
            return -1.0
        return float(np.interp(min_relevance, self.calibrated, self.raw))

    def passes_gate(self, best_cosine: float, min_relevance: float) -> bool:
        """Whether a query whose best match scores `best_cosine` gets semantic hits at all.

        The gate holds at the default `min_relevance` and above; asking for less than the
        default (the tool suggests 0.5 when results are thin) is asking for weaker matches,
        so it lifts the gate and leaves only the per-hit floor.
        """
        return not _strict(min_relevance) or best_cosine >= self.gate

    def near_best_floor(self, best_cosine: float, min_relevance: float) -> float | None:
        """The raw cosine a match needs beside a best match of `best_cosine`, or None when
        only the per-hit floor applies (no gap fitted, or a lowered `min_relevance`, which
        asks for weaker matches as it does of the gate)."""
        if self.best_gap is None or not _strict(min_relevance):
            return None
        return best_cosine - self.best_gap

    def in_uncertain_band(self, best_cosine: float, min_relevance: float) -> bool:
        """Whether a query that missed the gate is close enough to it for a second opinion."""
        return (
            self.uncertain_from is not None
            and _strict(min_relevance)
            and self.uncertain_from <= best_cosine < self.gate
        )

    def probability(self, cosine: float) -> float:
        """The default verifier's probability that a match is about the query."""
        return 1.0 / (1.0 + math.exp(-self.verifier_slope * (cosine - self.verifier_midpoint)))


def _strict(min_relevance: float) -> bool:
    """Whether the query-level rules (gate, uncertain band, near-best cut) hold: at the
    default `min_relevance` and above. Asking for less asks for weaker matches."""
    return min_relevance >= DEFAULT_MIN_RELEVANCE


# all-MiniLM-L6-v2 (int8), fitted on the TUNING half of the labelled set in tests/local/search
# by fit_parameters.py (held-out figures in docs/search.md). The gate (best match of a query
# below raw 0.40: no semantic hits, unless the judge vouches for one of its best matches when
# the best is 0.28 or more) is what keeps negatives empty; the per-hit floor, raw 0.24 <->
# similarity 0.72 (refitted on the grown tuning half on 2026-11-23; 0.20 before), lets a
# query that passed the gate keep its weaker paraphrase matches, down to 0.20 below its best
# match (`best_gap`, fitted on 2026-11-25: the smallest gap that loses no relevant tuning
# highlight from the first 20 results; it drops half the unrelated ones). The verifier
# curve is the old in-sample logistic fit on the raw cosine, used only by a model without
# a judge.
MINILM = Calibration(
    raw=(0.0, 0.24, 0.80, 1.0),
    calibrated=(0.0, 0.72, 0.97, 1.0),
    verifier_midpoint=0.37,
    verifier_slope=25.0,
    gate=0.40,
    uncertain_from=0.28,
    best_gap=0.20,
)

# A model we know nothing about: similarity is its raw cosine, the verifier a soft step at
# the hosted default.
# (Negative cosines clamp to 0: the API's similarity runs from 0 to 1.)
IDENTITY = Calibration(
    raw=(0.0, 1.0), calibrated=(0.0, 1.0), verifier_midpoint=0.72, verifier_slope=14.0
)


class CalibrationFileError(ValueError):
    """A custom model's calibration.json that cannot be read; the message names the file."""


def calibration_for_directory(directory: Path) -> Calibration:
    """A custom model's `calibration.json` if it ships one, otherwise the identity map.

    The file holds {"raw": [...], "calibrated": [...], "verifier_midpoint": x,
    "verifier_slope": y, "gate": g, "uncertain_from": u, "best_gap": d}, the same fields as
    `Calibration` ("gate", "uncertain_from" and "best_gap" optional). A file that is not
    valid JSON, lacks a field or holds bad values raises `CalibrationFileError`.
    """
    path = directory / CALIBRATION_FILE
    if not path.is_file():
        log.warning(
            "no %s beside the embedding model in %s: similarity is the raw cosine, so the "
            "default min_relevance=0.72 may drop relevant matches",
            CALIBRATION_FILE,
            directory,
        )
        return IDENTITY
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationFileError(f"{path} is not valid JSON ({exc})") from exc
    try:
        return Calibration(
            raw=tuple(float(x) for x in data["raw"]),
            calibrated=tuple(float(x) for x in data["calibrated"]),
            verifier_midpoint=float(data["verifier_midpoint"]),
            verifier_slope=float(data["verifier_slope"]),
            gate=float(data.get("gate", -1.0)),
            uncertain_from=(
                float(data["uncertain_from"]) if data.get("uncertain_from") is not None else None
            ),
            best_gap=float(data["best_gap"]) if data.get("best_gap") is not None else None,
        )
    except KeyError as exc:
        raise CalibrationFileError(f"{path} lacks the field {exc.args[0]!r}") from exc
    except (TypeError, ValueError, AttributeError) as exc:  # a list, a string, bad anchors
        raise CalibrationFileError(f"{path} is not a usable calibration: {exc}") from exc
