"""Unrelated highlights to grow the labelled library: does quality hold in a bigger library?

The labelled set holds 334 highlights; a reader's library holds thousands. Its gates are
fitted at 334, and a bigger library gives every query more chances of a near match. These
distractors are prose paragraphs from the docstrings of Python's own standard library (read
with `ast`, nothing imported): real English sentences, on hand offline, the same on every
machine with the same Python, and about programming, a subject no labelled query asks about
except the code-identifier ones (`evaluation.py --distractors` prints any distractor that
reaches a positive query's top 3, so a doubtful label shows).

They are off-domain: they test how the gates and the ranking behave as the library grows,
not how a bigger library of book highlights would. Only English: the multilingual side's
per-group gates see no new rows.
"""

from __future__ import annotations

import ast
import functools
import random
import re
import sysconfig
from pathlib import Path

# Paragraph bounds: a highlight-sized passage, neither a one-liner nor a page.
MIN_WORDS, MAX_WORDS = 12, 80
SKIPPED_PARTS = ("test", "tests", "idlelib", "site-packages", "lib2to3")


def _is_prose(text: str) -> bool:
    if not MIN_WORDS <= len(text.split()) <= MAX_WORDS or not text.endswith("."):
        return False
    if ">>>" in text or "::" in text or "|" in text:  # examples, reST directives, tables
        return False
    letters = sum(c.isalpha() or c.isspace() for c in text)
    return letters / len(text) >= 0.9


def _docstrings(path: Path) -> list[str]:
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"))
    except (SyntaxError, UnicodeDecodeError, ValueError):
        return []
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    found = [ast.get_docstring(node) for node in ast.walk(tree) if isinstance(node, kinds)]
    return [doc for doc in found if doc]


@functools.cache
def _all_paragraphs() -> tuple[str, ...]:
    """Every prose paragraph of the standard library's docstrings, sorted (about 2 s)."""
    root = Path(sysconfig.get_paths()["stdlib"])
    paragraphs: set[str] = set()
    for path in sorted(root.rglob("*.py")):
        if any(part in SKIPPED_PARTS for part in path.relative_to(root).parts):
            continue
        for doc in _docstrings(path):
            for block in re.split(r"\n\s*\n", doc):
                text = " ".join(block.split())
                if _is_prose(text):
                    paragraphs.add(text)
    return tuple(sorted(paragraphs))


def distractor_paragraphs(count: int, seed: int = 7) -> list[str]:
    """`count` distinct prose paragraphs from the standard library's docstrings, in a
    seeded order (the same list for the same Python and seed)."""
    ordered = list(_all_paragraphs())
    random.Random(seed).shuffle(ordered)
    if count > len(ordered):
        raise ValueError(f"only {len(ordered)} distractor paragraphs on this Python")
    return ordered[:count]
