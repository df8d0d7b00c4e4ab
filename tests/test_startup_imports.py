"""Commands load only what they use: every start of `screvi-mcp` pays its imports in CPU.

The MCP SDK alone costs about a CPU-second to import, the search model's runtime (numpy,
onnxruntime) half as much again, the search engine and the page fetcher a tenth each; a
command that never serves MCP, never searches or never fetches must not pay for them.
(`--help` and the parser: tests/test_cli_layout.py; the hosted server's start-up: the
benchmark's cold-start section, tests/test_bench_tiny_stdio.py.)
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from screvi_mcp.local.storage.library import Library

NEVER = ("mcp", "numpy", "onnxruntime", "tokenizers", "screvi_mcp.server.app")
# Each command, run in turn in one fresh interpreter, and what must not be loaded after it.
# One process for all three is sound: each check runs right after its command, and what a
# later command may not load, an earlier one may not either.
COMMANDS: list[tuple[list[str], tuple[str, ...]]] = [
    (["keys", "list"], (*NEVER, "httpx", "pydantic", "screvi_mcp.local.search.engine")),
    # Offline, `check` reads files: no HTTP client, no sync engine (for a constant).
    (["check"], (*NEVER, "httpx", "screvi_mcp.mirror.sync", "screvi_mcp.local.search.engine")),
    (
        ["export", "json", "--quiet", "{out}"],
        (*NEVER, "screvi_mcp.local.search.engine", "screvi_mcp.local.fetching.save"),
    ),
    (["review", "--markdown"], (*NEVER, "screvi_mcp.local.search.engine")),
]

DRIVER = """
import json, sys
from screvi_mcp.cli import main
commands = json.loads(sys.argv[1])
loaded = []
for argv, forbidden in commands:
    code = main(argv)
    found = sorted(
        m for m in sys.modules if any(m == f or m.startswith(f + ".") for f in forbidden)
    )
    loaded.append({"argv": argv, "code": code, "loaded": found})
print(json.dumps(loaded), file=sys.stderr)
"""


def test_one_shot_commands_load_no_mcp_model_runtime_or_search_engine(tmp_path: Path) -> None:
    library = tmp_path / "library.sqlite3"
    Library.open(library).close()
    out = tmp_path / "export.json"
    commands = [([a.format(out=out) for a in argv], forbidden) for argv, forbidden in COMMANDS]
    env = {k: v for k, v in os.environ.items() if not k.startswith("SCREVI_")}
    env.update(SCREVI_LIBRARY=str(library), SCREVI_ENGLISH_MODEL="minilm")
    finished = subprocess.run(
        [sys.executable, "-c", DRIVER, json.dumps(commands)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert finished.returncode == 0, finished.stderr
    report = json.loads(finished.stderr.strip().splitlines()[-1])
    assert [each["argv"][0] for each in report] == ["keys", "check", "export", "review"]
    for each in report:
        # `check` answers 1 for anything amiss in this machine's set-up: not the point here.
        assert each["code"] in ((0, 1) if each["argv"] == ["check"] else (0,)), each
        assert each["loaded"] == [], f"`screvi-mcp {' '.join(each['argv'])}` loaded {each}"
    assert json.loads(out.read_text(encoding="utf-8")) is not None  # the export did run
