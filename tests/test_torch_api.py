"""The torch vocabulary is generated from torch itself (tools/gen_torch_api.py) and kept in step."""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from devlint.analysis.torchapi import generated

ROOT = Path(__file__).resolve().parent.parent
_LIBRARIES = {"torch": generated.TORCH_VERSION, "numpy": generated.NUMPY_VERSION, "pandas": generated.PANDAS_VERSION, "PIL": generated.PILLOW_VERSION}


def _installed_versions() -> dict[str, str | None]:
    found: dict[str, str | None] = {}
    for name in _LIBRARIES:
        if importlib.util.find_spec(name) is None:
            found[name] = None
            continue
        module = importlib.import_module(name)
        found[name] = str(getattr(module, "__version__", "")).split("+")[0]
    return found


def test_generated_module_matches_the_installed_torch() -> None:
    installed = _installed_versions()
    differing = {name: (installed[name], wanted) for name, wanted in _LIBRARIES.items() if installed[name] != wanted}
    if differing:
        pytest.skip(f"generated from other versions than those installed: {differing}")
    result = subprocess.run([sys.executable, str(ROOT / "tools" / "gen_torch_api.py"), "--check"], capture_output=True, text=True)
    assert result.returncode == 0, result.stderr


def test_known_facts_of_torch_are_in_the_data() -> None:
    # Spot checks that the introspection reads what PyTorch documents.
    assert generated.FACTORIES["torch.zeros"] == "default"
    assert generated.FACTORIES["torch.from_numpy"] == "cpu"  # shares the array's CPU memory
    assert generated.FACTORIES["torch.FloatTensor"] == "cpu"  # legacy constructors ignore the default device
    assert "torch.zeros" in generated.FACTORIES_WITH_DEVICE and "torch.from_numpy" not in generated.FACTORIES_WITH_DEVICE
    assert generated.TENSOR_METHOD_RESULTS["item"] == "value"
    assert generated.TENSOR_METHOD_RESULTS["unsqueeze"] == "tensor"
    assert generated.TENSOR_METHOD_RESULTS["chunk"] == "tensors"
    assert "unsqueeze" in generated.TENSOR_ONLY_MEMBERS
    assert "view" not in generated.TENSOR_ONLY_MEMBERS  # numpy arrays have .view() too
    assert "to" not in generated.TENSOR_ONLY_MEMBERS  # so do modules
    assert "parameters" in generated.MODULE_ONLY_MEMBERS
    assert "state_dict" not in generated.MODULE_ONLY_MEMBERS  # optimizers have one too
    assert {"T", "data", "grad"} <= generated.TENSOR_VALUED_ATTRIBUTES and "shape" not in generated.TENSOR_VALUED_ATTRIBUTES
    assert "torch.cuda.synchronize" in generated.CUDA_RAISING_CALLS
    assert "torch.cuda.manual_seed_all" in generated.CUDA_SAFE_CALLS
    assert "ReLU" in generated.NN_STATELESS_MODULES and "Linear" not in generated.NN_STATELESS_MODULES
    assert generated.NN_STATE_ARGUMENTS["CrossEntropyLoss"] == "weight:0"
    assert "Linear" in generated.NN_MODULES_WITH_DEVICE


def test_the_static_half_reads_it_without_torch() -> None:
    source = (ROOT / "devlint" / "analysis" / "torchapi" / "generated.py").read_text(encoding="utf-8")
    assert "import" not in source.split('"""', 2)[2]
