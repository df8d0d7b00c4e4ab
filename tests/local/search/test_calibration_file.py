"""One scale for `similarity`: each model's curve, the shared map, and a custom model's
calibration.json."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from screvi_mcp.contract import DEFAULT_MIN_RELEVANCE
from screvi_mcp.local.search.calibration import (
    MINILM,
    UNFITTED,
    Calibration,
    calibration_for_directory,
)


def test_the_default_cut_means_the_same_chance_of_relevance_for_every_model() -> None:
    from screvi_mcp.local.search.multilingual_index import MULTILINGUAL_CROSS, MULTILINGUAL_SAME

    for curve in (MINILM, MULTILINGUAL_SAME, MULTILINGUAL_CROSS, UNFITTED):
        at_cut = curve.min_cosine(DEFAULT_MIN_RELEVANCE)
        assert curve.similarity(at_cut) == pytest.approx(DEFAULT_MIN_RELEVANCE)
        assert curve.chance(at_cut) == pytest.approx(MINILM.chance(MINILM.min_cosine(0.72)))
    # Each model's raw cosines are its own: MiniLM's cut sits where its old floor was, the
    # multilingual model's far higher, and lower across languages than within one.
    assert MINILM.min_cosine(0.72) == pytest.approx(0.24, abs=0.01)
    assert MULTILINGUAL_SAME.min_cosine(0.72) > 0.75 and MULTILINGUAL_CROSS.min_cosine(0.72) > 0.75


def test_similarity_rises_with_the_cosine_from_0_to_1_and_the_cut_inverts_it() -> None:
    cosines = [-0.5, 0.0, 0.1, 0.24, 0.4, 0.6, 0.9, 1.0]
    values = MINILM.similarities(cosines)
    assert values == sorted(values) and values[0] >= 0.0 and values[-1] <= 1.0
    for min_relevance in (0.3, 0.72, 0.8, 0.95):
        assert MINILM.similarity(MINILM.min_cosine(min_relevance)) == pytest.approx(min_relevance)
    assert MINILM.min_cosine(0.0) == -1.0  # no cut at all
    assert MINILM.min_cosine(1.0) > 1.0  # nothing is certain


def test_a_calibration_file_is_read(tmp_path: Path) -> None:
    (tmp_path / "calibration.json").write_text(json.dumps({"bias": -6.0, "slope": 12.5}))
    assert calibration_for_directory(tmp_path) == Calibration(bias=-6.0, slope=12.5)


def test_without_a_file_the_default_cut_is_the_raw_cosine_072(tmp_path: Path) -> None:
    assert calibration_for_directory(tmp_path) is UNFITTED
    assert UNFITTED.min_cosine(DEFAULT_MIN_RELEVANCE) == pytest.approx(0.72)


def test_a_slope_that_would_invert_the_scale_is_refused(tmp_path: Path) -> None:
    (tmp_path / "calibration.json").write_text(json.dumps({"bias": 1.0, "slope": -3.0}))
    with pytest.raises(ValueError, match="slope"):
        calibration_for_directory(tmp_path)
