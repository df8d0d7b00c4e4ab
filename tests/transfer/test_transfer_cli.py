"""`screvi-mcp import` / `export` as a user runs them: exit codes, stderr progress, summaries."""

from __future__ import annotations

import re
import signal
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from screvi_mcp.cli import main
from testsupport.polling import wait_until

FIXTURES = Path(__file__).parent / "fixtures"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def test_import_prints_progress_lines_and_a_summary_on_stderr_only(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = str(tmp_path / "library.sqlite")
    fixture = str(FIXTURES / "clippings_en.txt")
    code, out, err = run(capsys, "import", "kindle", fixture, "--library", library)
    assert code == 0 and out == ""  # stdout stays clean (it is MCP's in stdio mode)
    # Not a TTY here: plain lines, no carriage returns, ending with the final count.
    assert "\r" not in err
    assert re.search(r"^importing: 5/5 highlights \(100%\) · .* · done in ", err, re.M)
    assert "highlights  5 new, 0 updated, 0 unchanged" in err
    assert "line 43: rejected: unrecognised clip type" in err
    code, _, again = run(capsys, "import", "kindle", fixture, "--library", library)
    assert code == 0 and "highlights  0 new, 0 updated, 5 unchanged" in again


def test_dry_run_and_quiet(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    library = tmp_path / "library.sqlite"
    code, _, err = run(
        capsys,
        "import",
        "readwise",
        str(FIXTURES / "readwise_export.csv"),
        "--library",
        str(library),
        "--dry-run",
        "--quiet",
    )
    assert code == 0 and not library.exists()
    assert "(dry run: nothing written)" in err and "5 would be new" in err
    assert "importing:" not in err  # --quiet: no progress, still the summary


def test_a_broken_file_exits_non_zero_naming_the_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    broken = tmp_path / "broken.csv"
    broken.write_text('Highlight,Book Title\nok,Book\n"open,Book\n', encoding="utf-8")
    code, out, err = run(
        capsys, "import", "readwise", str(broken), "--library", str(tmp_path / "l.sqlite")
    )
    assert code == 1 and out == ""
    assert "line 3" in err and "Nothing was imported" in err and "Traceback" not in err
    code, _, err = run(capsys, "import", "kindle", str(tmp_path / "missing.txt"))
    assert code == 1 and "no file at" in err


def test_export_commands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    library = str(tmp_path / "library.sqlite")
    assert (
        run(capsys, "import", "kindle", str(FIXTURES / "clippings_fr.txt"), "--library", library)[0]
        == 0
    )
    code, out, err = run(capsys, "export", "csv", str(tmp_path / "out.csv"), "--library", library)
    assert code == 0 and out == "" and "Exported 2 highlights" in err
    assert (tmp_path / "out.csv").read_text(encoding="utf-8").startswith("Highlight,Book Title,")
    code, _, err = run(capsys, "export", "csv", str(tmp_path), "--library", library)
    assert code == 1 and "give a file name" in err
    missing = str(tmp_path / "nothing-here.sqlite")
    code, _, err = run(capsys, "export", "json", str(tmp_path / "o.json"), "--library", missing)
    assert code == 1 and "no library at" in err and not Path(missing).exists()


def test_help_describes_the_commands() -> None:
    result = subprocess.run(
        [sys.executable, "-m", "screvi_mcp", "import", "kindle", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert "--dry-run" in result.stdout and "My Clippings.txt" in result.stdout
    result = subprocess.run(
        [sys.executable, "-m", "screvi_mcp", "export", "--help"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert all(word in result.stdout for word in ("markdown", "csv", "json"))


def test_a_library_that_cannot_be_opened_ends_with_a_message_not_a_traceback(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    fixture = str(FIXTURES / "clippings_en.txt")
    code, out, err = run(capsys, "import", "kindle", fixture, "--library", str(tmp_path))
    assert code == 2 and out == ""
    assert "is a directory" in err and "Traceback" not in err


def _not_a_library(tmp_path: Path) -> Path:
    notes = tmp_path / "notes.txt"
    notes.write_text("my own notes, not a library\n", encoding="utf-8")
    return notes


@pytest.mark.parametrize(
    "command",
    [
        ["import", "kindle", str(FIXTURES / "clippings_en.txt")],
        ["import", "readwise", str(FIXTURES / "readwise_export.csv"), "--dry-run"],
        ["export", "json", "OUT/out.json"],
        ["export", "markdown", "OUT/notes"],
    ],
)
def test_odd_library_paths_are_refused_with_one_line_before_anything_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: list[str]
) -> None:
    """--library at a folder, at a file that is not a library, or in a folder that does not
    exist: refused as every other command refuses it (exit 2, one line saying what to do).
    Import and export skipped that check: a folder or a text file ended in a traceback
    (export) or in "the import stopped ... run the same command again to continue" (import),
    and a typo in the folder silently made a new library there."""
    command = [part.replace("OUT", str(tmp_path)) for part in command]
    notes = _not_a_library(tmp_path)
    typo = tmp_path / "no-such-folder" / "library.sqlite3"
    for library, expected in (
        (tmp_path, "is a directory"),
        (notes, "is not a screvi-mcp library"),
        (typo, "does not exist"),
    ):
        code, out, err = run(capsys, *command, "--library", str(library))
        assert code == 2 and out == "", err
        assert expected in err and "Traceback" not in err
        assert len(err.strip().splitlines()) == 1, err
    assert notes.read_text(encoding="utf-8") == "my own notes, not a library\n"
    assert not typo.parent.exists()
    assert not (tmp_path / "out.json").exists() and not (tmp_path / "notes").exists()


def _many_clippings(path: Path, count: int) -> None:
    # 50 clips a book: the parser compares each clip with the earlier ones of its book, so
    # 20,000 clips in 7 books cost 17 s of CPU before the import even started.
    with path.open("w", encoding="utf-8") as out:
        for index in range(count):
            book = index // 50
            out.write(
                f"Book {book} (Author {book})\n"
                f"- Your Highlight on page {index} | location {index * 10}-{index * 10 + 4} | "
                "Added on Monday, 3 March 2024 10:15:02\n\n"
                f"Passage number {index} about tides, lighthouses and the weather.\n==========\n"
            )


def _highlights_written(library: Path, process: subprocess.Popen[str]) -> int:
    """Wait (bounded) until the import has committed its first batch; return the count."""

    def written() -> int:
        assert process.poll() is None, f"the import wrote nothing (exit {process.poll()})"
        conn = sqlite3.connect(f"file:{library}?mode=ro", uri=True, timeout=10)
        try:
            return int(conn.execute("SELECT count(*) FROM highlights").fetchone()[0])
        finally:
            conn.close()

    return wait_until(
        written,
        timeout=120,  # a bound against hanging, not a timing check
        what="the import wrote nothing",
        every=0.02,
        transient=(sqlite3.OperationalError,),  # not created or not migrated yet
    )


def test_ctrl_c_mid_import_says_what_was_kept_without_a_traceback(tmp_path: Path) -> None:
    """Ctrl-C during a long import printed a KeyboardInterrupt traceback from deep inside
    SQLite or the embedding queue. It now says what happened to the data and how to go on;
    the batches written before it stay whole and a re-run continues."""
    clippings = tmp_path / "My Clippings.txt"
    _many_clippings(clippings, 20_000)
    library = tmp_path / "library.sqlite3"
    command = ["import", "kindle", str(clippings), "--library", str(library)]
    process = subprocess.Popen(
        [sys.executable, "-m", "screvi_mcp", *command],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # Interrupt it mid-import: once its first batch is written the "importing" reporter is
    # running. (Waiting a fixed second after the file appeared let the signal land, on a
    # busy machine, while the model was still loading, before any progress line.)
    written = _highlights_written(library, process)
    assert 0 < written < 20_000, f"{written} highlights: not caught mid-import"
    process.send_signal(signal.SIGINT)
    out, err = process.communicate(timeout=120)
    assert process.returncode == 130, err
    assert out == "" and "Traceback" not in err and "KeyboardInterrupt" not in err
    assert "interrupted" in err and "run the same command again" in err
    # The phase Ctrl-C cut short says so; its line used to end "done in", like a finished one.
    progress = [line for line in err.splitlines() if line.startswith(("importing:", "embedding:"))]
    assert progress and "stopped after" in progress[-1] and "done in" not in progress[-1], err
    with sqlite3.connect(library) as conn:
        highlights = conn.execute("SELECT count(*) FROM highlights").fetchone()[0]
        keys = conn.execute("SELECT count(*) FROM import_keys WHERE kind = 'highlight'")
        assert highlights == keys.fetchone()[0]  # whole batches only


def test_the_embedding_after_an_import_shows_progress(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """After the last batch the import embeds what is still queued before it exits: for a
    real clippings file (thousands of highlights) minutes of CPU. That wait printed nothing
    after "importing: ... done", so the command looked hung; it now has its own progress."""
    pytest.importorskip("onnxruntime", reason="embedding needs the `local` extra")
    clippings = tmp_path / "My Clippings.txt"
    _many_clippings(clippings, 600)  # written in well under a second, embedded in seconds
    library = tmp_path / "library.sqlite3"
    code, out, err = run(capsys, "import", "kindle", str(clippings), "--library", str(library))
    assert code == 0 and out == ""
    lines = err.splitlines()
    imported = next(i for i, line in enumerate(lines) if line.startswith("importing: 600/600"))
    embedded = [i for i, line in enumerate(lines) if line.startswith("embedding: ")]
    summary = next(i for i, line in enumerate(lines) if line.startswith("Imported "))
    assert embedded and imported < embedded[0] and embedded[-1] < summary, err
    assert re.match(r"embedding: (\d+)/\1 highlights \(100%\) · .* · done in ", lines[embedded[-1]])
    with sqlite3.connect(library) as conn:
        assert conn.execute("SELECT count(*) FROM embedding_queue").fetchone()[0] == 0
    code, _, quiet = run(
        capsys, "import", "kindle", str(clippings), "--library", str(library), "--quiet"
    )
    assert code == 0 and "embedding:" not in quiet


@pytest.mark.parametrize(
    ("kind", "name", "text", "expected"),
    [
        ("kindle", "My Clippings.txt", "", "the file is empty"),
        ("kindle", "My Clippings.txt", "\n\r\n  \n", "the file is empty"),
        ("readwise", "export.csv", "", "the file is empty"),
        (
            "readwise",
            "export.csv",
            "Highlight,Book Title,Book Author,Amazon Book ID,Note,Color,Tags,Location Type,"
            "Location,Highlighted at,Document tags\n",
            "header row but no highlights",
        ),
    ],
)
def test_an_empty_or_header_only_file_says_there_was_nothing_to_import(
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    kind: str,
    name: str,
    text: str,
    expected: str,
) -> None:
    """An empty clippings file or a CSV with only its header imported 0 items and said
    nothing about it: the summary looked like a run on a file already imported."""
    source = tmp_path / name
    source.write_text(text, encoding="utf-8")
    library = str(tmp_path / "library.sqlite")
    code, out, err = run(capsys, "import", kind, str(source), "--library", library, "--quiet")
    assert code == 0 and out == ""
    assert re.search(rf"^  warning: .*{expected}.*nothing to import$", err, re.M), err
    assert "Traceback" not in err


def test_a_date_the_importer_cannot_read_is_reported_and_the_highlight_kept(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A "Highlighted at" neither ISO 8601 nor a date in words was dropped without a word;
    the highlight came in undated and the reader never knew."""
    source = tmp_path / "export.csv"
    source.write_text(
        "Highlight,Book Title,Highlighted at\n"
        "Dated well.,A Book,2024-03-03 10:15:02+00:00\n"
        "Dated oddly.,A Book,sometime last spring\n",
        encoding="utf-8",
    )
    library = tmp_path / "library.sqlite"
    code, _, err = run(
        capsys, "import", "readwise", str(source), "--library", str(library), "--quiet"
    )
    assert code == 0, err
    assert "highlights  2 new" in err
    assert "line 3: Highlighted at 'sometime last spring' is not a date" in err
    assert "imported without a date" in err
    with sqlite3.connect(library) as conn:
        dates = dict(conn.execute("SELECT content, date FROM highlights").fetchall())
    assert dates["Dated oddly."] is None and dates["Dated well."] is not None


def test_a_folder_given_to_import_is_called_a_folder_and_the_clippings_file_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """`import kindle /media/Kindle` said "no file at /media/Kindle": true, but no help.
    It now says it is a folder and, when the clippings file is inside, which file to give."""
    device = tmp_path / "Kindle"
    (device / "documents").mkdir(parents=True)
    library = str(tmp_path / "library.sqlite")
    code, out, err = run(capsys, "import", "kindle", str(device), "--library", library)
    assert code == 1 and out == ""
    assert f"{device} is a folder" in err and "no file at" not in err
    assert "My Clippings.txt" in err
    clippings = device / "documents" / "My Clippings.txt"
    clippings.write_text("", encoding="utf-8")
    for given in (device, device / "documents"):
        code, _, err = run(capsys, "import", "kindle", str(given), "--library", library)
        assert code == 1
        assert f"{given} is a folder; give the file: '{clippings}'" in err, err
    code, _, err = run(capsys, "import", "readwise", str(device), "--library", library)
    assert code == 1 and f"{device} is a folder; give the Readwise export file" in err
    assert not Path(library).exists()


@pytest.mark.parametrize("fmt", ["csv", "json", "markdown"])
def test_an_export_to_a_place_it_cannot_write_says_so_before_reading_the_library(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], fmt: str
) -> None:
    # A folder under a regular file cannot be made, by root either. The message named the
    # export's temporary file (or the file in the way as "File exists") after the whole
    # library had been read.
    library = str(tmp_path / "l.sqlite")
    assert (
        run(capsys, "import", "kindle", str(FIXTURES / "clippings_fr.txt"), "--library", library)[0]
        == 0
    )
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine\n")
    target = blocker / "export" / "out"
    code, out, err = run(capsys, "export", fmt, str(target), "--library", library)
    assert code == 1 and out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err  # no progress line: nothing was read
    assert lines[0].startswith(f"screvi-mcp: cannot export to {target}: ")
    assert "is a file, not a folder" in lines[0] and str(blocker) in lines[0]
    assert ".screvi-export-" not in err and "Errno" not in err
    assert blocker.read_text() == "mine\n"
