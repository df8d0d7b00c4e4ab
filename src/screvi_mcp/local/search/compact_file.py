"""A compact matrix's codes saved beside the library, so that opening reads them in one go.

Opening a million-highlight library compactly streamed every float32 vector out of SQLite
and quantized it (35.6 s on the shared machine, most of it SQLite rows and Python tuples).
The codes are about 0.9 GB at 1M x 768: read back from one file they take a few seconds.

The file is a cache, never the truth: it records the embedding change log's position and
the number of stored vectors when it was written. Opening uses it only when the log still
holds every change since (vectors written or deleted after it are then read back from
SQLite, as `SemanticIndex.sync` does for another process's writes), and only when, with no
change since, the count of stored vectors is unchanged. Anything else (an older format,
another model, a log pruned past it, a file cut short) is rebuilt from SQLite and saved
again. It is written to a temporary name and renamed, so a reader never sees half a file.

Layout: a magic line, a 4-byte little-endian header length, a JSON header, then the seqs
(int64), the int8 steps (float32), the int8 codes (row-major) and the sign codes
(word-major), each `count` rows long.
"""

from __future__ import annotations

import json
import os
import struct
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

import numpy as np
import numpy.typing as npt

MAGIC = b"screvi-compact-codes\n"
VERSION = 1
_LENGTH = struct.Struct("<I")


@dataclass(frozen=True)
class Stamp:
    """What a codes file must agree with to be used: the vectors it was made from."""

    model: str
    dimensions: int
    change: int  # the newest embedding change the codes include
    vectors: int  # stored vectors of the model then (count_vectors)


@dataclass(frozen=True)
class Arrays:
    """A compact matrix's codes, `count` rows each (views of its buffers)."""

    seqs: npt.NDArray[np.int64]
    steps: npt.NDArray[np.float32]
    codes: npt.NDArray[np.int8]
    signs: npt.NDArray[np.uint64]  # words x count


def codes_path(database: Path, table: str) -> Path:
    """Where the codes of `table`'s vectors in `database` are kept."""
    return database.with_name(f"{database.name}-{table}.codes")


def save(path: Path, stamp: Stamp, arrays: Arrays) -> None:
    header = json.dumps(
        {"version": VERSION, "count": int(arrays.seqs.shape[0]), **stamp.__dict__}
    ).encode()
    temporary = path.with_name(f"{path.name}.{os.getpid()}.tmp")
    try:
        # Owner-only, as the library (the codes say roughly what each highlight means).
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(descriptor, "wb") as out:
            out.write(MAGIC + _LENGTH.pack(len(header)) + header)
            # The word-major sign codes one contiguous row (word) at a time.
            for array in _parts(arrays):
                out.write(np.ascontiguousarray(array).data.cast("B"))
        os.replace(temporary, path)
    finally:
        temporary.unlink(missing_ok=True)


def read_header(source: IO[bytes]) -> dict[str, Any] | None:
    """The header of an open codes file, or None when it is not one this version reads."""
    if source.read(len(MAGIC)) != MAGIC:
        return None
    length = source.read(_LENGTH.size)
    if len(length) != _LENGTH.size:
        return None
    try:
        header: dict[str, Any] = json.loads(source.read(_LENGTH.unpack(length)[0]))
    except ValueError:
        return None
    return header if header.get("version") == VERSION else None


def stamp_of(header: dict[str, Any]) -> Stamp:
    return Stamp(
        str(header["model"]),
        int(header["dimensions"]),
        int(header["change"]),
        int(header["vectors"]),
    )


def read_into(source: IO[bytes], arrays: Arrays) -> bool:
    """Fill `arrays` (sized to the header's count) from the file after its header; False
    when the file ends early."""
    for array in _parts(arrays):
        view = array.data.cast("B")
        if source.readinto(view) != view.nbytes:  # type: ignore[attr-defined]
            return False
    return True


def _parts(arrays: Arrays) -> list[npt.NDArray[Any]]:
    """The arrays in file order; empty ones left out (a memoryview of no rows cannot be
    cast to bytes, and there is nothing to write)."""
    parts = [arrays.seqs, arrays.steps, arrays.codes, *arrays.signs]
    return [array for array in parts if array.size]
