"""onnxruntime, imported with its usage telemetry off.

Since 1.29 the PyPI builds report usage to Microsoft on Linux too. A local library must not
phone home, and the switch only works if it is set before the runtime initialises, so every
module of ours imports onnxruntime from here. A user who wants telemetry can set the
variables to 0 themselves.
"""

from __future__ import annotations

import os
from pathlib import Path

# Both spellings: the runtime has honoured each in different releases.
for _variable in ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED"):
    os.environ.setdefault(_variable, "1")

import onnxruntime as ort  # noqa: E402  (the environment must be set first)

if os.environ.get("ORT_DISABLE_TELEMETRY") != "0":
    ort.disable_telemetry_events()


def cpu_session(model_path: Path, threads: int | None = None) -> ort.InferenceSession:
    """A CPU inference session set up the way every model of ours runs.

    Idle onnxruntime threads otherwise spin for a while after each run and starve the numpy
    matrix scan that follows a query embedding (measured: 4 ms became 60 ms).
    """
    options = ort.SessionOptions()
    options.intra_op_num_threads = threads or os.cpu_count() or 1
    options.log_severity_level = 3
    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(str(model_path), options, providers=["CPUExecutionProvider"])


__all__ = ["cpu_session", "ort"]
