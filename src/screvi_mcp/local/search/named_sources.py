"""Questions that name a source or an author, plus a topic: "what does Emerson say about
conformity", "Seneca on wasting time", "Walden on the price of things".

Both sides miss these on their own. The keyword side wants every word in one highlight, and
Emerson's line says "nonconformist"; the embedding of the whole question is mostly about
the name, which the highlight's text never contains (source title and author are not
embedded). So search finds the source the question names, embeds the question without the
name, and ranks that source's best matches for the rest first (engine.py).

A query word names a source when it is a word of the source's author (or of its title,
typed with a capital, or typed in any case when the query holds the whole title: "walden",
"self-reliance") *and* is rare in highlight text: "time" is a word of the title
"Flour, Water, Time" but it is a topic word, not a name.
"""

from __future__ import annotations

import sqlite3
from dataclasses import dataclass

from screvi_mcp.local.search.keyword import WORD, words
from screvi_mcp.local.search.stopwords import STOPWORDS

# A title or author word that more highlights than this contain in their own text or note
# is a topic word, not a name.
_MAX_TEXT_MATCHES = 3
_MIN_NAME_LENGTH = 3
# Words that say "what did this source say about", not what about.
_QUESTION_WORDS = frozenset(
    {
        "say",
        "says",
        "said",
        "saying",
        "write",
        "writes",
        "wrote",
        "think",
        "thinks",
        "thought",
        "advice",
        "advise",
        "according",
        "quote",
        "quotes",
        "view",
        "views",
        "idea",
        "ideas",
        "tell",
        "tells",
        "told",
        "book",
        "books",
    }
)


@dataclass(frozen=True)
class NamedSource:
    name_word: str  # a query word that names the source (used as a `source` filter value)
    topic: str  # the query without the source's words


def named_source(conn: sqlite3.Connection, text: str) -> NamedSource | None:
    """The source `text` names by an author word, or by a title word written with a
    capital or as part of the whole title, if the query also asks about something else.

    A lone lower-case word of a longer title is too often a topic word ("things outside my
    control" is not about "Version Control Field Notes"); a whole title typed in lower case
    ("walden on simplicity") is a name; author names are rare words in any case.
    """
    typed = {w.lower(): w for w in WORD.findall(text)}
    query_words = words(text)
    candidates = [
        w for w in dict.fromkeys(query_words) if len(w) >= _MIN_NAME_LENGTH and w not in STOPWORDS
    ]
    if len(candidates) < 2:
        return None  # a bare name, or a bare topic: the keyword side answers those
    for name, author in _sources_mentioning(conn, candidates):
        author_words, title_words = set(words(author or "")), set(words(name or ""))
        whole_title = bool(title_words - STOPWORDS) and (title_words - STOPWORDS) <= set(
            query_words
        )
        for word in candidates:
            by_author = word in author_words
            by_title = word in title_words and (whole_title or typed.get(word, word)[:1].isupper())
            if not (by_author or by_title) or not _is_rare_in_text(conn, word):
                continue
            own = author_words | title_words
            topic = [w for w in WORD.findall(text) if w.lower() not in own]
            if not [w for w in topic if w.lower() not in STOPWORDS | _QUESTION_WORDS]:
                return None
            return NamedSource(word, " ".join(topic))
    return None


def _sources_mentioning(
    conn: sqlite3.Connection, candidates: list[str]
) -> list[tuple[str | None, str | None]]:
    """(name, author) of live sources whose title or author may contain a candidate."""
    # LIKE narrows the scan in SQL (it folds ASCII case only, so the first letter is left
    # out of the pattern); the word check in the caller is the real test.
    likes = " OR ".join("name LIKE ? OR author LIKE ?" for _ in candidates)
    patterns = [f"%{w[1:]}%" for w in candidates for _ in (0, 1)]
    rows = conn.execute(
        "SELECT name, author FROM sources WHERE deleted_at IS NULL AND type != 'self'"
        f" AND ({likes})",
        patterns,
    )
    return [(row[0], row[1]) for row in rows]


def _is_rare_in_text(conn: sqlite3.Connection, word: str) -> bool:
    match = '{content note} : "' + word.replace('"', '""') + '"'
    count = conn.execute(
        "SELECT count(*) FROM (SELECT 1 FROM highlights_fts WHERE highlights_fts MATCH ? LIMIT ?)",
        (match, _MAX_TEXT_MATCHES + 1),
    ).fetchone()[0]
    return int(count) <= _MAX_TEXT_MATCHES
