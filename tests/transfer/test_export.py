"""Exports: Markdown notes updated in place, Readwise CSV round trip, JSON in the API's shapes."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from screvi_mcp.local.api.bodies import HighlightCreate, SourceCreate
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store
from screvi_mcp.local.storage.store import sources as source_store
from screvi_mcp.local.storage.store.highlights import HighlightFilters
from screvi_mcp.models import Highlight, Source
from screvi_mcp.transfer import jobs, readwise
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


def library_id(library_path: Path) -> str:
    library = Library.open(library_path)
    try:
        identity = library.get_setting("library_id")
        assert identity
        return identity
    finally:
        library.close()


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
        f'library_id: "{library_id(library_path)}"\n'
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
        export_library("csv", target, library_path, force=True)
        assert stat.S_IMODE(target.stat().st_mode) == 0o640
        folder = tmp_path / "vault"
        export_library("markdown", folder, library_path)
        assert {stat.S_IMODE(p.stat().st_mode) for p in folder.glob("*.md")} == {0o644}
    finally:
        os.umask(old_umask)


def _library_with(path: Path, *names: str) -> dict[str, str]:
    """A library holding one book per name, each with one highlight; returns name -> id."""
    library = Library.open(path)
    try:
        ids = {}
        for name in names:
            source = source_store.create(library, SourceCreate(name=name, type="book"))
            highlight_store.create_many(
                library,
                [HighlightCreate(content=f"A passage of {name}.", source_id=source["id"])],
                bulk=False,
            )
            ids[name] = source["id"]
        return ids
    finally:
        library.close()


def test_a_markdown_export_never_removes_notes_another_library_wrote(tmp_path: Path) -> None:
    """Two libraries exported into one vault: the second export counted every note of the
    first library as a note "of a source left without highlights" (its source is not in the
    second library) and deleted it. Notes now say which library wrote them, and an export
    rewrites or removes only its own."""
    first, second = tmp_path / "first.sqlite", tmp_path / "second.sqlite"
    first_ids = _library_with(first, "Moby-Dick", "Walden")
    second_ids = _library_with(second, "Middlemarch", "Walden")  # a book both hold
    vault = tmp_path / "vault"
    export_library("markdown", vault, first)
    from_first = notes(vault)
    assert len(from_first) == 2

    summary = export_library("markdown", vault, second)
    assert "removed" not in summary
    after = notes(vault)
    for name, text in from_first.items():
        assert after[name] == text  # untouched: neither removed nor rewritten
    assert len(after) == 4  # the second Walden got a name of its own
    assert sum(f'source_id: "{second_ids["Walden"]}"' in text for text in after.values()) == 1

    # The second library loses a source: its note goes, the first library's stay.
    library = Library.open(second)
    source_store.delete(library, second_ids["Middlemarch"], cascade=True)
    library.close()
    summary = export_library("markdown", vault, second)
    assert "removed 1 notes" in summary
    after = notes(vault)
    assert "Middlemarch.md" not in after
    for name, text in from_first.items():
        assert after[name] == text
    # And the first library still finds and updates its own notes.
    library = Library.open(first)
    source_store.delete(library, first_ids["Moby-Dick"], cascade=True)
    library.close()
    export_library("markdown", vault, first)
    assert "Moby-Dick.md" not in notes(vault) and "Walden.md" in notes(vault)


def test_notes_of_earlier_versions_are_removed_only_when_the_library_held_their_source(
    tmp_path: Path,
) -> None:
    """A note written before notes carried a library id is this library's only when its
    source_id is a source the library holds or held; any other such note is left alone."""
    library_path, other = tmp_path / "library.sqlite", tmp_path / "other.sqlite"
    ids = _library_with(library_path, "Moby-Dick", "Walden")
    _library_with(other, "Middlemarch")
    vault = tmp_path / "vault"
    export_library("markdown", vault, library_path)
    export_library("markdown", vault, other)
    for path in vault.glob("*.md"):  # as an earlier version wrote them: no library_id line
        text = path.read_text(encoding="utf-8")
        path.write_text(re.sub(r"^library_id: .*\n", "", text, flags=re.M), encoding="utf-8")
    assert all("library_id" not in text for text in notes(vault).values())

    library = Library.open(library_path)
    source_store.delete(library, ids["Moby-Dick"], cascade=True)
    library.close()
    summary = export_library("markdown", vault, library_path)
    assert "removed 1 notes" in summary
    after = notes(vault)
    assert set(after) == {"Walden.md", "Middlemarch.md"}
    assert "library_id" in after["Walden.md"]  # adopted: rewritten with the marker
    assert "library_id" not in after["Middlemarch.md"]  # not this library's: untouched


def test_a_csv_export_read_into_a_fresh_library_keeps_types_and_tags_with_commas(
    tmp_path: Path,
) -> None:
    """Readwise's CSV has no type column and writes tags comma-separated. Read into a fresh
    library, an export came back with every video, custom collection, PDF, personal note and
    tweet without an @ author as a `book`, and a tag named "history, ancient" as two tags.
    The export now adds columns of its own (ignored by Readwise) that the importer reads."""
    from screvi_mcp.local.storage.store import imports

    library_path = tmp_path / "library.sqlite"
    library = Library.open(library_path)
    try:
        made = []
        for kind, author in (
            ("video", "A Channel"),
            ("custom", None),
            ("tweet", "Ada Quill"),  # no @: the guess would say book
            ("podcast", "Host"),
            ("pdf", "A. Writer"),
            ("article", "Blogger"),
            ("book", "Novelist"),
        ):
            with library.write() as conn:
                source_id = source_store.insert(
                    conn,
                    imports.validate_source(
                        {
                            "name": f"A {kind}",
                            "type": kind,
                            **({"author": author} if author else {}),
                        }
                    ),
                )
            made.append(
                HighlightCreate(
                    content=f"Said in a {kind},\nover two lines.",
                    source_id=source_id,
                    note=f"My note on the {kind}, with a comma.",
                    tags=["history, ancient", "plain"],
                    location=42,
                    date="2024-03-03T10:15:02.250Z",
                    favorite=kind in ("video", "pdf"),
                )
            )
        made.append(HighlightCreate(content="A thought of my own.", tags=["mine, really"]))
        highlight_store.create_many(library, made, bulk=False)
    finally:
        library.close()
    original = stored(library_path)
    exported = tmp_path / "export.csv"
    export_library("csv", exported, library_path)
    header = exported.read_text(encoding="utf-8").splitlines()[0].split(",")
    assert header[:11] == list(readwise.COLUMNS)  # Readwise's columns first, as it writes them

    fresh = tmp_path / "fresh.sqlite"
    report = jobs.import_file("readwise", exported, fresh, embed=False)
    assert not report.rejected and not report.notices, report.summary("")
    after = stored(fresh)
    assert comparable(after) == comparable(original)
    assert {row["source"]["type"] for row in after} == {
        "video",
        "custom",
        "tweet",
        "podcast",
        "pdf",
        "article",
        "book",
        "self",
    }
    assert {tag["name"] for row in after for tag in row["tags"]} == {
        "history, ancient",
        "plain",
        "mine, really",
    }
    assert sum(row["favorite"] for row in after) == 2
    assert {row["date"] for row in after if row["source"]["type"] != "self"} == {
        "2024-03-03T10:15:02.250000Z"
    }
    # Read back into the fresh library again: nothing new, the personal notes are one source.
    again = jobs.import_file("readwise", exported, fresh, embed=False)
    assert again.new_highlights == 0 and again.sources["created"] == 0
    # And into the library it came from.
    again = jobs.import_file("readwise", exported, library_path, embed=False)
    assert again.new_highlights == 0 and again.sources["created"] == 0
