"""A custom model's calibration.json: every field read, the optional ones optional."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from screvi_mcp.local.search.calibration import IDENTITY, calibration_for_directory


def _write(directory: Path, **fields: object) -> None:
    base = {"raw": [0.0, 0.3, 1.0], "calibrated": [0.0, 0.72, 1.0]}
    base |= {"verifier_midpoint": 0.4, "verifier_slope": 20.0}
    (directory / "calibration.json").write_text(json.dumps(base | fields), encoding="utf-8")


def test_every_field_is_read(tmp_path: Path) -> None:
    _write(tmp_path, gate=0.45, uncertain_from=0.33, best_gap=0.15)
    calibration = calibration_for_directory(tmp_path)
    assert calibration.raw == (0.0, 0.3, 1.0) and calibration.calibrated == (0.0, 0.72, 1.0)
    assert calibration.gate == 0.45 and calibration.uncertain_from == 0.33
    assert calibration.best_gap == 0.15
    assert calibration.near_best_floor(0.6, 0.72) == 0.6 - 0.15
    assert calibration.near_best_floor(0.6, 0.5) is None  # a lowered min_relevance: no cut


def test_the_optional_fields_default_to_no_gate_no_band_no_cut(tmp_path: Path) -> None:
    _write(tmp_path)
    calibration = calibration_for_directory(tmp_path)
    assert calibration.gate == -1.0 and calibration.uncertain_from is None
    assert calibration.best_gap is None and calibration.near_best_floor(0.9, 0.72) is None


def test_without_a_file_similarity_is_the_raw_cosine(tmp_path: Path) -> None:
    assert calibration_for_directory(tmp_path) is IDENTITY


def test_a_negative_gap_is_refused_rather_than_emptying_every_search(tmp_path: Path) -> None:
    _write(tmp_path, best_gap=-0.1)
    with pytest.raises(ValueError, match="best_gap"):
        calibration_for_directory(tmp_path)
