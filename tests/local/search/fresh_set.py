"""The blind labelled set (`labelled_fresh.py`) as a `LabelledSet` evaluation.py can score.

Why a second set: every threshold of search was fitted on the main set's tuning half, and
its held-out half has been read while exploring (docs/search.md says where). The fresh set
was written on 2026-11-25 by someone who had seen neither the main set nor the search rules,
and it lives in a library of its own, with other subjects and another mix of highlights. It
has one half, `fresh`: nothing is ever fitted on it, so its figures are the closest this
project has to the check a new reader's library makes.

    .venv/bin/python tests/local/search/evaluation.py --set fresh
"""

from __future__ import annotations

from labelled_fresh import FRESH_NEGATIVES, FRESH_PASSAGES, FRESH_QUERIES, FRESH_SOURCES
from labelled_set import LabelledQuery, LabelledSet, Passage, Source

FRESH_HALF = "fresh"

FRESH = LabelledSet(
    name="fresh blind set",
    sources=[Source(*row) for row in FRESH_SOURCES],
    passages=[
        Passage(key, source, content, note, tags)
        for key, source, content, note, tags in FRESH_PASSAGES
    ],
    queries_by_half={
        FRESH_HALF: [LabelledQuery(q, kind, relevant) for q, kind, relevant in FRESH_QUERIES]
    },
    negatives_by_half={FRESH_HALF: list(FRESH_NEGATIVES)},
)
