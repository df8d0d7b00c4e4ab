"""Issue 11's ranking rules, each with a small case that fails without the rule."""

from __future__ import annotations

import pytest
from search_rows import LibraryRows

from screvi_mcp.local.search.engine import SearchQuery, search
from screvi_mcp.local.storage.library import Library


def seqs(library: Library, q: str, **kwargs: object) -> list[int]:
    hits, _ = search(library, SearchQuery(q=q, **kwargs))  # type: ignore[arg-type]
    return [hit.seq for hit in hits]


# --- tag names are searchable text ------------------------------------------------------


def test_a_tag_name_finds_highlights_whose_words_never_say_it(
    library: Library, rows: LibraryRows
) -> None:
    tagged = rows.highlight(
        "Men are disturbed not by things, but by their views of them.", tags=["Stoicism"]
    )
    rows.highlight("An untagged line about things and views.")
    assert seqs(library, "stoicism") == [tagged]


def test_tag_changes_keep_the_keyword_index_in_sync(library: Library, rows: LibraryRows) -> None:
    seq = rows.highlight("Own fewer things.", tags=["minimalism"])
    with library.write() as conn:
        conn.execute("UPDATE tags SET name = 'frugality', name_key = 'frugality'")
    assert seqs(library, "minimalism") == []
    assert seqs(library, "frugality") == [seq]
    with library.write() as conn:
        conn.execute("DELETE FROM highlight_tags")
    assert seqs(library, "frugality") == []
    assert seqs(library, "fewer things") == [seq]  # the highlight itself is still indexed
    other = rows.highlight("Pack half the clothes.", tags=["travel"])
    with library.write() as conn:
        conn.execute("DELETE FROM tags WHERE name_key = 'travel'")  # link rows cascade
    assert seqs(library, "travel") == []
    assert seqs(library, "clothes") == [other]


# --- a query naming a source or author plus a topic -------------------------------------


def test_named_source_detection(library: Library, rows: LibraryRows) -> None:
    from screvi_mcp.local.search.named_sources import named_source

    rows.source("Self-Reliance", "book", "Ralph Waldo Emerson")
    rows.source("Version Control Field Notes", "article", "Tamsin Okafor-Lunde")
    conn = library.connection()
    found = named_source(conn, "what does Emerson say about conformity")
    assert found is not None and found.name_word == "emerson"
    assert "Emerson" not in found.topic and "conformity" in found.topic
    # A lower-case title word is a topic word; a bare name is left to the keyword side.
    assert named_source(conn, "things outside my control") is None
    assert named_source(conn, "Emerson") is None
    found = named_source(conn, "Field Notes on merging")
    assert found is not None and found.name_word in {"field", "notes"}


def test_a_whole_title_typed_in_lower_case_names_its_source(
    library: Library, rows: LibraryRows
) -> None:
    from screvi_mcp.local.search.named_sources import named_source

    rows.source("Walden", "book", "Henry David Thoreau")
    rows.source("Self-Reliance", "book", "Ralph Waldo Emerson")
    rows.source("Version Control Field Notes", "article", "Tamsin Okafor-Lunde")
    conn = library.connection()
    found = named_source(conn, "walden on the price of things")
    assert found is not None and found.name_word == "walden"
    assert found.topic == "on the price of things"
    found = named_source(conn, "self-reliance on conformity")
    assert found is not None and found.name_word in {"self", "reliance"}
    # One lower-case word of a longer title is still a topic word.
    assert named_source(conn, "things outside my control") is None
    assert named_source(conn, "field notes on merging") is None


def test_a_named_author_ranks_their_matching_highlight_first(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import engine

    emerson = rows.source("Self-Reliance", "book", "Ralph Waldo Emerson")
    other = rows.source("Crowds", "book", "Imke Valdersee")
    mine = rows.highlight(
        "Whoso would be a man must be a nonconformist. Nothing is at last sacred but the "
        "integrity of your own mind.",
        emerson,
    )
    his = {
        mine,
        rows.highlight("Trust thyself: every heart vibrates to that iron string.", emerson),
        rows.highlight("A foolish consistency is the hobgoblin of little minds.", emerson),
    }
    rows.highlight("Social conformity makes people agree with a group they know is wrong.", other)
    rows.highlight("Peer pressure to conform is strongest among teenagers.", other)
    q = "what does Emerson say about conformity"
    found = seqs(semantic_library, q)
    assert found[0] in his and mine in found[:3]
    monkeypatch.setattr(engine, "NAMED_SOURCE_LEAD", 0)
    assert seqs(semantic_library, q)[0] not in his  # without the rule another source leads


# --- long highlights are embedded whole ---------------------------------------------------

_GARDEN_DIARY = " ".join(
    f"In week {week} of the year the diary notes the {crop} beds, the rain gauge, the slugs"
    f" on the {crop}, the compost heap and which seeds were sown in the cold frame."
    for week, crop in enumerate(
        [
            "potato",
            "onion",
            "carrot",
            "lettuce",
            "bean",
            "pea",
            "leek",
            "cabbage",
            "radish",
            "beetroot",
            "spinach",
            "chard",
        ],
        start=1,
    )
)
_LATE_DETAIL = (
    " At the very end the diary records that the lighthouse lamp went out for forty minutes"
    " because the keeper on watch had fallen asleep, and a schooner was wrecked on the reef."
)


def test_a_detail_after_token_256_is_found_by_meaning(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import embedder as embedder_module
    from screvi_mcp.local.search.embedder import load_embedder

    text = _GARDEN_DIARY + _LATE_DETAIL
    model = load_embedder()
    assert len(model._tokenizer.encode(text).overflowing) >= 1  # really longer than 256
    q = "the lighthouse keeper fell asleep and the lamp went out"
    query = model.embed([q])[0]
    whole = float(model.embed([text])[0] @ query)
    monkeypatch.setattr(embedder_module, "MAX_WINDOWS", 1)
    cut = float(model.embed([text])[0] @ query)
    monkeypatch.undo()
    assert whole > cut + 0.1, (whole, cut)

    long_seq = rows.highlight(text)
    rows.highlight("Lighthouses were painted in stripes so sailors could tell them apart by day.")
    rows.highlight("Keep a torch by the bed in case the power goes out.")
    rows.highlight("Sleep comes easier in a cool, dark room.")
    assert seqs(semantic_library, q)[:1] == [long_seq]


# --- morphological variants ---------------------------------------------------------------


def test_variants_match_when_the_exact_stem_matches_nothing(
    library: Library, rows: LibraryRows
) -> None:
    thoreau = rows.highlight("Our life is frittered away by detail. Simplicity, simplicity!")
    emerson = rows.highlight("Whoso would be a man must be a nonconformist.")
    # porter: simply -> simpli, simplicity -> simplic; the shared prefix joins them
    assert seqs(library, "simply") == [thoreau]
    assert seqs(library, "conformist") == []  # a prefix, not any substring
    plain = rows.highlight("Put simply, write less.")
    # An exact stem match exists now, so the looser variants are not added.
    assert seqs(library, "simply") == [plain]
    assert emerson not in seqs(library, "simply")


def test_a_five_letter_word_matches_the_words_it_begins_when_nothing_matches_it_exactly(
    library: Library, rows: LibraryRows
) -> None:
    # porter keeps "stoicism" whole, so "stoic" met only an exact "stoic" before.
    tagged = rows.highlight(
        "Men are disturbed not by things, but by their views of them.", tags=["Stoicism"]
    )
    rows.highlight("The Stoa was a painted porch in Athens.")
    assert seqs(library, "stoic") == [tagged]
    assert seqs(library, "stoa") != seqs(library, "stoi") == []  # 4 letters: no prefix
    stoic = rows.highlight("The stoic sage is unmoved by fortune.")
    assert seqs(library, "stoic") == [stoic]  # an exact match leaves the variants out


# --- relevance decided per query: the gate ----------------------------------------------------


def test_a_query_nothing_is_about_gets_no_semantic_hits_unless_asked_for_less(
    semantic_library: Library, rows: LibraryRows
) -> None:
    rows.highlight("Water tomatoes at the base in the morning; wet leaves invite blight.")
    rows.highlight("The Perseids peak in mid August; lie flat and look away from the radiant.")
    rows.highlight("Pay the minimum on every loan and the most on the dearest one.")
    q = "how to replace a bicycle brake cable"
    assert seqs(semantic_library, q) == []  # default: the best match is too weak
    assert seqs(semantic_library, q, min_relevance=0.0) != []  # every threshold off
    # A query something is about passes the gate and keeps its weaker matches too.
    found = seqs(semantic_library, "when should I water my tomato plants", min_relevance=0.72)
    assert found and len(found) >= 1


def test_the_gate_is_what_empties_a_near_miss(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from screvi_mcp.local.search.registry import semantic_index_for

    # Near topics (raw cosines 0.27-0.29 to the query): above the per-hit floor, below the gate.
    rows.highlight("Hedges are best trimmed after the birds have finished nesting.")
    rows.highlight("Cherry blossom lasts barely a week in April.")
    q = "pruning apple trees in summer"
    assert seqs(semantic_library, q) == []
    index = semantic_index_for(semantic_library)
    no_gate = dataclasses.replace(index.calibration, gate=-1.0)  # type: ignore[union-attr]
    monkeypatch.setattr(index, "calibration", no_gate)
    assert seqs(semantic_library, q) != []  # the per-hit floor alone lets the roses in


# --- a clear answer keeps only the matches near it --------------------------------------------


def test_matches_far_below_a_clear_answer_are_dropped_unless_asked_for_less(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from screvi_mcp.local.search.registry import semantic_index_for

    answer = rows.highlight("Water tomatoes at the base in the morning; wet leaves invite blight.")
    weaker = rows.highlight("Rain barrels save the tap water for the dry weeks of July.")
    rows.highlight("Pay the minimum on every loan and the most on the dearest one.")
    q = "when should I water my tomato plants"
    index = semantic_index_for(semantic_library)
    assert index is not None
    calibration = index.calibration  # type: ignore[attr-defined]
    cosines = {
        m.seq: m.cosine
        for m in index.semantic_ranking(
            semantic_library.connection(), q, SearchQuery(q=q).filters(), 0.0, 5
        )
    }
    # The premise: the weaker match (about 0.31 against 0.61) clears the per-hit floor and
    # sits more than the gap below the answer, so only the gap can drop it.
    assert cosines[weaker] >= calibration.min_cosine(SearchQuery(q=q).min_relevance)
    assert cosines[answer] - cosines[weaker] > calibration.best_gap
    assert seqs(semantic_library, q) == [answer]
    assert weaker in seqs(semantic_library, q, min_relevance=0.5)  # asking for less
    monkeypatch.setattr(index, "calibration", dataclasses.replace(calibration, best_gap=None))
    assert seqs(semantic_library, q) == [answer, weaker]  # the per-hit floor alone keeps it


# --- a name the model has no word for is found by its letters, not its look-alikes ------------


def test_a_name_the_model_cannot_read_keeps_only_what_the_keyword_side_found(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search.registry import semantic_index_for

    named = rows.highlight(
        "We moored at Vassbotten for the night and walked up to the old boathouse."
    )
    look_alike = rows.highlight("Een goede omelet begint met een hete pan en koude boter.")
    rows.highlight("Water tomatoes at the base in the morning; wet leaves invite blight.")
    index = semantic_index_for(semantic_library)
    assert index is not None
    assert index.is_unknown_name("Vassbotten") and index.is_unknown_name("Tarrow Bay")
    # Names the model has a word for, and topics, are left to the usual rules: a word in
    # lower case, a Title Case sentence, a hyphen between known words.
    assert not index.is_unknown_name("Lisbon")
    assert not index.is_unknown_name("Vassbotten harbour")
    assert not index.is_unknown_name("Harbours Of Vassbotten")  # a function word: a topic
    assert not index.is_unknown_name("Where Vassbotten Boats Moor Overnight")  # too long
    assert not index.is_unknown_name("Self-Control")
    assert seqs(semantic_library, "Vassbotten") == [named]
    # A query the multilingual model ranks keeps its semantic matches: that model reads
    # names in its languages, where MiniLM sees only word pieces.
    from screvi_mcp.local.search.engine import reads_as_unknown_name

    assert reads_as_unknown_name(index, "Vassbotten")
    assert index.is_unknown_name("Москва")
    assert not reads_as_unknown_name(index, "Москва")
    monkeypatch.setattr(index, "is_unknown_name", lambda text: False)
    # The premise: without the rule MiniLM's spelling match brings the Dutch omelet along.
    assert seqs(semantic_library, "Vassbotten") == [named, look_alike]


# --- just below the gate, the judge decides ----------------------------------------------------

_DISCIPLINE = (
    "People who seem disciplined mostly arrange their surroundings so temptation never shows "
    "up; the biscuits are simply not in the house."
)


def test_the_judge_admits_a_paraphrase_whose_best_cosine_misses_the_gate(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    import dataclasses

    from screvi_mcp.local.search.engine import semantic_side
    from screvi_mcp.local.search.registry import semantic_index_for

    answer = rows.highlight(_DISCIPLINE)
    rows.highlight("Water tomatoes at the base in the morning; wet leaves invite blight.")
    rows.highlight("Pay the minimum on every loan and the most on the dearest one.")
    q = "self-control is mostly about designing your surroundings"
    index = semantic_index_for(semantic_library)
    assert index is not None
    calibration = index.calibration  # type: ignore[attr-defined]
    matches = index.semantic_ranking(
        semantic_library.connection(), q, SearchQuery(q=q).filters(), 0.0, 5
    )
    # The paraphrase's best cosine (about 0.35) is below the gate, inside the uncertain band.
    assert calibration.uncertain_from <= matches[0].cosine < calibration.gate
    assert [m.seq for m in semantic_side(semantic_library, SearchQuery(q=q))][:1] == [answer]
    assert seqs(semantic_library, q)[:1] == [answer]
    cosine_gate_only = dataclasses.replace(calibration, uncertain_from=None)
    monkeypatch.setattr(index, "calibration", cosine_gate_only)
    assert seqs(semantic_library, q) == []  # without the judge the gate hides it


def test_the_judge_in_the_band_still_empties_a_near_miss(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search.registry import semantic_index_for

    rows.highlight("Hedges are best trimmed after the birds have finished nesting.")
    rows.highlight("Cherry blossom lasts barely a week in April.")
    rows.highlight("Water tomatoes at the base in the morning; wet leaves invite blight.")
    q = "pruning apple trees in summer"
    index = semantic_index_for(semantic_library)
    assert index is not None
    judged: list[float] = []
    real = index.verify

    def spy(conn: object, text: str, matches: list[object]) -> dict[int, float]:
        result = real(conn, text, matches)  # type: ignore[arg-type]
        judged.extend(result.values())
        return result

    monkeypatch.setattr(index, "verify", spy)
    assert seqs(semantic_library, q) == []
    # The best cosine was in the band, so the judge read the best few and found none relevant.
    assert judged and max(judged) < index.verifier.gate_threshold  # type: ignore[attr-defined]


# --- capitals on every word say nothing ------------------------------------------------------


def test_title_case_and_capitals_are_searched_in_lower_case_but_names_keep_theirs() -> None:
    from screvi_mcp.local.search.language import case_normalised

    assert case_normalised("How Do I Keep Bread Fresh") == "how do i keep bread fresh"
    assert case_normalised("HOW DO I KEEP BREAD FRESH") == "how do i keep bread fresh"
    assert case_normalised("Comment Éviter Les Blessures") == "comment éviter les blessures"
    # Running text, a lone word and a name keep their capitals: there they mean something.
    for kept in ("what does Emerson say about conformity", "Lisbon", "Tarrow Bay", "NASA"):
        assert case_normalised(kept) == kept


def test_a_query_in_title_case_finds_what_it_finds_in_lower_case(
    semantic_library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import engine

    baking = rows.source("Bread Notes", "podcast", "Ruben Aldecoa")
    rows.highlight("Feed the starter twice a day and keep it somewhere warm.", baking)
    rows.highlight("A long cold proof in the fridge gives the loaf a deeper flavour.", baking)
    linen = rows.highlight(
        "Wrap the loaf in a linen cloth and keep bread fresh for days without a freezer."
    )
    rows.highlight("Tomatoes keep their flavour best out of the fridge.")
    lower = seqs(semantic_library, "how do i keep bread fresh")
    assert lower[0] == linen
    assert seqs(semantic_library, "How Do I Keep Bread Fresh") == lower
    assert seqs(semantic_library, "HOW DO I KEEP BREAD FRESH") == lower
    # Without the rule the capital on "Bread" reads as the title of "Bread Notes", whose
    # starter and proofing highlights then lead.
    monkeypatch.setattr(engine, "searched_text", lambda text: text)
    assert seqs(semantic_library, "How Do I Keep Bread Fresh")[0] != linen


# --- words that only ask for the reader's items are not searched -------------------------


def test_the_words_that_frame_a_topic_are_dropped_and_nothing_else() -> None:
    from screvi_mcp.local.search.query_text import searched_text

    for framed in (
        "what did I save about stoicism?",
        "highlights about stoicism",
        "show me all quotes I saved about stoicism",
        "do I have any highlights on stoicism",
        "anything in my library on stoicism",
        "search for stoicism",
        "stoicism quotes",
        "Highlights About Stoicism",
    ):
        assert searched_text(framed) == "stoicism", framed
    # Topics that merely start or end like a frame, and titles, are searched whole.
    for whole in (
        "how to save money",
        "what I learned about failure",
        "find your position at sea",
        "lines of longitude",
        "reading notes",
        "my notes",
        "Notes on Building Software",
        "what does Emerson say about conformity",
    ):
        assert searched_text(whole) == whole, whole
    assert searched_text("highlights about") == "highlights about"  # only a frame: kept


def test_a_framed_question_finds_what_its_topic_finds(
    library: Library, rows: LibraryRows, monkeypatch: pytest.MonkeyPatch
) -> None:
    from screvi_mcp.local.search import engine
    from screvi_mcp.local.search.language import case_normalised

    tagged = rows.highlight(
        "Men are disturbed not by things, but by their views of them.", tags=["Stoicism"]
    )
    rows.highlight("Save a little every month and the habit does the rest.")
    q = "what did I save about stoicism?"
    assert seqs(library, q) == seqs(library, "stoicism") == [tagged]
    # Without the rule the keyword side wants "save" in the highlight too.
    monkeypatch.setattr(engine, "searched_text", case_normalised)
    assert seqs(library, q) != [tagged]
