"""The benchmark entry points the README shows answer `--help` and refuse bad arguments.

`python -m bench.profile search|ingest PATH`, `python -m bench.import_kindle 20000` and
`python -m bench.library_worker ingest COPY 1000` are run by hand from the README; without
arguments they used to end in an IndexError traceback, and an unknown `bench.profile` command
profiled `ingest`, which writes into the library it is given.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parent.parent
ENTRY_POINTS = ("bench.profile", "bench.import_kindle", "bench.library_worker")


def run(*argv: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", *argv],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_help_prints_usage(module: str) -> None:
    done = run(module, "--help")
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m {module}")


@pytest.mark.parametrize("module", ENTRY_POINTS)
def test_missing_arguments_are_a_usage_error_not_a_traceback(module: str) -> None:
    done = run(module)
    assert done.returncode == 2
    assert "Traceback" not in done.stderr
    assert "usage:" in done.stderr


def test_an_unknown_profile_command_is_refused_before_touching_the_library(
    tmp_path: Path,
) -> None:
    library = tmp_path / "library.sqlite3"
    done = run("bench.profile", "serach", str(library))
    assert done.returncode == 2
    assert "invalid choice" in done.stderr
    assert not library.exists()
