"""all-mpnet-base-v2's chance of relevance by raw cosine (calibration.py) and its judge.

`MPNET_CALIBRATION`: fitted on the tuning half's candidate pairs by
`SCREVI_ENGLISH_MODEL=mpnet tests/local/search/fit_calibration.py --curves` (1,940 pairs,
72 relevant, AUC of the cosine 0.947 against MiniLM's 0.901), with the int8 model of
converter v2 (v1 gave -9.25, 18.31); its default cut falls at raw cosine 0.26. `MPNET_JUDGE`,
verify's judge over this model's cosines and the token vectors of the bundled MiniLM's
first 3 layers (judge_tokens.py: a sixth of mpnet's CPU, and the same whatever a text is
judged beside), fitted on the matches verify judges for tuning queries
(`fit_calibration.py --judge`: 617 hits, 70 relevant), so that its probability is
calibrated where an agent reads it (held-out reliability: docs/search.md). Over mpnet's own
token vectors it was -6.29, (2.42, 9.80, 0.71, 10.81); over all 6 of MiniLM's layers -5.61,
(7.37, 4.05, 0.79, 11.12).
"""

from __future__ import annotations

from screvi_mcp.local.search.calibration import Calibration
from screvi_mcp.local.search.judge import JudgeWeights

MPNET_CALIBRATION = Calibration(bias=-9.23, slope=18.30)
MPNET_JUDGE = JudgeWeights(bias=-6.3, weights=(8.77, 3.53, 1.16, 11.09), token_layers=3)
