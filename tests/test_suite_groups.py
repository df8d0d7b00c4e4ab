"""scripts/test.sh's two workers share the expensive fixtures (tests/conftest.py): a session
fixture is built once, on one worker, for every test that uses it, however many modules
they sit in. On pytest 9.2 xdist's own grouping was silently ignored and each worker built
the search evaluation libraries and the e2e servers again."""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path
from types import ModuleType, SimpleNamespace

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


def _conftest() -> ModuleType:
    spec = importlib.util.spec_from_file_location("screvi_suite_conftest", HERE / "conftest.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _item(nodeid: str, *fixtures: tuple[str, str, str]) -> SimpleNamespace:
    """A collected test as the grouping reads it: (where, name, scope) per fixture used."""
    defs = {
        name: [SimpleNamespace(baseid=where, argname=name, scope=scope)]
        for where, name, scope in fixtures
    }
    return SimpleNamespace(nodeid=nodeid, _fixtureinfo=SimpleNamespace(name2fixturedefs=defs))


def test_tests_linked_by_a_session_fixture_share_a_group_and_unrelated_ones_do_not() -> None:
    """The labelled and the blind search libraries sit in one folder but no test uses both:
    two groups, built side by side on two workers (one group by folder built them one after
    the other). A test using two session fixtures joins their users into one group."""
    groups = _conftest()._groups(
        [
            _item("s/test_a.py::one", ("s", "labelled", "session")),
            _item("s/test_b.py::two", ("s", "labelled", "session"), ("", "tmp_path", "function")),
            _item("s/test_c.py::three", ("s", "fresh", "session")),
            _item("e/test_d.py::four", ("e", "servers", "session")),
            _item("e/test_e.py::five", ("e", "servers", "session"), ("e", "home", "session")),
            _item("e/test_f.py::six", ("e", "home", "session")),
            _item("s/test_g.py::seven", ("", "tmp_path_factory", "session")),
        ]
    )
    assert groups["s/test_a.py::one"] == groups["s/test_b.py::two"] != groups["s/test_c.py::three"]
    assert len({groups[f"e/test_{m}"] for m in ("d.py::four", "e.py::five", "f.py::six")}) == 1
    assert groups["s/test_g.py::seven"] == "s/test_g.py"  # pytest's own: the module's group
    assert groups["s/test_c.py::three"] != groups["e/test_d.py::four"]
