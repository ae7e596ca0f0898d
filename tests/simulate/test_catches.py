"""Each must-catch bug: silent on plain CPU, DeviceMismatchError at its line under simulation."""

import inspect

import pytest

torch = pytest.importorskip("torch")

from devlint.runtime.errors import DeviceMismatchError  # noqa: E402
from devlint.runtime.simulate import simulate_cuda  # noqa: E402

from . import bug_scripts  # noqa: E402


def _bug_line(script) -> str:
    lines, start = inspect.getsourcelines(bug_scripts)
    marked = [i + 1 for i, line in enumerate(lines) if "# BUG" in line]
    source, first = inspect.getsourcelines(script)
    own = [first + i for i, line in enumerate(source) if "# BUG" in line]
    if not own:
        # the bug is in a module's forward, defined above the script
        own = [line for line in marked if line < first]
        own = own[-1:]
    return f"{bug_scripts.__file__}:{own[0]}"


@pytest.mark.parametrize("script", bug_scripts.SCRIPTS, ids=lambda s: s.__name__)
def test_silent_on_plain_cpu(script):
    script()


@pytest.mark.parametrize("script", bug_scripts.SCRIPTS, ids=lambda s: s.__name__)
def test_fails_at_the_line_under_simulation(script):
    with simulate_cuda():
        with pytest.raises(DeviceMismatchError) as caught:
            script()
    error = caught.value
    assert error.call_site == _bug_line(script)
    assert "cuda:0" in str(error)
    assert "cpu" in str(error)
    assert error.offenders, str(error)


def test_message_names_op_tensors_module_and_line():
    with simulate_cuda():
        with pytest.raises(DeviceMismatchError) as caught:
            bug_scripts.plain_tensor_attribute()
    error = caught.value
    lines = str(error).splitlines()
    assert lines[0] == "simulated CUDA: Tensor.mul got tensors on different devices (cuda:0, cpu)"
    assert lines[1].split() == ["self", "cuda:0", "shape", "(8,", "8)", "torch.float32"]
    assert lines[2].split() == ["other=args[0]", "(model.scale)", "cpu", "shape", "(8,)", "torch.float32", "<-", "not", "on", "cuda:0"]
    assert lines[3] == "  in module model (_Scaled)"
    assert lines[4] == "  at " + _bug_line(bug_scripts.plain_tensor_attribute) + ": return self.fc(x) * self.scale  # BUG"
    assert lines[-1] == (
        "On a real GPU PyTorch raises: Expected all tensors to be on the same device, "
        "but found at least two devices, cuda:0 and cpu!"
    )
    assert error.module_path == "model"
    assert error.module_type == "_Scaled"
    assert error.expected == "cuda:0"
    assert [o.where for o in error.offenders] == ["other=args[0] (model.scale)"]


def test_submodule_path_is_named_from_the_root():
    with simulate_cuda():
        with pytest.raises(DeviceMismatchError) as caught:
            bug_scripts.batch_not_moved()
    assert caught.value.module_path == "model.0"
    assert caught.value.module_type == "Linear"


def test_numpy_error_is_also_a_type_error_as_in_pytorch():
    with simulate_cuda():
        with pytest.raises(TypeError, match="can't convert cuda:0 device type tensor to numpy"):
            bug_scripts.numpy_on_device()


def test_index_message_names_both_sides():
    with simulate_cuda():
        with pytest.raises(DeviceMismatchError) as caught:
            bug_scripts.cpu_table_device_indices()
    lines = str(caught.value).splitlines()
    assert lines[0] == "simulated CUDA: Tensor.__getitem__ got an index on cuda:0 for a tensor on cpu"
    assert lines[-1] == (
        "On a real GPU PyTorch raises: indices should be either on cpu or on the same device "
        "as the indexed tensor (cpu)"
    )
