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

MPNET_CALIBRATION = Calibration(
    raw=(0.0, 0.35, 0.80, 1.0),
    calibrated=(0.0, 0.72, 0.97, 1.0),
    # The cosine curve of verify=true before MPNET_JUDGE; no longer read for this model.
    verifier_midpoint=0.37,
    verifier_slope=25.0,
    gate=0.48,
    # No cut near the best match (fit_parameters.py --best-gap, 2026-11-25): above its floor
    # mpnet leaves 1.3 unlabelled results per tuning query, and every gap tried, up to
    # 0.30, dropped a relevant one.
    best_gap=None,
)
# Tuning pairs (each query's 20 best candidates): AUC cosine 0.908, judge 0.943. The
# cosine's own weight comes out negative beside max-sim, which carries the same signal
# more sharply (they correlate). verify=true keeps a match judged at least `threshold`:
# the rule chose the lowest cut tried, every higher one lost answers on the tuning half.
MPNET_JUDGE = JudgeWeights(bias=-6.42, weights=(-2.0, 12.91, 0.66, 12.12), threshold=0.02)
