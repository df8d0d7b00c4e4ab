"""all-mpnet-base-v2's raw cosine -> similarity map, query gate, per-hit floor and judge.

Fitted on the TUNING half of the labelled set only, on the set as grown on 2026-11-23 (334
highlights); held-out figures in docs/search.md ("Stronger English model").

- Floor raw 0.35 <-> similarity 0.72, gate 0.48: fit_parameters.py's grid and rule,
  widened to gates 0.30-0.55 and floors 0.10-0.35. Refitted on 2026-11-25 with this
  model's judge deciding a band below the gate (as MiniLM's does, query_gate.py), bands
  from 0.34, 0.38 and 0.42 and judge thresholds 0.2-0.5: the rule chose no band (each
  paraphrase the judge admitted came with a negative answered), and the same floor and gate.
- `MPNET_JUDGE`, the verify=true judge (judge.py's four signals from this model's own
  token vectors): `SCREVI_ENGLISH_MODEL=mpnet fit_parameters.py --judge`, 2026-11-25.
  Before it, verify=true read a logistic curve over this model's cosine: no evidence
  beyond the cosine.
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
