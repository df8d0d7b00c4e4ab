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
from dataclasses import dataclass, field

from screvi_mcp.local.search.connection_cache import cached
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
    """(name, author) of live sources whose title or author may contain a candidate, in
    the table's order.

    What `SELECT name, author FROM sources WHERE ... AND (name LIKE '%ord%' OR ...)` returned
    (LIKE narrowed the scan; it folds ASCII case only, so the first letter was left out of
    the pattern), less the sources with no candidate among their words, which the caller
    skips anyway. Read from the connection's cached table of sources: at 2,500 sources the
    query and tokenising its rows took 2 ms of every search's keyword side (issue 30).
    """
    table = _source_table(conn)
    patterns = [word[1:] for word in candidates]
    rows = sorted({row for word in candidates for row in table.by_word.get(word, ())})
    return [
        (source.name, source.author)
        for source in (table.sources[row] for row in rows)
        if any(p in source.folded_name or p in source.folded_author for p in patterns)
    ]


def _is_rare_in_text(conn: sqlite3.Connection, word: str) -> bool:
    table = _source_table(conn)
    rare = table.rare.get(word)
    if rare is None:
        match = '{content note} : "' + word.replace('"', '""') + '"'
        count = conn.execute(
            "SELECT count(*) FROM (SELECT 1 FROM highlights_fts WHERE highlights_fts MATCH ?"
            " LIMIT ?)",
            (match, _MAX_TEXT_MATCHES + 1),
        ).fetchone()[0]
        rare = table.rare[word] = int(count) <= _MAX_TEXT_MATCHES
    return rare


@dataclass(frozen=True)
class _Source:
    name: str | None
    author: str | None
    folded_name: str  # ASCII letters lower-cased, as LIKE compares them ("" for NULL)
    folded_author: str


@dataclass
class _SourceTable:
    """A connection's view of the live sources (connection_cache.py)."""

    sources: list[_Source]
    by_word: dict[str, list[int]]  # a title or author word -> rows of `sources` holding it
    rare: dict[str, bool] = field(default_factory=dict)  # _is_rare_in_text's answers


_ASCII_LOWER = str.maketrans("ABCDEFGHIJKLMNOPQRSTUVWXYZ", "abcdefghijklmnopqrstuvwxyz")


def _source_table(conn: sqlite3.Connection) -> _SourceTable:
    return cached(conn, "named_sources", _read_source_table)


def _read_source_table(conn: sqlite3.Connection) -> _SourceTable:
    sources: list[_Source] = []
    by_word: dict[str, list[int]] = {}
    rows = conn.execute(
        "SELECT name, author FROM sources WHERE deleted_at IS NULL AND type != 'self'"
        " ORDER BY rowid"
    )
    for name, author in rows:
        row = len(sources)
        sources.append(
            _Source(
                name,
                author,
                (name or "").translate(_ASCII_LOWER),
                (author or "").translate(_ASCII_LOWER),
            )
        )
        for word in set(words(name or "")) | set(words(author or "")):
            by_word.setdefault(word, []).append(row)
    return _SourceTable(sources, by_word)
