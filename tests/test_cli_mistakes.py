"""Every command-line mistake is one line on stderr that names it, from the parser of the
command it was made in, and says what to type instead."""

from __future__ import annotations

from pathlib import Path

import pytest

from screvi_mcp.cli import main


def mistake(argv: list[str], capsys: pytest.CaptureFixture[str]) -> str:
    with pytest.raises(SystemExit) as stopped:
        main(argv)
    out, err = capsys.readouterr()
    assert stopped.value.code == 2
    assert out == ""
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert "Traceback" not in err
    return lines[0]


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [
        (["--transport", "streamable-http", "--port", "99999"], "screvi-mcp: argument --port"),
        (["api", "--port", "70000"], "screvi-mcp api: argument --port"),
        (["api", "--port", "-1"], "screvi-mcp api: argument --port"),
    ],
)
def test_a_port_out_of_range_is_named(
    argv: list[str], prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = mistake(argv, capsys)
    assert line.startswith(prefix)
    assert "0 to 65535" in line


@pytest.mark.parametrize(
    ("argv", "command", "wrong", "right"),
    [
        (["--libary", "/nowhere/library.sqlite3"], "screvi-mcp", "--libary", "--library"),
        (["sync", "--time-limt", "5"], "screvi-mcp sync", "--time-limt", "--time-limit"),
        (["keys", "create", "--nme", "x"], "screvi-mcp keys create", "--nme", "--name"),
        (["export", "csv", "out.csv", "--quite"], "screvi-mcp export csv", "--quite", "--quiet"),
    ],
)
def test_a_misspelled_option_is_named_with_the_nearest_one_by_its_own_command(
    argv: list[str], command: str, wrong: str, right: str, capsys: pytest.CaptureFixture[str]
) -> None:
    line = mistake(argv, capsys)
    assert line.startswith(f"{command}: unknown option {wrong}; did you mean {right}?")
    assert f"`{command} --help`" in line


def test_a_bad_value_of_a_sub_commands_option_names_that_command(
    capsys: pytest.CaptureFixture[str],
) -> None:
    line = mistake(["sync", "--time-limit", "soon"], capsys)
    assert line.startswith("screvi-mcp sync: argument --time-limit")


def test_an_unambiguous_prefix_still_stands_for_its_option(tmp_path: Path) -> None:
    library = tmp_path / "library.sqlite3"
    assert main(["--lib", str(library), "keys", "list"]) == 0
    assert library.exists()


@pytest.mark.parametrize("name", ["", "   ", "x" * 101, "line\nbreak", "tab\there"])
def test_a_key_name_that_cannot_be_recognised_is_refused_before_a_key_is_made(
    name: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    # `keys list` prints one line per key: an empty name showed as "(; read)", a line break
    # in one printed a line that looks like another key.
    library = tmp_path / "library.sqlite3"
    line = mistake(["keys", "create", "--name", name, "--library", str(library)], capsys)
    assert line.startswith("screvi-mcp keys create: argument --name")
    assert "1 to 100 characters" in line
    assert not library.exists()


@pytest.mark.parametrize(
    ("argv", "prefix"),
    [
        (["sync", "--time-limit", "-5"], "screvi-mcp sync: argument --time-limit"),
        (["sync", "--time-limit", "nan"], "screvi-mcp sync: argument --time-limit"),
        (["--mirror-max-age", "-1"], "screvi-mcp: argument --mirror-max-age"),
        (["--mirror-max-age", "inf"], "screvi-mcp: argument --mirror-max-age"),
    ],
)
def test_a_duration_that_is_not_a_number_of_seconds_is_named(
    argv: list[str], prefix: str, capsys: pytest.CaptureFixture[str]
) -> None:
    # Both were taken: a negative age served a mirror, NaN ran a sync with no limit at all.
    line = mistake(argv, capsys)
    assert line.startswith(prefix)
    assert "number of seconds, 0 or more" in line
