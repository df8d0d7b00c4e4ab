"""scripts/test.sh's two workers share the expensive fixtures (tests/conftest.py): a session
fixture is built once, on one worker, for every test that uses it, however many modules
they sit in. On pytest 9.2 xdist's own grouping was silently ignored and each worker built
the search evaluation libraries and the e2e servers again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

pytest.importorskip("xdist")

HERE = Path(__file__).resolve().parent
PYTEST = [sys.executable, "-m", "pytest", "-q", "-n", "2", "--dist", "loadgroup"]
PYTEST += ["-p", "no:cacheprovider"]

SHARED = """
import os, pytest

@pytest.fixture(scope="session")
def expensive(tmp_path_factory):
    marker = os.environ["MARKS"]
    with open(os.path.join(marker, "built-" + os.environ["PYTEST_XDIST_WORKER"]), "a") as f:
        f.write("x")
    return "built"
"""

USER = """
import os

def test_{n}_a(expensive):
    open(os.path.join(os.environ["MARKS"], "ran-{n}-a-" + os.environ["PYTEST_XDIST_WORKER"]), "w")

def test_{n}_b(expensive):
    open(os.path.join(os.environ["MARKS"], "ran-{n}-b-" + os.environ["PYTEST_XDIST_WORKER"]), "w")
"""


def test_a_session_fixture_is_built_once_for_the_modules_that_share_it(tmp_path: Path) -> None:
    project = tmp_path / "project"
    shared = project / "shared"
    shared.mkdir(parents=True)
    shutil.copy(HERE / "conftest.py", project / "conftest.py")
    (shared / "conftest.py").write_text(SHARED)
    for n in range(3):
        (shared / f"test_user_{n}.py").write_text(USER.format(n=n))
    # Enough tests of their own that a scheduler ignoring the groups spreads the others.
    (project / "test_alone.py").write_text(
        "".join(f"def test_alone_{n}():\n    pass\n\n" for n in range(8))
    )
    marks = tmp_path / "marks"
    marks.mkdir()
    done = subprocess.run(
        [*PYTEST, "--rootdir", str(project), str(project)],
        cwd=project,
        env={**os.environ, "MARKS": str(marks)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    built = [path.name for path in marks.glob("built-*")]
    assert len(built) == 1 and (marks / built[0]).read_text() == "x", built
    worker = built[0].removeprefix("built-")
    ran = sorted(path.name for path in marks.glob("ran-*"))
    assert len(ran) == 6 and all(name.endswith(worker) for name in ran), ran
