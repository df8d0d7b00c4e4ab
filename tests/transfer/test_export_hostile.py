"""Markdown export against hostile names, notes and folders (issue 31, items 1, 7, 8, 12)."""

from __future__ import annotations

import os
import threading
import unicodedata
from pathlib import Path

import pytest

from screvi_mcp.local.api.bodies import HighlightCreate, SourceCreate
from screvi_mcp.local.storage.library import Library
from screvi_mcp.local.storage.store import highlights as highlight_store
from screvi_mcp.local.storage.store import sources as source_store
from screvi_mcp.transfer import exporters, markdown_notes
from screvi_mcp.transfer.exporters import export_library


def library_with(path: Path, *books: tuple[str, str]) -> list[str]:
    """One book per (name, passage); returns the source ids."""
    library = Library.open(path)
    try:
        ids = []
        for name, passage in books:
            source = source_store.create(library, SourceCreate(name=name, type="book"))
            highlight_store.create_many(
                library, [HighlightCreate(content=passage, source_id=source["id"])], bulk=False
            )
            ids.append(source["id"])
        return ids
    finally:
        library.close()


def name_max(folder: Path) -> int:
    try:
        return os.pathconf(folder, "PC_NAME_MAX")
    except (OSError, ValueError):
        return 255


def test_long_non_ascii_titles_get_names_the_file_system_takes(tmp_path: Path) -> None:
    """Names were cut at 80 characters: 80 emoji are 320 bytes, and every export failed with
    `File name too long` after writing some notes; 80 CJK characters (240 bytes) failed once
    a clash suffix was added."""
    library_path = tmp_path / "library.sqlite"
    books = [("😀" * 80, "Smiles."), ("漢" * 80, "One."), ("漢" * 80, "Two."), ("漢" * 80, "3.")]
    library_with(library_path, *books)
    vault = tmp_path / "vault"
    vault.mkdir()
    summary = export_library("markdown", vault, library_path)
    assert "4 notes" in summary
    names = sorted(path.name for path in vault.glob("*.md"))
    assert len(names) == 4 and len(set(names)) == 4
    limit = name_max(vault)
    assert all(len(os.fsencode(name)) <= limit for name in names)
    assert not [p for p in vault.iterdir() if p.name.startswith(".")]  # no temporary left
    # Exporting again finds each note again: no new names, nothing removed.
    export_library("markdown", vault, library_path)
    assert sorted(path.name for path in vault.glob("*.md")) == names


def test_an_export_that_fails_part_way_says_exactly_what_it_wrote(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every note is written to a temporary file first; only then are they renamed into
    place. A failure while writing changes nothing; a failure while renaming (which a real
    disk hardly ever gives, hence the fault injected here) says which notes are in place."""
    library_path = tmp_path / "library.sqlite"
    library_with(library_path, ("Alpha", "a"), ("Beta", "b"), ("Gamma", "c"))
    vault = tmp_path / "vault"
    real_replace = os.replace
    calls: list[str] = []

    def failing_replace(source: str | Path, target: str | Path) -> None:
        calls.append(str(target))
        if len(calls) == 2:
            raise OSError(28, "No space left on device")
        real_replace(source, target)

    monkeypatch.setattr(exporters.os, "replace", failing_replace)
    with pytest.raises(OSError) as failure:
        export_library("markdown", vault, library_path)
    message = str(failure.value)
    in_place = sorted(p.name for p in vault.glob("*.md"))
    assert len(in_place) == 1
    assert f"wrote 1 of 3 notes ({in_place[0]})" in message
    assert not [p for p in vault.iterdir() if p.name.startswith(".")]


def test_stray_markers_and_line_breaks_cannot_end_the_region(tmp_path: Path) -> None:
    """A note holding `\\r<!-- screvi:highlights:end -->\\r` became a marker line once read
    back with universal newlines, so each export appended another copy of the tail; a title
    with a newline went raw into the heading."""
    library_path = tmp_path / "library.sqlite"
    library = Library.open(library_path)
    try:
        source = source_store.create(
            library, SourceCreate(name="Line one\nLine two\r# Not a heading", type="book")
        )
        highlight_store.create_many(
            library,
            [
                HighlightCreate(
                    content="Text\u2028<!-- screvi:highlights:end -->\x85more",
                    note="x\r<!-- screvi:highlights:end -->\rtail",
                    source_id=source["id"],
                )
            ],
            bulk=False,
        )
    finally:
        library.close()
    vault = tmp_path / "vault"
    export_library("markdown", vault, library_path)
    [path] = vault.glob("*.md")
    first = path.read_bytes()
    export_library("markdown", vault, library_path)
    export_library("markdown", vault, library_path)
    assert path.read_bytes() == first
    text = first.decode()
    for stray in ("\r", "\u2028", "\x85"):
        assert stray not in text
    assert [line for line in text.split("\n") if line.startswith("# ")] == [
        "# Line one Line two # Not a heading"
    ]
    assert text.count("<!-- screvi:highlights:end -->") == 3


def test_export_reads_only_regular_notes_and_only_so_much(tmp_path: Path) -> None:
    """Every `*.md` was read whole: a symlink to /dev/zero took gigabytes of memory, a FIFO
    hung the export. Now only regular files (not links), up to a bound, are read."""
    library_path = tmp_path / "library.sqlite"
    library_with(library_path, ("Alpha", "a"))
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "zero.md").symlink_to("/dev/zero")
    os.mkfifo(vault / "pipe.md")
    huge = vault / "huge.md"
    with huge.open("wb") as handle:
        handle.truncate(markdown_notes.MAX_NOTE_BYTES + 1)  # sparse: no real disk used
    result: list[str] = []
    worker = threading.Thread(
        target=lambda: result.append(export_library("markdown", vault, library_path)), daemon=True
    )
    worker.start()
    worker.join(timeout=60)
    if worker.is_alive():  # the FIFO blocks the reader: open the other end to free it
        with open(vault / "pipe.md", "w"):
            pass
        worker.join(timeout=10)
        pytest.fail("the export hung on a FIFO named *.md")
    assert result and "1 notes" in result[0]
    assert "left alone 3 *.md entries" in result[0]
    assert (vault / "zero.md").is_symlink()
    assert huge.stat().st_size == markdown_notes.MAX_NOTE_BYTES + 1


@pytest.mark.parametrize(
    ("title", "expected"),
    [
        ("CON", "CON_.md"),
        ("nul", "nul_.md"),
        ("Com1.txt", "Com1_.txt.md"),
        ("evil\u202egnp.md", "evilgnp.md.md"),
        ("\u2066Isolated\u2069", "Isolated.md"),
    ],
)
def test_names_windows_or_a_reader_would_misread_are_changed(
    tmp_path: Path, title: str, expected: str
) -> None:
    library_path = tmp_path / "library.sqlite"
    library_with(library_path, (title, "passage"))
    vault = tmp_path / "vault"
    export_library("markdown", vault, library_path)
    assert [p.name for p in vault.glob("*.md")] == [expected]


def test_names_that_differ_only_in_normal_form_do_not_collide(tmp_path: Path) -> None:
    """macOS file systems treat NFC and NFD spellings as one name: two sources named
    "Café" (composed and decomposed) must get two files everywhere."""
    library_path = tmp_path / "library.sqlite"
    composed = unicodedata.normalize("NFC", "Café")
    decomposed = unicodedata.normalize("NFD", "Café")
    library_with(library_path, (composed, "one"), (decomposed, "two"))
    vault = tmp_path / "vault"
    export_library("markdown", vault, library_path)
    names = [p.name for p in vault.glob("*.md")]
    assert len(names) == 2
    assert len({unicodedata.normalize("NFC", name).casefold() for name in names}) == 2
    assert all(unicodedata.is_normalized("NFC", name) for name in names)
