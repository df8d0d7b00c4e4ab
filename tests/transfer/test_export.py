"""Exports: Markdown notes updated in place, Readwise CSV round trip, JSON in the API's shapes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from screvi_mcp.local.bodies import HighlightCreate, SourceCreate
from screvi_mcp.local.library import Library
from screvi_mcp.local.store import highlights as highlight_store
from screvi_mcp.local.store import sources as source_store
from screvi_mcp.local.store.highlights import HighlightFilters
from screvi_mcp.models import Highlight, Source
from screvi_mcp.transfer import jobs
from screvi_mcp.transfer.exporters import export_library

FIXTURES = Path(__file__).parent / "fixtures"


def stored(library_path: Path) -> list[dict[str, Any]]:
    library = Library.open(library_path)
    try:
        rows, _ = highlight_store.list_page(
            library.connection(), HighlightFilters(), 1, 100, include_metadata=True
        )
        return rows
    finally:
        library.close()


def filled_library(tmp_path: Path) -> Path:
    library_path = tmp_path / "library.sqlite"
    for kind, name in (
        ("kindle", "clippings_en.txt"),
        ("kindle", "clippings_de.txt"),
        ("kindle", "clippings_old.txt"),
        ("readwise", "readwise_export.csv"),
    ):
        jobs.import_file(kind, FIXTURES / name, library_path, embed=False)
    return library_path


def comparable(rows: list[dict[str, Any]]) -> set[tuple[Any, ...]]:
    """What a reader cares about in a highlight, independent of ids and import times."""
    return {
        (
            row["source"]["name"],
            row["source"]["author"],
            row["source"]["type"],
            row["content"],
            row["note"],
            row["location"],
            row["date"],
            tuple(sorted(tag["name"] for tag in row["tags"])),
            row["metadata"].get("color"),
            row["favorite"],
        )
        for row in rows
    }


def test_csv_round_trip_into_a_fresh_library_gives_the_same_highlights(tmp_path: Path) -> None:
    library_path = filled_library(tmp_path)
    exported = tmp_path / "export.csv"
    summary = export_library("csv", exported, library_path)
    original = stored(library_path)
    assert f"Exported {len(original)} highlights" in summary
    fresh = tmp_path / "fresh.sqlite"
    report = jobs.import_file("readwise", exported, fresh, embed=False)
    assert not report.rejected
    assert report.new_highlights == len(original)
    assert comparable(stored(fresh)) == comparable(original)
    assert sum(row["favorite"] for row in original) == 1  # the favourite survived the trip
    # And back into the library it came from: nothing new (same passages, same sources).
    again = jobs.import_file("readwise", exported, library_path, embed=False)
    assert again.new_highlights == 0 and again.sources["created"] == 0


def test_json_export_uses_the_api_shapes(tmp_path: Path) -> None:
    library_path = filled_library(tmp_path)
    target = tmp_path / "out" / "library.json"
    export_library("json", target, library_path)
    document = json.loads(target.read_text(encoding="utf-8"))
    highlights = [Highlight.model_validate(item) for item in document["highlights"]]
    sources = [Source.model_validate(item) for item in document["sources"]]
    assert {h.id for h in highlights} == {row["id"] for row in stored(library_path)}
    assert {s.name for s in sources} >= {"Der Leuchtturmwärter (Roman)", "Notes on Caching"}
    assert all(h.metadata is not None for h in highlights)  # metadata (colour) included
    assert set(document["highlights"][0]) >= {"id", "content", "note", "source", "tags"}


def notes(folder: Path) -> dict[str, str]:
    return {path.name: path.read_text(encoding="utf-8") for path in sorted(folder.glob("*.md"))}


def test_markdown_notes_are_updated_in_place_and_lose_deleted_highlights(tmp_path: Path) -> None:
    library_path = filled_library(tmp_path)
    folder = tmp_path / "vault"
    export_library("markdown", folder, library_path)
    first = notes(folder)
    rows = stored(library_path)
    sources = {row["source"]["id"]: row["source"] for row in rows}
    assert len(first) == len(sources)
    almanac = first["The Lighthouse Keeper's Almanac (Second Edition).md"]
    almanac_id = next(s["id"] for s in sources.values() if s["name"].endswith("(Second Edition)"))
    assert almanac.startswith(
        "---\n"
        'title: "The Lighthouse Keeper\'s Almanac (Second Edition)"\n'
        'author: "Wren, Mara"\n'
        'type: "book"\n'
        "tags: []\n"
        f'source_id: "{almanac_id}"\n'
        "---\n"
    )
    assert "**Note:** Compare with the tide tables in chapter two." in almanac
    assert "**Location:** 180" in almanac
    for row in rows:
        assert len(re.findall(rf"^\^h-{row['id']}$", "".join(first.values()), re.M)) == 1
    caching = first["Notes on Caching.md"]
    assert 'tags: ["engineering", "web"]' in caching and "**Tags:** #engineering #web" in caching

    # The reader renames a note and writes in it; a highlight and a whole source go away.
    renamed = folder / "Almanac (my notes).md"
    (folder / "The Lighthouse Keeper's Almanac (Second Edition).md").rename(renamed)
    renamed.write_text(renamed.read_text(encoding="utf-8") + "\nMy own thoughts.\n", "utf-8")
    gone = next(row for row in rows if row["content"].startswith("Fog is the only visitor"))
    tweets = next(s for s in sources.values() if s["type"] == "tweet")
    library = Library.open(library_path)
    highlight_store.delete(library, gone["id"])
    source_store.delete(library, tweets["id"], cascade=True)
    library.close()

    export_library("markdown", folder, library_path)
    second = notes(folder)
    assert len(second) == len(first) - 1
    assert "Tweets From Ada Quill.md" not in second
    assert "The Lighthouse Keeper's Almanac (Second Edition).md" not in second  # no duplicate
    updated = second["Almanac (my notes).md"]
    assert f"^h-{gone['id']}" not in updated
    assert "My own thoughts." in updated
    assert updated.count("screvi:highlights:begin") == 1
    # A highlight without a source gets a note too.
    library = Library.open(library_path)
    [lone] = highlight_store.create_many(
        library, [HighlightCreate(content="A thought of my own.")], bulk=False
    )
    library.close()
    export_library("markdown", folder, library_path)
    second = notes(folder)
    assert len(re.findall(rf"^\^h-{lone['id']}$", "".join(second.values()), re.M)) == 1
    # A third export with nothing changed leaves every note as it was.
    export_library("markdown", folder, library_path)
    assert notes(folder) == second


def test_a_csv_export_imported_back_into_its_library_adds_nothing_whatever_the_types(
    tmp_path: Path,
) -> None:
    """Readwise's CSV has no column for the kind of source, so the importer guesses it (a
    book unless the data says otherwise). Reading an export back into the library it came
    from (restoring a backup, or a second machine's copy) used to look for the source under
    the guessed type only: every video, custom collection, tweet without an @ author and the
    personal notes were created again, each with a copy of all its highlights."""
    library_path = tmp_path / "library.sqlite"
    library = Library.open(library_path)
    try:
        made = []
        for kind in ("video", "custom", "tweet", "podcast"):
            source = source_store.create(
                library, SourceCreate(name=f"A {kind}", type=kind, author="Someone")
            )
            made.append(HighlightCreate(content=f"Said in a {kind}.", source_id=source["id"]))
        made.append(HighlightCreate(content="A thought of my own.", tags=["mine"]))
        highlight_store.create_many(library, made, bulk=False)
    finally:
        library.close()
    before = stored(library_path)
    exported = tmp_path / "export.csv"
    export_library("csv", exported, library_path)

    again = jobs.import_file("readwise", exported, library_path, embed=False)
    assert again.new_highlights == 0 and again.sources["created"] == 0, again.summary("")
    after = stored(library_path)
    assert len(after) == len(before) == 5
    assert {row["source"]["type"] for row in after} == {
        "video",
        "custom",
        "tweet",
        "podcast",
        "self",
    }


def test_a_highlight_quoting_the_region_marker_does_not_break_the_note(tmp_path: Path) -> None:
    """The generated region was found by its end marker anywhere in the text, so a highlight
    quoting the marker (a passage about this very export, HTML comments in a tech book) ended
    the region early: each export kept the rest of the old region as "the reader's text",
    and the note filled with stale copies and duplicate block ids."""
    library_path = tmp_path / "library.sqlite"
    library = Library.open(library_path)
    try:
        [quoted] = highlight_store.create_many(
            library,
            [HighlightCreate(content="Put <!-- screvi:highlights:end --> where it ends.")],
            bulk=False,
        )
    finally:
        library.close()
    folder = tmp_path / "vault"
    export_library("markdown", folder, library_path)
    first = notes(folder)
    export_library("markdown", folder, library_path)
    export_library("markdown", folder, library_path)
    assert notes(folder) == first
    [text] = first.values()
    assert text.count(f"^h-{quoted['id']}") == 1


def test_exported_files_get_the_usual_permissions(tmp_path: Path) -> None:
    """Files were written through a private temporary file and renamed into place, so every
    export was mode 0600 whatever the umask, and exporting again over a note or CSV the
    reader had shared (0644, 0640) took its permissions away."""
    import os
    import stat

    library_path = filled_library(tmp_path)
    old_umask = os.umask(0o022)
    try:
        target = tmp_path / "export.csv"
        export_library("csv", target, library_path)
        assert stat.S_IMODE(target.stat().st_mode) == 0o644
        target.chmod(0o640)
        export_library("csv", target, library_path)
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        folder = tmp_path / "vault"
        export_library("markdown", folder, library_path)
        assert {stat.S_IMODE(p.stat().st_mode) for p in folder.glob("*.md")} == {0o644}
    finally:
        os.umask(old_umask)
