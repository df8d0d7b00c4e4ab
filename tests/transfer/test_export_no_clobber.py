"""An export never replaces a file it was not asked to: `export csv|json FILE` onto an
existing file refuses (exit 2, the file untouched, nothing written beside it) unless
`--force`; a Markdown export likewise never replaces a note it did not write."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.cli import main
from screvi_mcp.transfer import jobs

FIXTURES = Path(__file__).parent / "fixtures"


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


@pytest.fixture
def library(tmp_path: Path) -> str:
    path = tmp_path / "library.sqlite"
    jobs.import_file("kindle", FIXTURES / "clippings_fr.txt", path, embed=False)
    return str(path)


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_an_existing_file_is_kept_unless_forced(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str, fmt: str
) -> None:
    target = tmp_path / "out" / f"mine.{fmt}"
    target.parent.mkdir()
    target.write_text("the reader's own file\n", encoding="utf-8")
    code, out, err = run(capsys, "export", fmt, str(target), "--library", library)
    assert code == 2 and out == ""
    assert f"{target} already exists" in err and "--force" in err and "nothing" in err.lower()
    assert target.read_text(encoding="utf-8") == "the reader's own file\n"
    assert [p.name for p in target.parent.iterdir()] == [target.name]  # no temporary left
    code, _, err = run(capsys, "export", fmt, str(target), "--library", library, "--force")
    assert code == 0, err
    assert target.read_text(encoding="utf-8") != "the reader's own file\n"


def test_a_dangling_link_in_the_way_counts_as_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str
) -> None:
    target = tmp_path / "out.csv"
    target.symlink_to(tmp_path / "nowhere")
    code, _, err = run(capsys, "export", "csv", str(target), "--library", library)
    assert code == 2 and "already exists" in err
    assert target.is_symlink() and not (tmp_path / "nowhere").exists()


def test_a_markdown_export_never_replaces_a_note_it_did_not_write(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], library: str
) -> None:
    vault = tmp_path / "vault"
    code, _, err = run(capsys, "export", "markdown", str(vault), "--library", library)
    assert code == 0, err
    names = sorted(p.name for p in vault.glob("*.md"))
    for name in names:  # the reader's own files, under the names the export chose
        (vault / name).write_text("mine\n", encoding="utf-8")
    code, _, err = run(capsys, "export", "markdown", str(vault), "--library", library)
    assert code == 0, err
    assert all((vault / name).read_text(encoding="utf-8") == "mine\n" for name in names)
    assert len(list(vault.glob("*.md"))) == 2 * len(names)
