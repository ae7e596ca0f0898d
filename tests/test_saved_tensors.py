"""Reading where a checkpoint's tensors were saved, without torch, from files torch itself wrote."""

from __future__ import annotations

import io
import pickle
import zipfile
from pathlib import Path

import pytest

from devlint.project.saved_tensors import saved_locations

torch = pytest.importorskip("torch")


def test_torchs_own_formats_name_the_cpu(tmp_path: Path) -> None:
    state = {"w": torch.zeros(2), "layers": [torch.ones(3), torch.ones(3)], "step": 7}
    torch.save(state, tmp_path / "zip.pt")
    torch.save(state, tmp_path / "legacy.pt", _use_new_zipfile_serialization=False)
    torch.save({"step": 7, "device": "cuda:0"}, tmp_path / "numbers.pt")
    assert saved_locations(tmp_path / "zip.pt") == ("cpu",)
    assert saved_locations(tmp_path / "legacy.pt") == ("cpu",)
    assert saved_locations(tmp_path / "numbers.pt") == ()  # no tensor: the string is data, not a location


def test_a_storage_saved_on_a_gpu_is_named_with_its_device(tmp_path: Path) -> None:
    # No GPU here: the pickle torch writes is reproduced with the location a CUDA tensor records.
    class Pickler(pickle.Pickler):
        def persistent_id(self, obj: object) -> object:
            if isinstance(obj, torch.UntypedStorage):
                return ("storage", torch.FloatStorage, "0", "cuda:0", 2)
            return None

    data = io.BytesIO()
    Pickler(data, protocol=2).dump({"w": torch.zeros(2).untyped_storage(), "again": torch.zeros(2).untyped_storage()})
    with zipfile.ZipFile(tmp_path / "gpu.pt", "w") as archive:
        archive.writestr("gpu/data.pkl", data.getvalue())
    assert saved_locations(tmp_path / "gpu.pt") == ("cuda:0",)


def test_what_is_no_checkpoint_tells_nothing(tmp_path: Path) -> None:
    (tmp_path / "lfs.pt").write_text("version https://git-lfs.github.com/spec/v1\noid sha256:0\nsize 12\n")
    with zipfile.ZipFile(tmp_path / "other.zip", "w") as archive:
        archive.writestr("readme.txt", "no pickle")
    assert saved_locations(tmp_path / "lfs.pt") is None
    assert saved_locations(tmp_path / "other.zip") is None
    assert saved_locations(tmp_path / "absent.pt") is None
