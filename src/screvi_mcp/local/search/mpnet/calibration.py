"""all-mpnet-base-v2's raw cosine -> similarity map, query gate and per-hit floor.

Fitted on the TUNING half of the labelled set only (tests/local/search/fit_parameters.py's
grid and rule, widened to gates 0.30-0.55 and floors 0.10-0.35, with the cosine gate alone:
this model has no fitted judge for an uncertain band), on the labelled set as grown on
2026-11-23 (334 highlights): floor raw 0.35 <-> similarity 0.72, gate 0.48. Held-out figures
in docs/search.md ("Stronger English model"). The verifier curve (verify=true) is MiniLM's,
not fitted for this model.
"""

from __future__ import annotations

from screvi_mcp.local.search.calibration import Calibration

MPNET_CALIBRATION = Calibration(
    raw=(0.0, 0.35, 0.80, 1.0),
    calibrated=(0.0, 0.72, 0.97, 1.0),
    verifier_midpoint=0.37,
    verifier_slope=25.0,
    gate=0.48,
)
