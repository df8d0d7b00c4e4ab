"""all-mpnet-base-v2's chance of relevance by raw cosine (calibration.py) and its judge.

`MPNET_CALIBRATION`: fitted on the tuning half's candidate pairs by
`SCREVI_ENGLISH_MODEL=mpnet tests/local/search/fit_calibration.py --curves` (1,940 pairs,
72 relevant, AUC of the cosine 0.945 against MiniLM's 0.901), with the int8 model of
converter v1; its default cut falls at raw cosine 0.26. `MPNET_JUDGE`, verify's judge over
this model's own token vectors, was fitted on the tuning pairs on 2026-11-25.
"""

from __future__ import annotations

from screvi_mcp.local.search.calibration import Calibration
from screvi_mcp.local.search.judge import JudgeWeights

MPNET_CALIBRATION = Calibration(bias=-9.25, slope=18.31)
# Tuning pairs (each query's 20 best candidates): AUC cosine 0.908, judge 0.943. The
# cosine's own weight comes out negative beside max-sim, which carries the same signal
# more sharply (they correlate).
MPNET_JUDGE = JudgeWeights(bias=-6.42, weights=(-2.0, 12.91, 0.66, 12.12))
