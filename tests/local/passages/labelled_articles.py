"""The shapes of the labelled set for passage search inside saved articles (issue 26).

The articles and queries themselves are in the `long_articles_*.py` modules beside this one
(written for the set: 1,000-5,000 words each, some served as PDF, some not in English);
`labelled_set.py` gathers them and splits the queries into tuning and held-out halves.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Article:
    key: str
    title: str
    author: str
    language: str
    kind: str  # "html" or "pdf"
    paragraphs: tuple[str, ...]


@dataclass(frozen=True)
class Query:
    text: str
    article: str | None  # None: a negative, nothing saved answers it
    answer: str | None  # a phrase of the answering paragraph
    kind: str  # paraphrase, exact, deep, language, negative
