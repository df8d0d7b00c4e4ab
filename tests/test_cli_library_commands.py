"""`screvi-mcp sample` and `screvi-mcp reindex` through the real command line entry point."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest

from screvi_mcp import cli
from screvi_mcp.sample import SAMPLE

pytest.importorskip("onnxruntime", reason="reindex needs the `local` extra (onnxruntime)")
# (imported through screvi_mcp.local.search.onnx_runtime by the code under test)


def _count(path: Path, sql: str) -> int:
    with sqlite3.connect(path) as conn:
        return int(conn.execute(sql).fetchone()[0])


def test_sample_loads_once_and_reindex_embeds_every_live_highlight(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    library = tmp_path / "library.sqlite3"
    expected = sum(len(source.highlights) for source in SAMPLE)

    assert cli.main(["sample", "--library", str(library)]) == 0
    assert cli.main(["sample", "--library", str(library)]) == 0  # a second load adds nothing
    assert _count(library, "SELECT count(*) FROM highlights") == expected
    assert "nothing added" in capsys.readouterr().err

    assert cli.main(["reindex", "--library", str(library), "--all"]) == 0
    err = capsys.readouterr().err
    assert f"Embedded {expected} highlights" in err
    assert f"{expected}/{expected}" in err  # the progress bar reached the end
    assert _count(library, "SELECT count(*) FROM highlight_embeddings") == expected

    # Nothing is missing any more, so a plain reindex embeds nothing.
    assert cli.main(["reindex", "--library", str(library)]) == 0
    assert "Embedded 0 highlights" in capsys.readouterr().err


@pytest.mark.parametrize("command", [["sample"], ["reindex"], ["keys", "list"]])
def test_library_given_before_the_command_is_the_library_it_works_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, command: list[str]
) -> None:
    """`screvi-mcp --library X sample` reads as "this library, then the command". The
    command's own --library option used to overwrite X with its empty default, and the
    command went to $SCREVI_LIBRARY or the default library instead, without a word."""
    chosen = tmp_path / "chosen.sqlite3"
    elsewhere = tmp_path / "elsewhere.sqlite3"
    monkeypatch.setenv("SCREVI_LIBRARY", str(elsewhere))
    assert cli.main(["sample", "--library", str(chosen)]) == 0  # a library to work on

    assert cli.main(["--library", str(chosen), *command]) == 0
    assert not elsewhere.exists()
    # Given after the command as well, the command's own option wins.
    other = tmp_path / "other.sqlite3"
    assert cli.main(["--library", str(chosen), *command, "--library", str(other)]) == 0
    assert other.exists()


@pytest.mark.parametrize(
    "command",
    [["api"], ["sync"], ["import", "kindle", "clippings.txt"], ["export", "csv", "out.csv"]],
)
def test_every_command_reads_the_library_given_before_it(command: list[str]) -> None:
    """The same for the commands that need more than a library file to run."""
    parser = cli.build_parser()
    assert parser.parse_args(["--library", "chosen.sqlite3", *command]).library == (
        "chosen.sqlite3"
    )
    assert parser.parse_args(command).library is None  # the command's default applies


def test_port_and_host_given_before_api_are_the_ones_it_binds(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """`screvi-mcp --port N api` binds N: before, api's own defaults (127.0.0.1:8080)
    overwrote what was given before the command, as with --library."""
    import socket

    import uvicorn

    def never(*args: object, **kwargs: object) -> None:
        raise AssertionError("api started on another port than the one given")

    monkeypatch.setattr(uvicorn, "run", never)
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        library = ["--library", str(tmp_path / "library.sqlite3")]
        assert cli.main(["--host", "127.0.0.1", "--port", str(port), "api", *library]) == 2
        assert str(port) in capsys.readouterr().err  # it refused the busy port it was given
    parser = cli.build_parser()
    assert (parser.parse_args(["api"]).port, parser.parse_args([]).port) == (None, None)
    assert parser.parse_args(["--port", "9", "api", "--port", "7"]).port == 7
