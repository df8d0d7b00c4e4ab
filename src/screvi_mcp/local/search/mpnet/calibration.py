"""all-mpnet-base-v2's chance of relevance by raw cosine (calibration.py) and its judge.

`MPNET_CALIBRATION` keeps the model's old per-hit floor (raw 0.35) as its default cut
until `SCREVI_ENGLISH_MODEL=mpnet tests/local/search/fit_calibration.py` fits its curve on
the tuning half (MiniLM's fitted cut landed on its old floor). `MPNET_JUDGE`, verify's
judge over this model's own token vectors, was fitted on the tuning pairs on 2026-11-25.
"""

from __future__ import annotations

from screvi_mcp.local.search.calibration import Calibration
from screvi_mcp.local.search.judge import JudgeWeights

# Chance of relevance by raw cosine (calibration.py), fitted on the tuning half's candidate
# pairs by fit_calibration.py.
MPNET_CALIBRATION = Calibration.through(cosine_at_default=0.35, slope=16.0)
# Tuning pairs (each query's 20 best candidates): AUC cosine 0.908, judge 0.943. The
# cosine's own weight comes out negative beside max-sim, which carries the same signal
# more sharply (they correlate).
MPNET_JUDGE = JudgeWeights(bias=-6.42, weights=(-2.0, 12.91, 0.66, 12.12))
