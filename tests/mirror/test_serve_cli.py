"""`screvi-mcp --mirror` refuses a file that is not a mirror of this account, and says why."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mirror_testkit import StandIn, sync

WAIT_SECONDS = 60.0


def _serve(library: Path, **env: str) -> subprocess.CompletedProcess[str]:
    clean = {k: v for k, v in os.environ.items() if not k.startswith("SCREVI_")}
    return subprocess.run(
        [sys.executable, "-m", "screvi_mcp", "--mirror", "--library", str(library)],
        env={**clean, **env},
        capture_output=True,
        text=True,
        timeout=WAIT_SECONDS,
        stdin=subprocess.DEVNULL,
    )


def test_a_file_that_is_not_a_mirror_is_refused(tmp_path: Path) -> None:
    done = _serve(tmp_path / "plain.sqlite3")
    assert done.returncode == 2
    assert "not a mirror yet" in done.stderr and "screvi-mcp sync" in done.stderr
    assert done.stdout == ""


async def test_a_mirror_of_another_key_is_refused_without_showing_either_key(
    stand_in: StandIn, mirror_path: Path
) -> None:
    await sync(stand_in, mirror_path)
    other = "sk_live_someone_else_entirely"
    done = _serve(mirror_path, SCREVI_API_KEY=other, SCREVI_BASE_URL=stand_in.base_url)
    assert done.returncode == 2 and "--new-key" in done.stderr
    assert other not in done.stderr and stand_in.key not in done.stderr
