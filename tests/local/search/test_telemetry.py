"""The embedded library's search must not phone home: onnxruntime's telemetry is off."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytest.importorskip("onnxruntime", reason="the 'local' extra is not installed (onnxruntime)")


def test_importing_the_embedder_turns_onnxruntime_telemetry_off() -> None:
    # A fresh interpreter, so the order of imports is the product's, not the test run's.
    env = {k: v for k, v in os.environ.items() if not k.startswith("ORT_")}
    probe = (
        "import os, sys\n"
        "import screvi_mcp.local.search.embedder\n"
        "assert 'onnxruntime' in sys.modules\n"
        "print(os.environ.get('ORT_DISABLE_TELEMETRY'), os.environ.get('ORT_TELEMETRY_DISABLED'))\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", probe], env=env, capture_output=True, text=True, check=True
    )
    assert result.stdout.split() == ["1", "1"]


def test_only_our_wrapper_imports_onnxruntime() -> None:
    from pathlib import Path

    import screvi_mcp

    root = Path(screvi_mcp.__file__).parent
    offenders = [
        str(path.relative_to(root))
        for path in root.rglob("*.py")
        if path.name != "onnx_runtime.py"
        and "import onnxruntime" in path.read_text(encoding="utf-8")
    ]
    assert offenders == [], "import onnxruntime only via local/search/onnx_runtime.py"
