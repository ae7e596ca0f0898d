"""TorchScript and torch.compile code under the mode: no crash, one notice, same results."""

from __future__ import annotations

import warnings

import pytest

torch = pytest.importorskip("torch")

from torch import nn  # noqa: E402

import devlint.runtime as dlr  # noqa: E402
from devlint.runtime import interception  # noqa: E402


@pytest.fixture
def fresh_notices(monkeypatch):
    monkeypatch.setattr(interception, "_said_once", set())


def _model() -> nn.Module:
    torch.manual_seed(0)
    return nn.Sequential(nn.Linear(8, 8), nn.ReLU(), nn.Linear(8, 2))


def _skipped_notices(seen) -> list[str]:
    return [str(w.message) for w in seen if w.category is dlr.DeviceCheckSkippedWarning]


@pytest.mark.usefixtures("fresh_notices")
def test_torchscript_runs_and_says_once_what_is_not_checked():
    model = _model()
    x = torch.randn(3, 8)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(model)
        traced = torch.jit.trace(model, x)
    expected = model(x)
    with dlr.check_devices(), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        assert torch.equal(scripted(x), expected)
        assert torch.equal(scripted(x), expected)
        assert torch.equal(traced(x), expected)
    assert _skipped_notices(seen) == [
        "devlint.runtime names the TorchScript modules such as RecursiveScriptModule where a device mismatch "
        "happens, but not the module calls inside them: TorchScript runs those without Python. (Said once per process.)"
    ]


@pytest.mark.usefixtures("fresh_notices")
def test_a_mismatch_inside_torchscript_names_the_scripted_module():
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        scripted = torch.jit.script(nn.Linear(2, 2).to("meta"))
    with dlr.check_devices(), warnings.catch_warnings():
        warnings.simplefilter("ignore", dlr.DeviceCheckSkippedWarning)
        with pytest.raises(dlr.DeviceMismatchError) as caught:
            scripted(torch.zeros(1, 2))
    assert caught.value.module_path == "scripted"


@pytest.mark.usefixtures("fresh_notices")
def test_torch_compile_runs_without_graph_breaks_and_says_once():
    model = _model()
    x = torch.randn(3, 8)
    expected = model(x)
    with dlr.check_devices(), warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        compiled = torch.compile(model, backend="eager")
        assert torch.equal(compiled(x), expected)
        assert torch.equal(compiled(x), expected)
        # A compiled function that calls the model: Dynamo traces Module.__call__ itself.
        assert torch.equal(torch.compile(lambda t: model(t), backend="eager")(x), expected)
        explained = torch._dynamo.explain(model)(x)
    assert explained.graph_break_count == 0
    # Dynamo keeps the Module.__call__ it saw when first imported (here, inside
    # the block): devlint swaps only its code, so that is still the original.
    assert torch._dynamo.utils.unpatched_nn_module_call is nn.Module.__call__
    assert _skipped_notices(seen) == [
        "devlint.runtime names the torch.compile modules such as OptimizedModule where a device mismatch "
        "happens, but not the module calls inside them: torch.compile runs those without Python. (Said once per process.)"
    ]
