"""The `screvi-mcp` entry point run in-process, as a test of a refusal runs it.

A refusal returns before anything is served, so running `cli.main` in the test's own
interpreter checks the same exit status and stderr without starting one (a second or more
of CPU each: the server's imports come before the check). A command that did start would
serve pytest's empty stdin and return 0, so a missed refusal still fails its test. Tests
that a host's launch works keep a real subprocess.
"""

from __future__ import annotations

import os

import pytest

from screvi_mcp.cli import main


def run_command(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    *argv: str,
    env: dict[str, str] | None = None,
) -> tuple[int, str, str]:
    """(exit status, stdout, stderr) of `screvi-mcp ARGV` with only `env`'s SCREVI_ variables."""
    for key in list(os.environ):
        if key.startswith("SCREVI_"):
            monkeypatch.delenv(key)
    for key, value in (env or {}).items():
        monkeypatch.setenv(key, value)
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err
