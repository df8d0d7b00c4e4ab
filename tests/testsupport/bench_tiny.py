"""Running `python -m bench --tiny` in parts, so that pytest-xdist spreads them over workers.

One run of every section took ~70 CPU-seconds, most of it starting servers and loading
models, and was the suite's longest test (121 s of wall time with `-n 3`); ~56 since --tiny
does one of each repeat (issue 29: the rest is mostly server starts, ~1.2-2.5 CPU-s each,
eleven of them in the http and stdio groups). Each group below
runs in its own test module (tests/conftest.py schedules by module), so the groups start
side by side; a group is a fresh `python -m bench --tiny --sections ...` process, as CI would
run it. Groups keep together the sections that share a library the run builds (the mixed
library: `mixed` and `search_parts`), and leave out the generated one where none needs it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent.parent

# Each group's CPU seconds at load ~3 (`section_cpu_seconds` in the JSON, plus ~0.3 s to
# start and ~1 s to build the generated library where a section reads it); in all, with
# those, 56 CPU-s (76 before the tiny run did one of each repeat, same run).
GROUPS: dict[str, tuple[str, ...]] = {
    "library": ("library", "verify"),  # 3.6 + 0.8
    "http": ("http",),  # 15: six servers
    "stdio": ("cold_start", "tool_call"),  # 5 + 5.6: five servers
    "articles": ("articles", "english_models", "import"),  # 2.8 + 2.6 + 1.8
    "embedding": ("embedding", "million"),  # 2.1 + 3.8
    "mixed": ("mixed", "search_parts", "tokens"),  # 2.6 + 2.1 + 1.3; the first two share a library
}


def bench_sections() -> tuple[str, ...]:
    """`bench.runner.SECTIONS`, read from its source: importing bench here would need the
    repository on sys.path and load the SDK into the test worker."""
    tree = ast.parse((REPO / "bench" / "runner.py").read_text())
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(target, ast.Name) and target.id == "SECTIONS" for target in node.targets
        ):
            sections: tuple[str, ...] = ast.literal_eval(node.value)
            return sections
    raise AssertionError("bench/runner.py declares no SECTIONS")


def _env() -> dict[str, str]:
    return {
        key: value
        for key, value in os.environ.items()
        if not key.startswith("SCREVI_") or key == "SCREVI_ENGLISH_MODEL"
    }


def run_group(group: str, out: Path) -> tuple[dict[str, Any], str]:
    """Run one group's sections at toy size; its results and the table it printed."""
    sections = ",".join(GROUPS[group])
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--tiny", "--sections", sections, "--out", str(out)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,  # a bound against hanging: the slowest group takes ~20 CPU-s
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    results: dict[str, Any] = json.loads((out / "tiny.json").read_text())
    for section in GROUPS[group]:
        assert section in results, f"section {section} missing"
    assert "targets" in results
    assert "Figure" in done.stdout  # the table was printed
    return results, done.stdout


def markdown(results_file: Path) -> str:
    """The README's table, rendered from a results file by `python -m bench --markdown`."""
    done = subprocess.run(
        [sys.executable, "-m", "bench", "--markdown", str(results_file)],
        cwd=REPO,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-4000:]
    return done.stdout
