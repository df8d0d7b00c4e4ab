"""The MCP conformance suite (`@modelcontextprotocol/conformance`, pinned in e2e/package.json,
run on the pinned Node 22) against `screvi-mcp` over streamable HTTP. Scenarios that need the
reference "everything" server's fixtures are listed, each with its reason, in
e2e/conformance-baseline.yml; the suite fails on any other failure and on a listed scenario
that has started to pass."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from e2e_harness import (
    CONFORMANCE_BASELINE,
    CONFORMANCE_BIN,
    NODE,
    McpHttp,
    quiet_env,
    require,
    run,
)

pytestmark = pytest.mark.e2e


def baseline_scenarios() -> set[str]:
    return set(re.findall(r"^  - ([a-z0-9-]+)", CONFORMANCE_BASELINE.read_text(), re.MULTILINE))


def test_conformance_suite_passes_against_streamable_http(
    mcp_http: McpHttp, e2e_root: Path, client_home: Path
) -> None:
    results = e2e_root / "conformance"
    done = run(
        [
            require(NODE),
            require(CONFORMANCE_BIN),
            "server",
            "--url",
            mcp_http.url,
            "--expected-failures",
            require(CONFORMANCE_BASELINE),
            "--output-dir",
            results,
        ],
        env=quiet_env(client_home),
        timeout=240,
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output[-6000:]

    # Judge from the saved checks too, so a suite that ran nothing cannot pass.
    outcomes: dict[str, bool] = {}
    for checks_file in results.glob("server-*/checks.json"):
        scenario = re.sub(r"^server-(.+)-\d{4}-\d\d-\d\dT.*$", r"\1", checks_file.parent.name)
        checks = json.loads(checks_file.read_text())
        outcomes[scenario] = all(check["status"] != "FAILURE" for check in checks)
    assert len(outcomes) >= 30, sorted(outcomes)
    failed = {scenario for scenario, passed in outcomes.items() if not passed}
    assert failed == baseline_scenarios(), output[-6000:]
    for essential in ("server-initialize", "tools-list", "ping", "dns-rebinding-protection"):
        assert outcomes[essential], essential
