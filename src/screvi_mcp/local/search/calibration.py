"""One scale for `similarity`, whichever model found the match.

Each model scores pairs on its own scale: MiniLM gives a correct paraphrase a raw cosine of
0.25-0.50, multilingual-e5 gives almost every pair 0.75-0.85, and an English query against
a French answer lower than against a French neighbour. So each model (and, for the
multilingual model, each kind of pair: same language or across languages) carries a
logistic curve, fitted on the tuning half's candidate pairs (fit_calibration.py), giving the
chance that a match with that raw cosine is relevant. `similarity` is that chance through
one monotone map shared by every model (`similarity_of`): a hit at 0.72 is as likely to be
relevant whichever model found it, and `min_relevance` cuts every semantic hit on it.

The map: a chance of `RELEVANT_AT_DEFAULT` or more reads as 0.72 up to 1.0, linearly
(similarity 0.86 is about even odds); below it, 0 up to 0.72. `RELEVANT_AT_DEFAULT` is the
lowest chance the default `min_relevance` (0.72) keeps, fitted on the tuning half as the
strictest cut that hides no answer the uncut ranking puts in its top 3 (docs/search.md).
"""

from __future__ import annotations

import json
import logging
import math
from dataclasses import dataclass
from pathlib import Path

from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE

log = logging.getLogger("screvi_mcp.local.search")

CALIBRATION_FILE = "calibration.json"
# The chance of relevance that the default min_relevance keeps (fit_calibration.py --cut).
RELEVANT_AT_DEFAULT = 0.012


def similarity_of(chance: float) -> float:
    """The shared scale: a chance of relevance in [0, 1] as a similarity in [0, 1]."""
    if chance <= RELEVANT_AT_DEFAULT:
        return DEFAULT_MIN_RELEVANCE * chance / RELEVANT_AT_DEFAULT
    spread = (chance - RELEVANT_AT_DEFAULT) / (1.0 - RELEVANT_AT_DEFAULT)
    return DEFAULT_MIN_RELEVANCE + (1.0 - DEFAULT_MIN_RELEVANCE) * spread


def chance_of(similarity: float) -> float:
    """The inverse of `similarity_of`."""
    if similarity <= DEFAULT_MIN_RELEVANCE:
        return RELEVANT_AT_DEFAULT * similarity / DEFAULT_MIN_RELEVANCE
    spread = (similarity - DEFAULT_MIN_RELEVANCE) / (1.0 - DEFAULT_MIN_RELEVANCE)
    return RELEVANT_AT_DEFAULT + (1.0 - RELEVANT_AT_DEFAULT) * spread


@dataclass(frozen=True)
class Calibration:
    """P(relevant | raw cosine) = 1 / (1 + exp(-(bias + slope * cosine))) for one model."""

    bias: float
    slope: float

    def __post_init__(self) -> None:
        if not (math.isfinite(self.bias) and math.isfinite(self.slope)) or self.slope <= 0:
            raise ValueError("calibration needs a finite bias and a positive slope")

    def chance(self, cosine: float) -> float:
        """The chance that a match with this raw cosine is relevant."""
        logit = self.bias + self.slope * cosine
        return 1.0 / (1.0 + math.exp(-logit)) if logit > -700 else 0.0

    def similarity(self, cosine: float) -> float:
        return similarity_of(self.chance(cosine))

    def similarities(self, cosines: list[float]) -> list[float]:
        """`similarity` of each cosine, with the same float operations in the same order
        (a search calls it on up to 1,000 matches: three Python calls each cost about 0.5 ms
        at 100k). A vectorised `exp` would not be bit for bit `math.exp`."""
        bias, slope, exp = self.bias, self.slope, math.exp
        low, high = DEFAULT_MIN_RELEVANCE, 1.0 - DEFAULT_MIN_RELEVANCE
        result: list[float] = []
        for cosine in cosines:
            logit = bias + slope * cosine
            chance = 1.0 / (1.0 + exp(-logit)) if logit > -700 else 0.0
            if chance <= RELEVANT_AT_DEFAULT:
                result.append(low * chance / RELEVANT_AT_DEFAULT)
            else:
                spread = (chance - RELEVANT_AT_DEFAULT) / (1.0 - RELEVANT_AT_DEFAULT)
                result.append(low + high * spread)
        return result

    def min_cosine(self, min_relevance: float) -> float:
        """The raw cosine whose similarity is `min_relevance`: -1 (no cut) at 0, above any
        cosine at 1."""
        chance = chance_of(min(max(min_relevance, 0.0), 1.0))
        if chance <= 0.0:
            return -1.0
        if chance >= 1.0:
            return math.inf
        return (math.log(chance / (1.0 - chance)) - self.bias) / self.slope

    @classmethod
    def through(cls, cosine_at_default: float, slope: float) -> Calibration:
        """The curve whose default cut falls at `cosine_at_default`."""
        logit = math.log(RELEVANT_AT_DEFAULT / (1.0 - RELEVANT_AT_DEFAULT))
        return cls(bias=logit - slope * cosine_at_default, slope=slope)


# all-MiniLM-L6-v2 (int8): fitted on the TUNING half's candidate pairs (each query's 20 best
# matches, negatives included: 1,940 pairs, 72 relevant), fit_calibration.py. Its default
# cut falls at raw cosine 0.24, where the old per-hit floor was.
MINILM = Calibration(bias=-8.44, slope=16.69)

# A model nobody fitted: the default cut at raw cosine 0.72, the hosted service's own
# default (with a warning that it may be too strict for that model).
UNFITTED = Calibration.through(cosine_at_default=DEFAULT_MIN_RELEVANCE, slope=14.0)


class CalibrationFileError(ValueError):
    """A custom model's calibration.json that cannot be read; the message names the file."""


def calibration_for_directory(directory: Path) -> Calibration:
    """A custom model's `calibration.json` ({"bias": b, "slope": s}: its chance of relevance
    by raw cosine, as fit_calibration.py prints it) if it ships one, else `UNFITTED`.
    A file that is not valid JSON, lacks a field or holds bad values raises
    `CalibrationFileError`."""
    path = directory / CALIBRATION_FILE
    if not path.is_file():
        log.warning(
            "no %s beside the embedding model in %s: the default min_relevance=0.72 cuts at "
            "raw cosine 0.72, which may drop relevant matches",
            CALIBRATION_FILE,
            directory,
        )
        return UNFITTED
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise CalibrationFileError(f"{path} is not valid JSON ({exc})") from exc
    try:
        return Calibration(bias=float(data["bias"]), slope=float(data["slope"]))
    except KeyError as exc:
        raise CalibrationFileError(f"{path} lacks the field {exc.args[0]!r}") from exc
    except (TypeError, ValueError, AttributeError) as exc:  # a list, a string, a bad slope
        raise CalibrationFileError(f"{path} is not a usable calibration: {exc}") from exc
