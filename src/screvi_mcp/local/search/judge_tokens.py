"""The judge's token vectors: always the bundled MiniLM's, kept per text in a bounded cache.

verify=true's cost was the model run over the query and its 20 matches (97% of it; issue 30).
Two things make that run cheaper and repeatable:

- **One token model for every judge.** The token vectors come from the bundled MiniLM
  (shipped file: int8 weights cast to float at run time) whichever model ranks: with
  all-mpnet-base-v2 ranking, mpnet's own int8 model cost 2.3x MiniLM's CPU for the same
  texts, and its token vectors varied with their batch-mates (onnxruntime's dynamic
  quantisation takes one scale per batch: up to 0.02 in a component). MiniLM computes in
  float, so a text's vectors are the same alone or in any batch (test_verify_speed.py), and
  the judge fitted for each ranking model reads them (mpnet/calibration.MPNET_JUDGE).
- **A cache per text.** Because a text's vectors do not depend on its batch, they can be
  kept: a match judged once costs nothing the next time, and a repeated query costs no model
  run at all. Keyed by a digest of the text (one cache per token model; an edited highlight
  is a new key, its old entry ages out), bounded by bytes, least recently used dropped first.
  The cached arrays are read-only, so no caller can change another's evidence.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Callable

from screvi_mcp.local.search.embedder import Embedder, Vectors, load_english_embedder

TokenSet = tuple[list[str], Vectors]

# About 45 KB a highlight (30 tokens x 384 float32): some 700 highlights, the matches of 35
# distinct queries or more. Bounded so that a long session does not grow the server.
CACHE_BYTES = 32 * 1024 * 1024


class TokenCache:
    """Token vectors per text from one token model, loaded when first needed (a server that
    never verifies never loads it)."""

    def __init__(self, load: Callable[[], Embedder], max_bytes: int = CACHE_BYTES) -> None:
        self._load = load
        self._embedder: Embedder | None = None
        self.max_bytes = max_bytes
        self._entries: OrderedDict[bytes, TokenSet] = OrderedDict()
        self._bytes = 0
        self._lock = threading.Lock()
        self.computed = 0  # texts run through the model (tests and the benchmark read it)

    def token_vectors(self, texts: list[str]) -> list[TokenSet]:
        """Each text's tokens and L2-normalised vectors (Embedder.token_vectors), in order."""
        keys = [_key(text) for text in texts]
        found: dict[bytes, TokenSet] = {}
        with self._lock:
            for key in keys:
                entry = self._entries.get(key)
                if entry is not None:
                    self._entries.move_to_end(key)
                    found[key] = entry
        missing = {key: text for key, text in zip(keys, texts, strict=True) if key not in found}
        if missing:
            computed = self.embedder().token_vectors(list(missing.values()))
            for _, vectors in computed:
                vectors.flags.writeable = False
            found.update(zip(missing, computed, strict=True))
            self._store(dict(zip(missing, computed, strict=True)))
        return [found[key] for key in keys]

    def embedder(self) -> Embedder:
        if self._embedder is None:
            self._embedder = self._load()
        return self._embedder

    def clear(self) -> None:
        with self._lock:
            self._entries.clear()
            self._bytes = 0

    def _store(self, entries: dict[bytes, TokenSet]) -> None:
        with self._lock:
            self.computed += len(entries)
            for key, entry in entries.items():
                if key in self._entries:
                    continue
                size = entry[1].nbytes
                if size > self.max_bytes:
                    continue
                self._entries[key] = entry
                self._bytes += size
            while self._bytes > self.max_bytes:
                _, dropped = self._entries.popitem(last=False)
                self._bytes -= dropped[1].nbytes


def _key(text: str) -> bytes:
    return hashlib.blake2b(text.encode("utf-8"), digest_size=16).digest()


def _bundled_minilm() -> Embedder:
    from screvi_mcp.local.search.mpnet import MINILM

    return load_english_embedder(MINILM)


# One per process: libraries opened side by side share the model and the cache.
SHARED = TokenCache(_bundled_minilm)
