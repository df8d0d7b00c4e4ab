"""What text of a highlight gets embedded.

The recipe's name is part of the id stored with every vector: changing what is embedded is a
change of model as far as the index is concerned, and `reindex` picks it up.
"""

from __future__ import annotations

import hashlib

RECIPE = "content+note.v1"


def embedding_text(content: str, note: str | None) -> str:
    """The highlight's words, then the reader's note on them.

    Source title and author are left out: on the labelled set (docs/search.md) adding them
    made vectors of one book resemble each other more than their subjects, and the keyword
    side already finds highlights by title and author exactly.
    """
    text = content.strip()
    if note and note.strip():
        text += "\n" + note.strip()
    return text


def text_hash(text: str) -> str:
    return hashlib.sha1(text.encode("utf-8")).hexdigest()
