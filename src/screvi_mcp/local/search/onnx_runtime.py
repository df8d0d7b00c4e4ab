"""onnxruntime, imported with its usage telemetry off.

Since 1.29 the PyPI builds report usage to Microsoft on Linux too. A local library must not
phone home, and the switch only works if it is set before the runtime initialises, so every
module of ours imports onnxruntime from here. A user who wants telemetry can set the
variables to 0 themselves.
"""

from __future__ import annotations

import os

# Both spellings: the runtime has honoured each in different releases.
for _variable in ("ORT_DISABLE_TELEMETRY", "ORT_TELEMETRY_DISABLED"):
    os.environ.setdefault(_variable, "1")

import onnxruntime as ort  # noqa: E402  (the environment must be set first)

if os.environ.get("ORT_DISABLE_TELEMETRY") != "0":
    ort.disable_telemetry_events()

__all__ = ["ort"]
