"""`scripts/serve.sh`: installs only when needed, starts offline, fails in one line.

Each test runs the real script from a copy of the project's top level (script and
pyproject.toml) whose `.venv` points at this test run's interpreter and `screvi-mcp`, so
nothing is installed into the real venv. pip is pointed at nothing (no index, no links):
any install attempt fails, which is how "starts offline" is checked.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testsupport.polling import wait_until
from testsupport.servers import free_port

ROOT = Path(__file__).resolve().parents[1]
START_TIMEOUT_SECONDS = 60  # a bound on waiting for the server, not a speed check
OFFLINE_PIP = {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": "", "PIP_CONFIG_FILE": os.devnull}


def screvi_command() -> Path:
    command = Path(sys.executable).with_name("screvi-mcp")
    if not command.is_file():
        pytest.skip("no installed screvi-mcp command next to the test interpreter")
    return command


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A project folder as after a completed install: script, pyproject.toml, .venv, stamp."""
    root = tmp_path / "project"
    (root / "scripts").mkdir(parents=True)
    for script in ("serve.sh", "install_stamp.py"):
        shutil.copy(ROOT / "scripts" / script, root / "scripts" / script)
    shutil.copy(ROOT / "pyproject.toml", root / "pyproject.toml")
    venv_bin = root / ".venv" / "bin"
    venv_bin.mkdir(parents=True)
    # A wrapper, not a symlink: a symlink would lose the venv (found from pyvenv.cfg).
    python = venv_bin / "python"
    python.write_text(f'#!/bin/sh\nexec {sys.executable} "$@"\n')
    python.chmod(0o755)
    (venv_bin / "screvi-mcp").symlink_to(screvi_command())
    stamp = subprocess.run(
        [sys.executable, str(root / "scripts" / "install_stamp.py")],
        cwd=root,
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    (root / ".venv" / ".screvi-mcp-installed").write_text(stamp)
    return root


def serve(project: Path, port: int, library: Path) -> subprocess.Popen[str]:
    env = {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SCREVI_") or key == "SCREVI_ENGLISH_MODEL"
    }
    env.update(OFFLINE_PIP, PORT=str(port), SCREVI_LIBRARY=str(library))
    return subprocess.Popen(
        ["bash", str(project / "scripts" / "serve.sh")],
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


@pytest.fixture
def stop() -> Iterator[list[subprocess.Popen[str]]]:
    started: list[subprocess.Popen[str]] = []
    yield started
    for process in started:
        if process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=START_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()


def test_a_complete_venv_starts_offline_without_installing(
    project: Path, tmp_path: Path, stop: list[subprocess.Popen[str]]
) -> None:
    port = free_port()
    process = serve(project, port, tmp_path / "library.sqlite3")
    stop.append(process)

    def answers() -> bool:
        if process.poll() is not None:
            pytest.fail(f"serve.sh exited {process.returncode}: {process.communicate()[1]}")
        return httpx.get(f"http://127.0.0.1:{port}/health", timeout=2).status_code == 200

    wait_until(
        answers,
        timeout=START_TIMEOUT_SECONDS,
        what="the server did not answer /health",
        every=0.2,
        transient=(httpx.TransportError,),
    )
    process.terminate()
    _, err = process.communicate(timeout=START_TIMEOUT_SECONDS)
    assert "installing" not in err
    assert f"http://127.0.0.1:{port}/mcp" in err


def test_changed_dependencies_reinstall_and_a_failed_install_is_one_line(
    project: Path, tmp_path: Path
) -> None:
    text = (project / "pyproject.toml").read_text()
    assert '"httpx>=0.28,<1",' in text
    changed = text.replace('"httpx>=0.28,<1",', '"httpx>=0.28.1,<1",')  # a dependency
    (project / "pyproject.toml").write_text(changed)
    # pip cannot reach anything (OFFLINE_PIP), as on a machine without network.
    (project / ".venv" / "bin" / "python").unlink()
    fake_python = project / ".venv" / "bin" / "python"
    fake_python.write_text(
        f'#!/bin/sh\nif [ "$1 $2" = "-m pip" ]; then exit 1; fi\nexec {sys.executable} "$@"\n'
    )
    fake_python.chmod(0o755)
    done = subprocess.run(
        ["bash", str(project / "scripts" / "serve.sh")],
        env={**os.environ, **OFFLINE_PIP, "PORT": str(free_port())},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_SECONDS,
    )
    lines = done.stderr.strip().splitlines()
    assert done.returncode != 0
    assert lines[0].startswith("scripts/serve.sh: installing")  # it knew it had to
    assert len(lines) == 2 and "installing failed" in lines[1] and "install.log" in lines[1]
    assert done.stdout == ""


def test_a_busy_port_is_one_line_before_any_connect_advice(project: Path, tmp_path: Path) -> None:
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        process = serve(project, port, tmp_path / "library.sqlite3")
        out, err = process.communicate(timeout=START_TIMEOUT_SECONDS)
    assert process.returncode != 0
    assert err.strip().splitlines() == [err.strip()], err
    assert f"127.0.0.1:{port}" in err and "PORT=" in err
    assert "serving" not in err and "Claude" not in err and out == ""


def test_a_bad_port_value_is_one_line(project: Path) -> None:
    done = subprocess.run(
        ["bash", str(project / "scripts" / "serve.sh")],
        env={**os.environ, "PORT": "80a"},
        capture_output=True,
        text=True,
        timeout=START_TIMEOUT_SECONDS,
    )
    assert done.returncode != 0
    assert done.stderr.strip() == "scripts/serve.sh: PORT=80a is not a port number"


def test_tool_settings_do_not_force_a_reinstall(
    project: Path, tmp_path: Path, stop: list[subprocess.Popen[str]]
) -> None:
    with (project / "pyproject.toml").open("a") as handle:
        handle.write("\n[tool.somelinter]\nstrict = true\n")
    test_a_complete_venv_starts_offline_without_installing(project, tmp_path, stop)
