"""The unrelated highlights `evaluation.py --distractors` adds: prose, English, repeatable."""

from __future__ import annotations

from distractors import MAX_WORDS, MIN_WORDS, distractor_paragraphs
from labelled_set import PASSAGES

from screvi_mcp.local.search.language import is_english


def test_distractors_are_distinct_english_prose_the_same_on_every_call() -> None:
    first = distractor_paragraphs(300)
    assert first == distractor_paragraphs(300)  # the same library on every run
    assert len(set(first)) == 300
    for text in first:
        assert MIN_WORDS <= len(text.split()) <= MAX_WORDS and text.endswith(".")
        assert ">>>" not in text and "::" not in text
        assert is_english(text)  # they grow MiniLM's side, not the multilingual groups
    assert not set(first) & {p.content for p in PASSAGES}


def test_another_seed_gives_another_order() -> None:
    assert distractor_paragraphs(50, seed=1) != distractor_paragraphs(50, seed=2)
